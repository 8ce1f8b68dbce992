"""Summarize benchmarks/gpu_baseline.sh's step outputs (WORK/parts/*.txt, WORK/status) as a table."""
from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

work, out = Path(sys.argv[1]), Path(sys.argv[2])
parts = work / "parts"
dec = json.JSONDecoder()


def objs(name: str) -> list[dict]:
    p = parts / f"{name}.txt"
    if not p.exists():
        return []
    found = []
    for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
        for m in re.finditer(r"(RUN_CLI |TRAIN_SPEED )?\{", line):
            try:
                obj, _ = dec.raw_decode(line[m.end() - 1:])
            except ValueError:
                continue
            if isinstance(obj, dict):
                obj["_tag"] = (m.group(1) or "").strip()
                found.append(obj)
    return found


def first_error(name: str) -> str:
    p = parts / f"{name}.txt"
    if not p.exists():
        return ""
    lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
    errs = [ln for ln in lines if re.search(r"Error|error|Traceback|Killed|nmt-desktop:", ln)]
    return errs[-1][:300] if errs else ""


status = {}
if (work / "status").exists():
    for ln in (work / "status").read_text().splitlines():
        n, rc, s = ln.split()
        status[n] = (rc, s)

rows: list[tuple[str, str]] = []


def add(k: str, v) -> None:
    rows.append((k, str(v)))


for n, (rc, s) in status.items():
    add(f"step {n}", f"rc={rc}, {s} s" + (f"  ERR: {first_error(n)}" if rc not in ("0", "skipped") else ""))

for p in sorted(parts.glob("*.smi")):
    util, mem = [], []
    for ln in p.read_text().splitlines():
        try:
            u, m = (float(x) for x in ln.split(","))
        except ValueError:
            continue
        util.append(u)
        mem.append(m)
    if util:
        add(f"nvidia-smi during {p.stem}", f"GPU busy mean {statistics.mean(util):.0f}% (max {max(util):.0f}%), "
                                          f"memory.used max {max(mem):.0f} MiB, {len(util)} samples")

for name in ("train", "resume", "train_bt24k"):
    ev = objs(name)
    if not ev:
        continue
    start = next((e for e in ev if e.get("event") == "start"), {})
    steps = [e for e in ev if e.get("event") == "step"]
    end = next((e for e in ev if e.get("event") == "end"), {})
    evals = [e for e in ev if e.get("event") == "eval"]
    cli = next((e for e in ev if e["_tag"] == "RUN_CLI"), {})
    err = next((e for e in ev if e.get("event") == "error"), None)
    if start:
        add(f"{name}: start", f"resumed={start.get('resumed')} device={start.get('device')} step={start.get('step')} "
                              f"params={start.get('parameters')} train_pairs={start.get('train_pairs')} "
                              f"steps/epoch={start.get('steps_per_epoch')} padding={start.get('padding_fraction')} "
                              f"batch_tokens={start.get('config', {}).get('batch_tokens')}")
    if steps:
        tps = [e["tokens_per_s"] for e in steps if e.get("step", 0) > 1]
        add(f"{name}: tokens/s per log window (target tokens)", ", ".join(f"{t:.0f}" for t in tps))
        if tps:
            later = tps[1:] or tps
            add(f"{name}: target tokens/s, median of windows after the first", f"{statistics.median(later):.0f}")
        add(f"{name}: loss first/last logged", f"{steps[0].get('loss')} @ {steps[0].get('step')} / "
                                               f"{steps[-1].get('loss')} @ {steps[-1].get('step')}")
    if end:
        st0 = start.get("step", 0) or 0
        el = end.get("elapsed_s")
        add(f"{name}: end", f"reason={end.get('reason')} step={end.get('step')} elapsed_s(train loop, cumulative)={el}")
        if el and not start.get("resumed"):
            add(f"{name}: steps/s (train loop)", f"{(end.get('step', 0) - st0) / el:.2f}")
    for e in evals:
        add(f"{name}: dev eval @ step {e.get('step')}", f"BLEU {e.get('bleu')} chrF {e.get('chrf')} loss {e.get('dev_loss')}")
    ck = [e for e in ev if e.get("event") == "checkpoint"]
    if ck:
        add(f"{name}: eval+save pause_s", ck[-1].get("pause_s"))
    if cli:
        add(f"{name}: process wall_s / peak CUDA MiB (allocated/reserved)",
            f"{cli.get('wall_s')} / {cli.get('cuda_max_allocated_mib')} / {cli.get('cuda_max_reserved_mib')}")
    if err:
        add(f"{name}: ERROR", f"{err.get('type')}: {err.get('message')}")

for name in ("eval_cuda_full", "eval_cpu_full", "eval_cuda_full_b256"):
    ev = objs(name)
    res = next((e for e in ev if "bleu" in e and "sentences" in e), None)
    cli = next((e for e in ev if e["_tag"] == "RUN_CLI"), {})
    if res:
        add(name, f"sentences={res['sentences']} beam={res['beam']} BLEU={res['bleu']} chrF={res['chrf']} "
                  f"sent/s={res.get('sentences_per_s')} seconds={res.get('seconds')} "
                  f"peak CUDA MiB={cli.get('cuda_max_allocated_mib')}")


def same(a: str, b: str) -> None:
    pa, pb = out / a, out / b
    if pa.exists() and pb.exists():
        la, lb = pa.read_text(encoding="utf-8").splitlines(), pb.read_text(encoding="utf-8").splitlines()
        n = min(len(la), len(lb))
        eq = sum(x == y for x, y in zip(la, lb))
        add(f"identical lines {a} vs {b}", f"{eq}/{n} (lengths {len(la)}, {len(lb)})")


same("hyps_cuda_full.txt", "hyps_cpu_full.txt")
same("hyps_cuda_full.txt", "hyps_cuda_full_b256.txt")

for e in objs("train_speed"):
    if e["_tag"] != "TRAIN_SPEED":
        continue
    if "error" in e:
        add(f"train_speed {e['config']} {e['mode']} bt{e['batch_tokens']}", f"ERROR {e['error']}")
        continue
    add(f"train_speed {e['config']} {e['mode']} bt{e['batch_tokens']}",
        f"{e['tgt_tokens_per_s_median']:.0f} tgt tok/s (best {e['tgt_tokens_per_s_max']:.0f}), "
        f"step {e['step_ms_median']} ms, {e['tflops_per_s']} TFLOP/s, MFU {e.get('mfu_vs_peak_pct')}% of 989, "
        f"pad {e['pad_fraction_tgt']}, peak {e.get('cuda_max_allocated_mib')} MiB, params {e['parameters']}")

w = max((len(k) for k, _ in rows), default=10)
text = "\n".join(f"{k.ljust(w)} | {v}" for k, v in rows)
print(text)
(out / "summary.txt").write_text(text + "\n", encoding="utf-8")
