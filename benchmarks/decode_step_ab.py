"""A/B of the decoding-step paths (issue 8): modules, prepared weights, the fused step in Python and compiled.

Times encode + start_cache + 40 forced steps (log_softmax, top-5, the attention row to numpy) for
R rows (1 = greedy, 4 = a beam of 4 over one sentence), 1 thread, random weights, variants
interleaved so that load hits them alike:

* modules: `Transformer.decode` through the layers, plain `nn.Linear` calls;
* prepared: the same with each decoder projection prepared (core/decoding/prepared_linear.py);
* fused: core/decoding/fused_step.py in Python (what searches run without the compiled library);
* native: the same step compiled (core/decoding/native_step.py; what searches run when it is built).

    .venv/bin/python benchmarks/decode_step_ab.py --rounds 3 --repeats 5 [--int8]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nmt_desktop.core.config import PRESETS, ModelConfig  # noqa: E402
from nmt_desktop.core.decoding.int8 import quantize_int8  # noqa: E402
from nmt_desktop.core.model.transformer import build_model  # noqa: E402

VOCAB = {"small": 8000, "base": 32000}
VARIANTS = ("modules", "prepared", "fused", "native")


def run(model, src: torch.Tensor, fast, variant: str, steps: int = 40) -> float:
    """ms per generated token for one sentence decoded on src.shape[0] rows."""
    t = time.perf_counter()
    enc = model.encode(src)
    cache = model.start_cache(enc, capacity=steps + 1, fast=fast)
    if variant == "fused":
        cache.fused = dataclasses.replace(cache.fused, native=None)
    if variant not in ("fused", "native"):
        cache.fused = None
    if variant == "modules":
        cache.linear = cache.output = None
    tok = torch.full((src.shape[0], 1), model.config.decoder_start_id)
    for _ in range(steps):
        out = model.decode(tok, cache=cache, need_cross=True)
        lp = torch.log_softmax(out.logits[:, -1], -1)
        torch.topk(lp, 5)
        out.cross_attention[:, :, :, -1].cpu().numpy()
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
        fast = model.fast_weights()  # made once, as a Translator does
        variants = VARIANTS if fast.step.native is not None else VARIANTS[:-1]
        for rows in [int(r) for r in args.rows.split(",")]:
            src = torch.randint(4, cfg.src_vocab_size, (1, 20), generator=torch.Generator().manual_seed(0))
            src = src.expand(rows, 20).contiguous()
            times: dict[str, list[float]] = {v: [] for v in variants}
            with torch.inference_mode():
                for variant in variants:  # warm-up (oneDNN weight copies are made at the first multi-row step)
                    run(model, src, fast, variant)
                for _ in range(args.rounds):
                    for variant in variants:
                        times[variant] += [run(model, src, fast, variant) for _ in range(args.repeats)]
            for variant, ts in times.items():
                print(f"| {name} | {rows} | {variant} | {statistics.median(ts):.2f} | {min(ts):.2f} |")


if __name__ == "__main__":
    main()
