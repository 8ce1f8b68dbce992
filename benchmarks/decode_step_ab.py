"""A/B of the decoding backends' steps (issue 8; core/decoding/backends/step_backend.py): reference, python, compiled.

Times encode + the backend's start + 40 forced steps (log_softmax, top-5, the attention row to
numpy) for R rows (1 = greedy, 4 = a beam of 4 over one sentence), 1 thread, random weights,
variants interleaved so that load hits them alike:

* reference: `Transformer.decode` through the layers, plain `nn.Linear` calls;
* python: the fused step in Python over prepared weights (core/decoding/backends/fused_step.py);
* compiled: the same step compiled (core/decoding/backends/compiled_step.py; what searches run when it is built).

    .venv/bin/python benchmarks/decode_step_ab.py --rounds 3 --repeats 5 [--int8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nmt_desktop.core.config import PRESETS, ModelConfig  # noqa: E402
from nmt_desktop.core.decoding.backends.choice import choose_backend  # noqa: E402
from nmt_desktop.core.decoding.backends.compiled_step import compiled_step_applies  # noqa: E402
from nmt_desktop.core.decoding.int8 import quantize_int8  # noqa: E402
from nmt_desktop.core.model.transformer import build_model  # noqa: E402

VOCAB = {"small": 8000, "base": 32000}
VARIANTS = ("reference", "python", "compiled")


def run(model, src: torch.Tensor, backend, steps: int = 40) -> float:
    """ms per generated token for one sentence decoded on src.shape[0] rows."""
    t = time.perf_counter()
    enc = model.encode(src)
    state = backend.start(enc, capacity=steps + 1)
    tok = torch.full((src.shape[0],), model.config.decoder_start_id)
    for _ in range(steps):
        out = backend.step(state, tok, True, False)
        lp = torch.log_softmax(out.logits, -1)
        torch.topk(lp, 5)
        out.cross_attention.cpu().numpy()
    return (time.perf_counter() - t) / steps * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="small,base")
    ap.add_argument("--rows", default="1,4")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--int8", action="store_true", help="dynamic int8 linear layers (core/decoding/int8.py)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"| model{' (int8)' if args.int8 else ''} | rows | variant | ms/token median | min |\n|---|---:|---|---:|---:|")
    for name in args.configs.split(","):
        cfg = ModelConfig(src_vocab_size=VOCAB[name], tgt_vocab_size=VOCAB[name], **PRESETS[name])
        model = build_model(cfg, seed=0).eval()
        if args.int8:
            model = quantize_int8(model)
        variants = VARIANTS if compiled_step_applies(model.tgt_embed.weight) else VARIANTS[:-1]
        backends = {v: choose_backend(model, v) for v in variants}  # made once, as a Translator does
        for rows in [int(r) for r in args.rows.split(",")]:
            src = torch.randint(4, cfg.src_vocab_size, (1, 20), generator=torch.Generator().manual_seed(0))
            src = src.expand(rows, 20).contiguous()
            times: dict[str, list[float]] = {v: [] for v in variants}
            with torch.inference_mode():
                for variant in variants:  # warm-up (oneDNN weight copies are made at the first multi-row step)
                    run(model, src, backends[variant])
                for _ in range(args.rounds):
                    for variant in variants:
                        times[variant] += [run(model, src, backends[variant]) for _ in range(args.repeats)]
            for variant, ts in times.items():
                print(f"| {name} | {rows} | {variant} | {statistics.median(ts):.2f} | {min(ts):.2f} |")


if __name__ == "__main__":
    main()
