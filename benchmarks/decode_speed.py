"""Decode speed: milliseconds per generated token, batch 1, greedy, CPU.

For each random-weight model ("small", "base") or real model (a bundled name such as "en-de", or a
model folder: its trained weights fed random token ids), and with cross-attention capture on and off, two
measurements of one sentence of `--src-len` source tokens and exactly `--tgt-len` target tokens:

* forced loop: encode + the backend's start + `tgt_len` backend steps where the token fed at
  each step is fixed (a seeded random sequence), so every run does the same number of steps
  whatever the random weights prefer. Per step it does what the real search does: log_softmax of
  the logits, argmax, top-5 alternatives to numpy, and (when capturing) the newest attention row
  to numpy.
* search.py greedy: the real `greedy_or_sample` generator with
  DecodeConfig(min_length=tgt_len, max_len_a=0, max_len_b=tgt_len), so </s> is suppressed and it
  also runs exactly `tgt_len` steps.

ms/token = wall time of the whole sentence (encoding included) / tgt_len. Repeats of the
different modes are interleaved round-robin so background load hits them alike. The header line
reports how many CPUs other processes kept busy meanwhile (from /proc/stat): decoding at batch 1
is bound by memory bandwidth, so a busy neighbour inflates the numbers even at low spread.

    python benchmarks/decode_speed.py --configs small,base --threads 1 --src-len 20 --tgt-len 40
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nmt_desktop.core.config import PRESETS, DecodeConfig, ModelConfig  # noqa: E402
from nmt_desktop.core.decoding.backends.choice import choose_backend  # noqa: E402
from nmt_desktop.core.decoding.search import greedy_or_sample  # noqa: E402
from nmt_desktop.core.model.transformer import Transformer, build_model, count_parameters  # noqa: E402

VOCAB = {"tiny": 1000, "small": 8000, "base": 32000}
ALTERNATIVES = 5
NOISY_SPREAD = 0.20  # (median - min) / min above this marks a row as noisy


def _cpu_busy_seconds() -> float | None:
    """Seconds all CPUs of the machine spent busy since boot (Linux /proc/stat), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (e.g. a benchmark's child app)."""
    t = os.times()
    return t.children_user + t.children_system


class LoadMeter:
    """CPUs kept busy by *other* processes (machine busy minus this process and its children)."""

    def __enter__(self) -> "LoadMeter":
        self.busy0, self.own0, self.wall0 = _cpu_busy_seconds(), self._own(), time.perf_counter()
        self.other_cpus: float | None = None
        return self

    @staticmethod
    def _own() -> float:
        return time.process_time() + _children_cpu()

    def __exit__(self, *exc: object) -> None:
        busy1 = _cpu_busy_seconds()
        if self.busy0 is None or busy1 is None:
            return
        wall = time.perf_counter() - self.wall0
        own = self._own() - self.own0
        self.other_cpus = max(0.0, (busy1 - self.busy0 - own) / wall) if wall > 0 else None


def make_model(name: str) -> Transformer:
    """A random-weight preset ("small", "base"), or a real model: a folder, zip or bundled name ("en-de")."""
    if name not in PRESETS:
        from nmt_desktop.core.locations import ModelNotFoundError, resolve_model_path
        from nmt_desktop.core.formats.model_folder import load_model

        try:
            return load_model(resolve_model_path(name)).model
        except ModelNotFoundError as exc:
            raise SystemExit(f"{exc}; or choose a preset: {', '.join(PRESETS)}")
    vocab = VOCAB.get(name, 8000)
    cfg = ModelConfig(src_vocab_size=vocab, tgt_vocab_size=vocab, shared_vocab=True, max_positions=256,
                      **PRESETS[name])
    return build_model(cfg, seed=0).eval()


def make_inputs(model: Transformer, src_len: int, tgt_len: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Source (1, src_len) ending in </s>, and forced target ids (tgt_len,); no special ids inside."""
    cfg = model.config
    g = torch.Generator().manual_seed(seed)
    low = 4  # above pad/bos/eos/unk
    src = torch.randint(low, cfg.src_vocab_size, (1, src_len), generator=g)
    if cfg.src_add_eos:
        src[0, -1] = cfg.eos_id
    forced = torch.randint(low, cfg.tgt_vocab_size, (tgt_len,), generator=g)
    return src, forced


def forced_loop(model: Transformer, src: torch.Tensor, forced: torch.Tensor, capture: bool, backend) -> int:
    """One sentence: encode, start the backend's state, decode len(forced) steps feeding the forced tokens.

    backend: the `StepBackend` a Translator keeps (its prepared weights made once)."""
    tgt_len = forced.shape[0]
    with torch.inference_mode():
        enc = model.encode(src)
        state = backend.start(enc, capacity=tgt_len + 1)
        prev = torch.full((1,), model.config.decoder_start_id, dtype=torch.long)
        for i in range(tgt_len):
            out = backend.step(state, prev, capture, False)
            logprobs = torch.log_softmax(out.logits.float(), dim=-1)  # (1, V)
            chosen = logprobs.argmax(-1)  # what greedy would pick (ignored: the next token is forced)
            _ = logprobs.gather(1, chosen[:, None]).squeeze(1).tolist()
            top = torch.topk(logprobs, ALTERNATIVES, dim=-1)
            _ = top.indices.cpu().numpy(), top.values.cpu().numpy()
            if capture:
                _ = out.cross_attention.float().cpu().numpy()  # (1, L, H, S)
            prev = forced[i].view(1)
    return tgt_len


def search_greedy(model: Transformer, src: torch.Tensor, tgt_len: int, capture: bool, backend) -> int:
    """One sentence through search.greedy_or_sample (on a Translator's `backend`); returns the steps run."""
    cfg = DecodeConfig(min_length=tgt_len, max_len_a=0, max_len_b=tgt_len, attention=capture,
                       alternatives=ALTERNATIVES, seed=0)
    steps = 0
    for _ in greedy_or_sample(model, src, cfg, backend=backend):
        steps += 1
    return steps


def machine_info(threads: int) -> dict:
    model_name = platform.processor() or "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model_name = line.split(":", 1)[1].strip()
                break
    except (OSError, subprocess.CalledProcessError):
        pass
    return {
        "cpu": model_name,
        "logical_cpus": os.cpu_count(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": threads,
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "other_load_cpus": None,  # filled in by run()
    }


def run(args: argparse.Namespace) -> dict:
    torch.set_num_threads(args.threads)
    rows = []
    with LoadMeter() as load:
        _run_configs(args, rows)
    machine = machine_info(args.threads)
    machine["other_load_cpus"] = None if load.other_cpus is None else round(load.other_cpus, 2)
    return {
        "machine": machine,
        "settings": {"configs": args.configs, "threads": args.threads, "src_len": args.src_len,
                     "tgt_len": args.tgt_len, "repeats": args.repeats, "warmup": args.warmup, "batch": 1},
        "rows": rows,
    }


def _run_configs(args: argparse.Namespace, rows: list[dict]) -> None:
    for name in [c.strip() for c in args.configs.split(",") if c.strip()]:
        model = make_model(name)
        src, forced = make_inputs(model, args.src_len, args.tgt_len)
        backend = choose_backend(model)  # made once, as a Translator does
        cases: list[tuple[str, bool, Callable[[], int]]] = []
        for capture in (True, False):
            cases.append(("forced loop", capture, lambda c=capture: forced_loop(model, src, forced, c, backend)))
            cases.append(("search.py greedy", capture,
                          lambda c=capture: search_greedy(model, src, args.tgt_len, c, backend)))
        for _, _, fn in cases:
            for _ in range(args.warmup):
                fn()
        times: list[list[float]] = [[] for _ in cases]
        steps: list[int] = [0] * len(cases)
        for _ in range(args.repeats):
            for j, (_, _, fn) in enumerate(cases):
                t0 = time.perf_counter()
                steps[j] = fn()
                times[j].append(time.perf_counter() - t0)
        for j, (mode, capture, _) in enumerate(cases):
            if steps[j] != args.tgt_len:
                raise RuntimeError(f"{name} {mode}: ran {steps[j]} steps, expected {args.tgt_len}")
            med, best = statistics.median(times[j]), min(times[j])
            rows.append({
                "config": name,
                "params_m": round(count_parameters(model) / 1e6, 2),
                "mode": mode,
                "attention": capture,
                "tokens": steps[j],
                "ms_per_token_median": round(1000 * med / steps[j], 3),
                "ms_per_token_min": round(1000 * best / steps[j], 3),
                "sentence_ms_median": round(1000 * med, 2),
                "spread": round(med / best - 1, 3),
                "noisy": med / best - 1 > NOISY_SPREAD,
            })


def markdown(result: dict) -> str:
    m, s = result["machine"], result["settings"]
    lines = [
        f"Machine: {m['cpu']} ({m['logical_cpus']} logical CPUs), torch {m['torch']}, Python {m['python']}, "
        f"{m['threads']} thread(s), {m['date']}",
        "Other processes kept " + ("an unknown number of" if m["other_load_cpus"] is None
                                   else f"{m['other_load_cpus']:.2f}") + " CPUs busy during the run"
        + (" (numbers inflated; rerun on a quiet machine)." if (m["other_load_cpus"] or 0) > 0.2 else "."),
        f"Batch 1, {s['src_len']} source tokens, {s['tgt_len']} target tokens, "
        f"median/min of {s['repeats']} repeats after {s['warmup']} warm-up run(s).",
        "",
        "| model | params | mode | attention | ms/token median | ms/token min | sentence ms (median) | spread |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        spread = f"{100 * r['spread']:.0f}%" + (" (noisy)" if r["noisy"] else "")
        lines.append(
            f"| {r['config']} | {r['params_m']}M | {r['mode']} | {'on' if r['attention'] else 'off'} | "
            f"{r['ms_per_token_median']:.2f} | {r['ms_per_token_min']:.2f} | {r['sentence_ms_median']:.1f} | "
            f"{spread} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", default="small,base", help="comma-separated presets or models (bundled names such as en-de, or folders) "
                   "(default: small,base)")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default: 1)")
    p.add_argument("--src-len", type=int, default=20, help="source tokens, </s> included (default: 20)")
    p.add_argument("--tgt-len", type=int, default=40, help="generated target tokens (default: 40)")
    p.add_argument("--repeats", type=int, default=7, help="timed sentences per case (default: 7)")
    p.add_argument("--warmup", type=int, default=2, help="untimed sentences per case first (default: 2)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = p.parse_args(argv)
    if args.src_len < 1 or args.tgt_len < 1 or args.repeats < 1 or args.threads < 1 or args.warmup < 0:
        p.error("lengths, repeats and threads must be >= 1, warmup >= 0")
    if max(args.src_len, args.tgt_len + 1) > 256:
        p.error("src-len and tgt-len + 1 must fit max_positions (256)")
    result = run(args)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
