"""The compiled search kernels (nmt_desktop/core/decoding/backends/native/search_ops.cpp) against the PyTorch calls they
replace, per call, on random inputs of the sizes a small model's search sees (vocabulary 8000).

    .venv/bin/python benchmarks/search_kernels.py [--threads 1] [--calls 3000]

Prints a Markdown table of microseconds per call (median of 5 rounds). Needs the built library
(`python -m nmt_desktop.core.decoding.backends.native_library`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nmt_desktop.core.decoding import native_library  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.search import masked_ids  # noqa: E402
from nmt_desktop.core.decoding.selection import beam_candidates, log_probs  # noqa: E402

VOCAB, PAD, EOS = 8000, 3, 0


def per_call_us(fn: Callable[[], object], calls: int, rounds: int = 5) -> float:
    for _ in range(100):
        fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    if not native_library.load():
        print("error: the compiled library is not built (python -m nmt_desktop.core.decoding.backends.native_library)",
              file=sys.stderr)
        return 1
    torch.set_num_threads(args.threads)
    ops = torch.ops.nmt_desktop
    g = torch.Generator().manual_seed(0)
    cfg = DecodeConfig(beam_size=4, alternatives=0)
    masked = masked_ids(5, cfg, EOS, PAD)
    rows = []
    with torch.inference_mode():
        for R, k in ((1, 1), (4, 8)):
            logits = torch.randn(R, VOCAB, generator=g) * 4
            rows.append((f"top-{k} log-probs of ({R}, {VOCAB})",
                         per_call_us(lambda: ops.top_logprobs(logits, k, PAD, -1), args.calls),
                         per_call_us(lambda: torch.topk(log_probs(logits, masked), k), args.calls),
                         "log_probs + torch.topk"))
        logits = torch.randn(4, VOCAB, generator=g) * 4
        scores = -torch.rand(1, 4, generator=g) * 10
        rows.append(("beam candidates, 4 beams",
                     per_call_us(lambda: ops.beam_candidates(logits, scores, 1, PAD, -1), args.calls),
                     per_call_us(lambda: beam_candidates(log_probs(logits, masked), scores, 1),
                                 args.calls),
                     "log_probs + beam_candidates"))
        buffers = [torch.randn(4, 4, 41, 64, generator=g) for _ in range(6)]
        parents = torch.tensor([0, 0, 1, 2])  # three rows change (in place, so every call moves them)
        for length in (1, 20, 40):
            rows.append((f"cache reorder [0, 0, 1, 2], 6 x (4, 4, 41, 64), {length} filled",
                         per_call_us(lambda: ops.reorder_filled(buffers, parents, length), args.calls),
                         per_call_us(lambda: [b.index_select(0, parents) for b in buffers], args.calls),
                         "index_select per buffer"))
    print(f"torch {torch.__version__}, {args.threads} thread(s), us per call (median of 5 rounds of {args.calls})\n")
    print("| work | compiled | PyTorch | PyTorch calls |\n|---|---:|---:|---|")
    for name, ours, theirs, how in rows:
        print(f"| {name} | {ours:.1f} | {theirs:.1f} | {how} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
