"""A/B of the per-search transposed weight copies used by decoding steps (KVCache.output_t / linear_t).

Times encode + start_cache + 40 forced steps (log_softmax, top-5, the attention row to numpy) with
no copies, the output-matrix copy only, and both, interleaved, 1 thread, random weights.

    .venv/bin/python benchmarks/transposed_ab.py --rounds 2 --repeats 5
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
from nmt_desktop.core.transformer import build_model  # noqa: E402

VOCAB = {"small": 8000, "base": 32000}


def run(model, src: torch.Tensor, variant: str, steps: int = 40) -> float:
    """ms per generated token for one sentence."""
    t = time.perf_counter()
    enc = model.encode(src)
    cache = model.start_cache(enc, capacity=steps + 1)
    if variant != "both":
        cache.linear_t = None
    if variant == "none":
        cache.output_t = None
    tok = torch.tensor([[model.config.decoder_start_id]])
    for _ in range(steps):
        out = model.decode(tok, cache=cache, need_cross=True)
        lp = torch.log_softmax(out.logits[:, -1].float(), -1)
        torch.topk(lp, 5)
        out.cross_attention[:, :, :, -1].float().cpu().numpy()
    return (time.perf_counter() - t) / steps * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="small,base")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| model | variant | ms/token median | min |\n|---|---|---:|---:|")
    for name in args.configs.split(","):
        cfg = ModelConfig(src_vocab_size=VOCAB[name], tgt_vocab_size=VOCAB[name], **PRESETS[name])
        model = build_model(cfg, seed=0).eval()
        src = torch.randint(4, cfg.src_vocab_size, (1, 20), generator=torch.Generator().manual_seed(0))
        times: dict[str, list[float]] = {"none": [], "output_only": [], "both": []}
        with torch.inference_mode():
            run(model, src, "both")  # warm-up
            for _ in range(args.rounds):
                for variant in times:
                    times[variant] += [run(model, src, variant) for _ in range(args.repeats)]
        for variant, ts in times.items():
            print(f"| {name} | {variant} | {statistics.median(ts):.2f} | {min(ts):.2f} |")


if __name__ == "__main__":
    main()
