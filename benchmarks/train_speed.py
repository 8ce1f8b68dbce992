"""Training throughput (target tokens per second): one step on random data, and `nmt-desktop train` against
the bare training loop any engineer would write (the ceiling for our trainer).

Three modes:

* default: times exactly what `Trainer._train_step` does per optimizer step (forward, label-smoothed
  cross-entropy, backward, clipping, AdamW) on right-padded token-budget batches of random ids, on any
  `--device` (synchronised around each step), fp32 or bf16 autocast, with the FLOPs of a step counted by
  torch.utils.flop_counter and, with `--peak-tflops`, the model FLOPs utilisation:

      python benchmarks/train_speed.py --config small --threads 2 --steps 10
      python benchmarks/train_speed.py --device cuda --configs base,bundled --modes fp32,bf16 --json

* `--vs-bare`: `Trainer.run` (the code path of `nmt-desktop train`) on a corpus written from real sentences,
  then `bare_loop` on the same model (same seed), the same batches (the trainer's own epoch-0 batches,
  collated into memory first) and the same step, in interleaved rounds in one process. Each side's tokens/s
  counts target tokens over the steady-state steps (after `--warmup` steps; setup, tokenizer training and the
  final save are outside the window):

      nice -n 19 python benchmarks/train_speed.py --vs-bare --configs bundled,base --rounds 3 --threads 1

* `--profile`: torch.profiler over the trainer's steady-state steps; the top items by self CPU time.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nmt_desktop.core.config import PRESETS, ModelConfig, TrainConfig  # noqa: E402
from nmt_desktop.core.model.transformer import build_model, count_parameters  # noqa: E402

VOCAB = {"tiny": 8000, "small": 8000, "base": 32000, "bundled": 8000}
# the bundled en-de model's dims (resources/training/en-de.toml, models/en-de/config.json)
BUNDLED = dict(d_model=192, n_heads=4, encoder_layers=3, decoder_layers=3, ffn_dim=768)
ARCH = {**PRESETS, "bundled": BUNDLED}
# what each config trains with in --vs-bare: the bundled run's own budget (en-de.toml); 2,048 for base (a CPU)
TRAIN_BUDGET = {"bundled": 3000, "base": 2048, "small": 4096, "tiny": 2000}
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared/data/tatoeba/en-de/train.tsv"


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


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(name: str, threads: int, steps: int, warmup: int, budget: int, device: torch.device | str = "cpu",
            mode: str = "fp32", peak_tflops: float = 0.0) -> dict:
    """The random-data step (forward over every position, as the first GPU baseline timed it)."""
    from torch.utils.flop_counter import FlopCounterMode

    device = torch.device(device)
    if threads:
        torch.set_num_threads(threads)
    cfg = ModelConfig(src_vocab_size=VOCAB[name], tgt_vocab_size=VOCAB[name], **ARCH[name])
    model = build_model(cfg, seed=0).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    gen = torch.Generator().manual_seed(0)
    batches = [tuple(t.to(device) for t in make_batch(cfg.tgt_vocab_size, budget, gen)) for _ in range(4)]
    amp = torch.autocast(device.type, dtype=torch.bfloat16) if mode == "bf16" else contextlib.nullcontext()

    def step(src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> int:
        ntok = int((tgt_out != 0).sum())
        with amp:
            logits = model(src, tgt_in)  # (B, T, V)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=0,
                               label_smoothing=0.1, reduction="sum")
        (loss / ntok).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return ntok

    counter = FlopCounterMode(display=False)  # forward + backward of batch 0; the optimizer is not counted
    with counter:
        step(*batches[0])
    flops = counter.get_total_flops()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    times, rates, toks, padded = [], [], [], []
    for i in range(warmup + steps):
        batch = batches[i % len(batches)]
        sync(device)
        t0 = time.perf_counter()
        ntok = step(*batch)
        sync(device)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
            rates.append(ntok / times[-1])
            toks.append(ntok)
            padded.append(batch[2].numel())
    med = statistics.median(times)
    row = {"config": name, "mode": mode, "device": str(device), "threads": threads,
           "parameters": count_parameters(model), "batch_tokens": budget, "rows_x_width": list(batches[0][0].shape),
           "pad_fraction_tgt": round(1 - sum(toks) / sum(padded), 3),
           "tgt_tokens_per_s_median": round(statistics.median(rates), 1), "tgt_tokens_per_s_max": round(max(rates), 1),
           "step_ms_median": round(med * 1e3, 3), "steps": steps, "flops_per_step_batch0": flops,
           "tflops_per_s": round(flops / med / 1e12, 3)}
    if peak_tflops:
        row["mfu_vs_peak_pct"] = round(100 * flops / med / (peak_tflops * 1e12), 2)
    if device.type == "cuda":
        row["cuda_max_allocated_mib"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    return row


# --- nmt-desktop train against the bare loop ---------------------------------------------------------------


def bench_config(name: str, corpus: Path, out: Path, steps: int, log_every: int, threads: int, device: str,
                 precision: str) -> TrainConfig:
    """The TrainConfig of a benchmark run: no dev set, no evaluation inside the window."""
    arch = {k: v for k, v in ARCH[name].items()}
    return TrainConfig(train=str(corpus), out=str(out), preset="base" if name == "base" else "small",
                       vocab_size=VOCAB[name], max_tokens=64, batch_tokens=TRAIN_BUDGET[name], lr=2e-3,
                       warmup_steps=800, label_smoothing=0.1, max_steps=steps, eval_every=10**9,
                       log_every=log_every, threads=threads, device=device, seed=1, progress="none",
                       **({"precision": precision} if precision != "fp32" or _has_precision() else {}), **arch)


def _has_precision() -> bool:
    return "precision" in {f.name for f in dataclasses.fields(TrainConfig)}


def run_trainer(cfg: TrainConfig, warmup: int, profile: bool = False) -> tuple[dict, object]:
    """`Trainer.run` (what `nmt-desktop train` runs); tokens/s between the step events at `warmup` and the
    last step. Returns (row, the trainer)."""
    from nmt_desktop.core.training.train import Trainer

    marks: dict[int, tuple[float, float, int]] = {}
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) if profile else None
    trainer: Trainer

    def on_event(ev: dict) -> None:
        if ev["event"] == "step":
            sync(trainer.device)
            marks[ev["step"]] = (time.perf_counter(), time.process_time(), trainer.state.tokens)
            if prof is not None and ev["step"] == warmup:
                prof.start()
            if prof is not None and ev["step"] == cfg.max_steps:
                prof.stop()

    trainer = Trainer(cfg, on_event)
    trainer.run()
    (t0, c0, k0), (t1, c1, k1) = marks[warmup], marks[cfg.max_steps]
    row = {"tokens": k1 - k0, "seconds": t1 - t0, "tokens_per_s": (k1 - k0) / (t1 - t0),
           "tokens_per_cpu_s": (k1 - k0) / (c1 - c0)}
    return row, (trainer, prof)


def bare_loop(model: torch.nn.Module, batches: list, cfg: TrainConfig, device: torch.device, warmup: int,
              autocast: contextlib.AbstractContextManager) -> dict:
    """The training loop any engineer would write: same model, same in-memory batches, AdamW, the same
    label-smoothed loss over the non-padding positions, clipping, the same learning-rate schedule."""
    from nmt_desktop.core.training.schedule import learning_rate

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2), eps=cfg.adam_eps,
                            weight_decay=cfg.weight_decay, **({"fused": True} if device.type == "cuda" else {}))
    model.train()
    pad = model.config.pad_id
    tokens, t0, c0 = 0, 0.0, 0.0
    for i, b in enumerate(batches):
        if i == warmup:
            sync(device)
            tokens, t0, c0 = 0, time.perf_counter(), time.process_time()
        src, tgt_in, tgt_out = b.src.to(device), b.tgt_in.to(device), b.tgt_out.to(device)  # (B, S), (B, T), (B, T)
        keep = tgt_out != pad  # (B, T)
        with autocast:
            logits = model(src, tgt_in, keep)  # (N, V)
        loss = F.cross_entropy(logits.float(), tgt_out[keep], label_smoothing=cfg.label_smoothing, reduction="sum")
        (loss / b.n_tgt_tokens).backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.clip_norm)
        for group in opt.param_groups:
            group["lr"] = learning_rate(i + 1, cfg)
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += b.n_tgt_tokens
    sync(device)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds, "tokens_per_cpu_s": tokens / cpu}


def write_corpus(source: Path, pairs: int, folder: Path) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines()[:pairs]
    path = folder / "train.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def vs_bare(name: str, corpus: Path, work: Path, rounds: int, steps: int, warmup: int, threads: int, device: str,
            precision: str) -> dict:
    """Interleaved rounds of (trainer, bare loop); the median of each side and of the per-round ratios, by wall
    time and by this process's CPU time (steadier on a shared machine: other programs' load does not count)."""
    total = warmup + steps
    log_every = math.gcd(warmup, total)
    trainer_rates, bare_rates, cpu_ratios = [], [], []
    for r in range(rounds):
        cfg = bench_config(name, corpus, work / f"{name}-{r}", total, log_every, threads, device, precision)
        row, (trainer, _) = run_trainer(cfg, warmup)
        trainer_rates.append(row["tokens_per_s"])
        batches = [trainer._epoch_batches(0)[i] for i in range(total)]  # (the trainer's first batches, in memory)
        model = build_model(trainer.config, seed=cfg.seed).to(trainer.device)
        bare = bare_loop(model, batches, cfg, trainer.device, warmup, trainer.autocast)
        bare_rates.append(bare["tokens_per_s"])
        cpu_ratios.append(row["tokens_per_cpu_s"] / bare["tokens_per_cpu_s"])
        print(f"  {name} round {r + 1}: train {row['tokens_per_s']:.0f} tok/s, bare {bare['tokens_per_s']:.0f} tok/s,"
              f" ratio {row['tokens_per_s'] / bare['tokens_per_s']:.3f}; per CPU second: train "
              f"{row['tokens_per_cpu_s']:.0f}, bare {bare['tokens_per_cpu_s']:.0f}, ratio {cpu_ratios[-1]:.3f}",
              file=sys.stderr, flush=True)
        del trainer, model, batches
    ratios = [t / b for t, b in zip(trainer_rates, bare_rates)]
    return {"config": name, "device": device, "precision": precision, "threads": threads,
            "batch_tokens": TRAIN_BUDGET[name], "steps": steps, "warmup": warmup, "rounds": rounds,
            "train_tok_s_median": round(statistics.median(trainer_rates), 1),
            "bare_tok_s_median": round(statistics.median(bare_rates), 1),
            "ratio_median": round(statistics.median(ratios), 3), "ratios": [round(x, 3) for x in ratios],
            "cpu_ratio_median": round(statistics.median(cpu_ratios), 3), "cpu_ratios": [round(x, 3) for x in cpu_ratios]}


def profile_trainer(name: str, corpus: Path, work: Path, steps: int, warmup: int, threads: int, device: str,
                    precision: str, rows: int) -> str:
    total = warmup + steps
    cfg = bench_config(name, corpus, work / f"{name}-profile", total, math.gcd(warmup, total), threads, device,
                       precision)
    _, (_, prof) = run_trainer(cfg, warmup, profile=True)
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=None, choices=sorted(ARCH), help="one config (same as --configs NAME)")
    ap.add_argument("--configs", default=None, help="comma-separated: tiny, small, base, bundled")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--modes", default="fp32", help="random-step mode: comma-separated fp32, bf16")
    ap.add_argument("--precision", default="fp32", help="--vs-bare / --profile: the trainer's precision")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (0: torch's default)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch-tokens", default="4096", help="random-step mode: comma-separated budgets")
    ap.add_argument("--peak-tflops", type=float, default=0.0, help="dense peak for MFU (H100/H200 SXM bf16: 989)")
    ap.add_argument("--vs-bare", action="store_true", help="nmt-desktop train against the bare loop")
    ap.add_argument("--profile", action="store_true", help="torch.profiler top items of the trainer's steps")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="TSV whose first --pairs lines are trained on")
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--rows", type=int, default=12, help="--profile: table rows")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = [n for n in (args.configs or args.config or "small").split(",") if n]
    if args.vs_bare or args.profile:
        with tempfile.TemporaryDirectory(prefix="train_speed-") as tmp:
            corpus = write_corpus(args.corpus, args.pairs, Path(tmp))
            for name in names:
                if args.profile:
                    print(f"== {name}: trainer profile, steps {args.warmup + 1}..{args.warmup + args.steps}")
                    print(profile_trainer(name, corpus, Path(tmp), args.steps, args.warmup, args.threads,
                                          args.device, args.precision, args.rows))
                    continue
                row = vs_bare(name, corpus, Path(tmp), args.rounds, args.steps, args.warmup, args.threads,
                              args.device, args.precision)
                row.update(torch=torch.__version__)
                print(json.dumps(row) if args.json else
                      f"{name}: train {row['train_tok_s_median']:.0f} tok/s, bare loop {row['bare_tok_s_median']:.0f}"
                      f" tok/s, ratio {row['ratio_median']:.3f} (median of {row['rounds']} rounds {row['ratios']});"
                      f" per CPU second ratio {row['cpu_ratio_median']:.3f} {row['cpu_ratios']}",
                      flush=True)
        return
    device = torch.device(args.device)
    for name in names:
        for budget in [int(b) for b in args.batch_tokens.split(",") if b]:
            for mode in [m for m in args.modes.split(",") if m]:
                try:
                    row = measure(name, args.threads, args.steps, args.warmup, budget, device, mode, args.peak_tflops)
                except Exception as exc:  # noqa: BLE001 - one config failing (e.g. out of memory) must not end the rest
                    row = {"config": name, "mode": mode, "batch_tokens": budget, "error": f"{type(exc).__name__}: {exc}"}
                row.update(torch=torch.__version__, cpu=platform.processor() or platform.machine())
                if args.json:
                    print("TRAIN_SPEED " + json.dumps(row), flush=True)
                elif "error" in row:
                    print(f"{name} {mode} {budget}: {row['error']}", flush=True)
                else:
                    print(f"{row['config']} ({row['parameters']:,} params), {mode} on {row['device']}, "
                          f"{row['threads']} threads, {row['batch_tokens']} padded tokens/batch: "
                          f"{row['tgt_tokens_per_s_median']:.0f} target tokens/s (median of {row['steps']} steps; "
                          f"best {row['tgt_tokens_per_s_max']:.0f}), {row['tflops_per_s']} TFLOP/s", flush=True)
                if device.type == "cuda":
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
