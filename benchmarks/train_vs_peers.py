"""Training throughput against Hugging Face transformers' MarianMTModel on CPU (issue 8).

The same random-weight model (a `MarianMTModel` built from a `MarianConfig`, saved as a Hugging
Face folder and imported with nmt-desktop's `import_marian`, dropout 0.1 in both), the same
batches, the same optimizer step: forward, label-smoothed (0.1) cross-entropy summed over the
target tokens and divided by their number, backward, gradient clipping at 1.0, AdamW (betas 0.9 /
0.98, as `Trainer` builds it). Ours is what `Trainer._train_step` runs on a CPU (its loss is
`core.train.token_loss`, which projects only the non-padding positions); transformers gets
`decoder_input_ids` and the source padding mask, and all its logits go through the same loss (the
way a Hugging Face training loop computes it).

Batches: right-padded, about `--batch-tokens` padded tokens each, random ids, sentence lengths 8 to
24 (as benchmarks/train_speed.py). Target tokens/s = non-padding target tokens / step time;
median over `--steps` steps after `--warmup`, the two engines alternating step by step.

    .venv/bin/python benchmarks/train_vs_peers.py --configs small --threads 1,2
    .venv/bin/python benchmarks/train_vs_peers.py --configs small,base --threads 1 --steps 6 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_speed import LoadMeter, machine_info  # noqa: E402
from train_speed import make_batch  # noqa: E402
from vs_peers import make_hf_folder  # noqa: E402
from nmt_desktop.core.formats.marian import import_marian  # noqa: E402
from nmt_desktop.core.formats.model_folder import load_model  # noqa: E402
from nmt_desktop.core.training.train import token_loss  # noqa: E402

LABEL_SMOOTHING = 0.1


def _hf_loss(forward: Callable, pad: int) -> Callable:
    def loss(src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
        logits = forward(src, tgt_in)  # (B, T, V)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad,
                               label_smoothing=LABEL_SMOOTHING, reduction="sum")

    return loss


def _step_fn(model: torch.nn.Module, loss_fn: Callable, pad: int) -> Callable:
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.0)

    def step(src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> int:
        ntok = int((tgt_out != pad).sum())
        loss = loss_fn(src, tgt_in, tgt_out)
        (loss / ntok).backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return ntok

    return step


def engines(work: Path, name: str) -> tuple[dict[str, Callable], int, int]:
    from transformers import MarianMTModel

    hf_dir = make_hf_folder(work / f"{name}-hf", name, dropout=0.1)
    ours = load_model(import_marian(hf_dir, work / f"{name}-ours")).model.train()
    hf = MarianMTModel.from_pretrained(hf_dir, attn_implementation="sdpa").train()
    pad = hf.config.pad_token_id
    assert ours.config.pad_id == pad and ours.config.dropout == 0.1

    def hf_forward(src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        return hf(input_ids=src, attention_mask=src != pad, decoder_input_ids=tgt_in).logits

    def our_loss(src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
        return token_loss(ours, src, tgt_in, tgt_out, pad, LABEL_SMOOTHING)

    return ({"ours": _step_fn(ours, our_loss, pad), "hf sdpa": _step_fn(hf, _hf_loss(hf_forward, pad), pad)},
            pad, hf.config.vocab_size)


def measure(name: str, threads: int, args: argparse.Namespace, work: Path) -> list[dict]:
    torch.set_num_threads(threads)
    steps, pad, vocab = engines(work / f"t{threads}", name)
    gen = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(4):
        src, tgt_in, tgt_out = make_batch(vocab - 1, args.batch_tokens, gen)  # ids below <pad> (the last id)
        src[src == 0], tgt_out[tgt_out == 0] = pad, pad  # make_batch pads with 0: use the model's <pad>
        tgt_in = torch.cat([torch.full_like(tgt_in[:, :1], pad), tgt_out[:, :-1]], 1)  # <pad> starts the decoder
        batches.append((src, tgt_in, tgt_out))
    rates: dict[str, list[float]] = {k: [] for k in steps}
    cpu_rates: dict[str, list[float]] = {k: [] for k in steps}
    for i in range(args.warmup + args.steps):
        src, tgt_in, tgt_out = batches[i % len(batches)]
        for engine, step in steps.items():
            t0, c0 = time.perf_counter(), time.process_time()
            ntok = step(src, tgt_in, tgt_out)
            if i >= args.warmup:
                rates[engine].append(ntok / (time.perf_counter() - t0))
                cpu_rates[engine].append(ntok / (time.process_time() - c0))
    rows = [{"config": name, "threads": threads, "engine": e, "batch_tokens": args.batch_tokens,
             "tgt_tokens_per_s": round(statistics.median(r), 1), "tgt_tokens_per_s_best": round(max(r), 1),
             "tgt_tokens_per_cpu_s": round(statistics.median(cpu_rates[e]), 1), "steps": args.steps}
            for e, r in rates.items()]
    ours, hf = rows[0], rows[1]
    rows.append({"config": name, "threads": threads, "engine": "ours / hf sdpa",
                 "ratio": round(ours["tgt_tokens_per_s"] / hf["tgt_tokens_per_s"], 3),
                 "cpu_ratio": round(ours["tgt_tokens_per_cpu_s"] / hf["tgt_tokens_per_cpu_s"], 3)})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", default="small", help="comma-separated: small,base (default small)")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--steps", type=int, default=8, help="timed steps per engine (default 8)")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps first (default 2)")
    p.add_argument("--batch-tokens", type=int, default=4096, help="padded tokens per batch (default 4096)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="train-vs-peers-") as tmp, LoadMeter() as load:
        for name in [c.strip() for c in args.configs.split(",") if c.strip()]:
            for threads in [int(t) for t in args.threads.split(",") if t.strip()]:
                rows += measure(name, threads, args, Path(tmp))
    machine = machine_info(torch.get_num_threads())
    machine["other_load_cpus"] = None if load.other_cpus is None else round(load.other_cpus, 2)
    result = {"machine": machine, "rows": rows}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"Machine: {machine['cpu']}, torch {machine['torch']}, {machine['date']}; other processes kept "
          f"{machine['other_load_cpus']} CPUs busy.\n")
    print("| config | threads | engine | target tokens/s (median) | best | per CPU second |\n"
          "|---|---:|---|---:|---:|---:|")
    for r in rows:
        if "ratio" in r:
            print(f"| {r['config']} | {r['threads']} | **ours / hf** | **{r['ratio']:.2f}x** | | "
                  f"**{r['cpu_ratio']:.2f}x** |")
        else:
            print(f"| {r['config']} | {r['threads']} | {r['engine']} | {r['tgt_tokens_per_s']:.0f} | "
                  f"{r['tgt_tokens_per_s_best']:.0f} | {r['tgt_tokens_per_cpu_s']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
