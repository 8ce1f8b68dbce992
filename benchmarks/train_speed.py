"""Training throughput (target tokens per second) of the trainer's step on random data.

Times exactly what `Trainer._train_step` does per optimizer step: forward, label-smoothed
cross-entropy, backward, gradient clipping, AdamW. Batches are right-padded token-budget batches
of random ids with lengths drawn like short everyday sentences (8 to 24 tokens).

    python benchmarks/train_speed.py --config small --threads 2 --steps 10
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch
import torch.nn.functional as F

from nmt_desktop.core.config import PRESETS, ModelConfig
from nmt_desktop.core.model.transformer import build_model, count_parameters

VOCAB = {"tiny": 8000, "small": 8000, "base": 32000}


def make_batch(vocab: int, budget: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A (B, S) source and (B, T) decoder input/output filling about `budget` padded tokens."""
    lengths = torch.randint(8, 25, (4096,), generator=gen)
    width = int(lengths.max())
    rows = max(1, budget // (width + 1))
    src = torch.randint(4, vocab, (rows, width), generator=gen)
    tgt = torch.randint(4, vocab, (rows, width + 1), generator=gen)
    for i, n in enumerate(lengths[:rows].tolist()):  # right padding past each sentence's length
        src[i, n:] = 0
        tgt[i, n + 1:] = 0
    return src, tgt[:, :-1], tgt[:, 1:]


def measure(name: str, threads: int, steps: int, warmup: int, budget: int) -> dict:
    torch.set_num_threads(threads)
    cfg = ModelConfig(src_vocab_size=VOCAB[name], tgt_vocab_size=VOCAB[name], **PRESETS[name])
    model = build_model(cfg, seed=0).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    gen = torch.Generator().manual_seed(0)
    batches = [make_batch(cfg.tgt_vocab_size, budget, gen) for _ in range(4)]
    rates = []
    for i in range(warmup + steps):
        src, tgt_in, tgt_out = batches[i % len(batches)]
        ntok = int((tgt_out != 0).sum())
        t0 = time.perf_counter()
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=0,
                               label_smoothing=0.1, reduction="sum")
        (loss / ntok).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= warmup:
            rates.append(ntok / (time.perf_counter() - t0))
    return {"config": name, "threads": threads, "parameters": count_parameters(model), "batch_tokens": budget,
            "tgt_tokens_per_s_median": round(statistics.median(rates), 1), "tgt_tokens_per_s_max": round(max(rates), 1),
            "steps": steps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="small", choices=sorted(PRESETS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    row = measure(args.config, args.threads, args.steps, args.warmup, args.batch_tokens)
    row.update(torch=torch.__version__, cpu=platform.processor() or platform.machine())
    if args.json:
        print(json.dumps(row))
    else:
        print(f"{row['config']} ({row['parameters']:,} params), {row['threads']} threads, "
              f"{row['batch_tokens']} padded tokens/batch: {row['tgt_tokens_per_s_median']:.0f} target tokens/s "
              f"(median of {row['steps']} steps; best {row['tgt_tokens_per_s_max']:.0f})")


if __name__ == "__main__":
    main()
