#!/usr/bin/env bash
# GPU baseline before any GPU work (issue 33 refile): runs the project's code unchanged on a CUDA device.
#   1.  `nmt-desktop train` (resources/training/en-de.toml, a 20k-pair en-de slice) on the device, then --resume;
#       again with a 24k-token batch; wall time, steps/s, target tokens/s, peak CUDA memory (through a wrapper
#       that calls nmt_desktop.cli.main.main unchanged and reads torch.cuda.max_memory_allocated at exit)
#   3.  `nmt-desktop eval` of models/en-de on the en-de dev set on the device and on the CPU: BLEU, sentences/s,
#       identical outputs
#   2.  benchmarks/train_speed.py's step (its make_batch, its loss) on the device, fp32 and bf16 autocast, with
#       a device sync per step and FLOPs counted by torch.utils.flop_counter: tokens/s, TFLOP/s, MFU vs 989 TFLOP/s
# The helpers are written to $GB_WORK/py from the heredocs below. Needs DATA (default .gpu/) with dev.tsv (copy of
# ../shared/data/tatoeba/en-de/dev.tsv) and train20k.tsv.gz (20,000 lines of ../shared/data/tatoeba/en-de/train.tsv,
# shuffled with random.Random(0), first 20k), and whl/platformdirs-4.14.8-py3-none-any.whl (missing on the device).
# Results in RESULTS.md, "GPU baseline before any GPU work".
#
#   device:  set -o pipefail; bash benchmarks/gpu_baseline.sh 2>&1 | tee $OUT/log.txt
#   CPU dry run with tiny sizes:  GB_DEVICE=cpu GB_SMALL=1 PYTHON=.venv/bin/python bash benchmarks/gpu_baseline.sh
set -u

write_helpers() {
cat >"$W/py/run_cli.py" <<'PYEOF'
"""Run `nmt_desktop.cli.main.main(argv)` unchanged and report, on stderr, its wall time, the peak
CUDA memory PyTorch allocated (torch.cuda.max_memory_allocated / max_memory_reserved) and the
third-party modules it imported. Used by benchmarks/gpu_baseline.sh; changes no behaviour.

    python .gpu/run_cli.py train --config ... --device cuda
"""
import json
import sys
import time

sys.path.insert(0, ".")


def main() -> int:
    from nmt_desktop.cli.main import main as cli_main

    t0 = time.perf_counter()
    rc = 1
    try:
        rc = cli_main(sys.argv[1:])
    finally:
        wall = time.perf_counter() - t0
        rep = {"wrapper": "run_cli", "argv": sys.argv[1:3], "rc": rc, "wall_s": round(wall, 2)}
        try:
            import torch

            if torch.cuda.is_available() and torch.cuda.is_initialized():
                rep["cuda_max_allocated_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
                rep["cuda_max_reserved_mib"] = round(torch.cuda.max_memory_reserved() / 2**20, 1)
                rep["cuda_device"] = torch.cuda.get_device_name(0)
            rep["torch"] = torch.__version__
        except Exception as exc:  # report only
            rep["torch_error"] = repr(exc)
        std = set(sys.stdlib_module_names)
        rep["third_party_modules"] = sorted({m.split(".")[0] for m in list(sys.modules)
                                             if m.split(".")[0] not in std and not m.startswith("_")
                                             and m.split(".")[0] != "nmt_desktop"})
        print("RUN_CLI " + json.dumps(rep), file=sys.stderr, flush=True)
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
PYEOF
cat >"$W/py/train_speed_dev.py" <<'PYEOF'
"""benchmarks/train_speed.py's step on any device (that script has no --device and times without a
device sync). Same model builder, same random batches (its make_batch), same step: forward,
label-smoothed CE (sum), backward, clip 1.0, AdamW. Adds: torch.cuda.synchronize around each step,
FLOPs of one step counted by torch.utils.flop_counter.FlopCounterMode (matmuls / attention as
PyTorch dispatches them, padded shapes), MFU against a given peak, peak CUDA memory, and an
optional bf16-autocast variant (what Trainer does on CUDA). Changes no project code.

    python .gpu/train_speed_dev.py --device cuda --configs base,bundled --modes fp32,bf16
"""
from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from train_speed import make_batch  # noqa: E402
from nmt_desktop.core.config import PRESETS, ModelConfig  # noqa: E402
from nmt_desktop.core.model.transformer import build_model, count_parameters  # noqa: E402

# the bundled en-de model's dims (resources/training/en-de.toml, models/en-de/config.json)
CONFIGS = {
    "tiny": dict(vocab=8000, **PRESETS["tiny"]),
    "small": dict(vocab=8000, **PRESETS["small"]),
    "base": dict(vocab=32000, **PRESETS["base"]),
    "bundled": dict(vocab=8000, d_model=192, n_heads=4, encoder_layers=3, decoder_layers=3, ffn_dim=768),
}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(name: str, mode: str, device: torch.device, steps: int, warmup: int, budget: int, peak: float) -> dict:
    spec = dict(CONFIGS[name])
    vocab = spec.pop("vocab")
    cfg = ModelConfig(src_vocab_size=vocab, tgt_vocab_size=vocab, **spec)
    model = build_model(cfg, seed=0).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    gen = torch.Generator().manual_seed(0)
    batches = [tuple(t.to(device) for t in make_batch(cfg.tgt_vocab_size, budget, gen)) for _ in range(4)]
    amp = (torch.autocast(device.type, dtype=torch.bfloat16) if mode == "bf16"
           else contextlib.nullcontext())

    def step(src, tgt_in, tgt_out) -> int:
        ntok = int((tgt_out != 0).sum())
        with amp:
            logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=0,
                               label_smoothing=0.1, reduction="sum")
        (loss / ntok).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return ntok

    # FLOPs of one step on batch 0 (forward + backward; the optimizer's elementwise work is not counted)
    counter = FlopCounterMode(display=False)
    with counter:
        step(*batches[0])
    flops = counter.get_total_flops()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    times, toks, padded = [], [], []
    for i in range(warmup + steps):
        b = batches[i % len(batches)]
        sync(device)
        t0 = time.perf_counter()
        ntok = step(*b)
        sync(device)
        dt = time.perf_counter() - t0
        if i >= warmup:
            times.append(dt)
            toks.append(ntok)
            padded.append(b[2].numel())
    med = statistics.median(times)
    rates = [n / t for n, t in zip(toks, times)]
    row = {"config": name, "mode": mode, "device": str(device), "parameters": count_parameters(model),
           "batch_tokens": budget, "rows_x_width": list(batches[0][0].shape),
           "tgt_tokens_per_s_median": round(statistics.median(rates), 1), "tgt_tokens_per_s_max": round(max(rates), 1),
           "step_ms_median": round(med * 1e3, 3), "steps": steps,
           "pad_fraction_tgt": round(1 - sum(toks) / sum(padded), 3),
           "flops_per_step_batch0": flops, "tflops_per_s": round(flops / med / 1e12, 2)}
    if peak:
        row["mfu_vs_peak_pct"] = round(100 * flops / med / peak, 2)
    if device.type == "cuda":
        row["cuda_max_allocated_mib"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--configs", default="base,bundled")
    ap.add_argument("--modes", default="fp32,bf16")
    ap.add_argument("--batch-tokens", default="4096", help="comma-separated")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 peak for MFU (H100/H200 SXM: 989)")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    print(f"torch {torch.__version__}, device {device}"
          + (f" ({torch.cuda.get_device_name(device)}), allow_tf32 matmul={torch.backends.cuda.matmul.allow_tf32}, "
             f"float32_matmul_precision={torch.get_float32_matmul_precision()}" if device.type == "cuda" else ""),
          flush=True)
    for name in [c for c in args.configs.split(",") if c]:
        for budget in [int(b) for b in args.batch_tokens.split(",") if b]:
            for mode in [m for m in args.modes.split(",") if m]:
                try:
                    row = measure(name, mode, device, args.steps, args.warmup, budget, args.peak_tflops * 1e12)
                except Exception as exc:
                    row = {"config": name, "mode": mode, "batch_tokens": budget, "error": f"{type(exc).__name__}: {exc}"}
                print("TRAIN_SPEED " + json.dumps(row), flush=True)
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
PYEOF
cat >"$W/py/summarize.py" <<'PYEOF'
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
PYEOF
}

# ---------------------------------------------------------------------------------------------
DEV=${GB_DEVICE:-cuda}
SMALL=${GB_SMALL:-0}
BUDGET=${GB_BUDGET:-450}          # seconds for all steps together; each step's timeout is cut to what is left
PY=${PYTHON:-python3}
OUT=${OUT:-.gpu/out-local}
W=${GB_WORK:-/tmp/gpu_baseline}
DATA=${GB_DATA:-.gpu}             # dev.tsv and train20k.tsv.gz (a seeded 20k-pair sample of tatoeba en-de train.tsv)
mkdir -p "$OUT"; rm -rf "$W"; mkdir -p "$W/parts" "$W/py"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NMT_DESKTOP_NATIVE=0 TOKENIZERS_PARALLELISM=true
# the device image lacks platformdirs (a dependency of nmt_desktop.core.locations): carried as a wheel in $DATA/whl
if ls "$DATA"/whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$W/site" "$DATA"/whl/*.whl \
    && export PYTHONPATH=$W/site:$PYTHONPATH && echo "installed $(ls "$DATA"/whl) into $W/site"
fi
write_helpers
if [ "$SMALL" = 1 ]; then
  STEPS=4; RSTEPS=6; LOGE=2; EVS=20; FULL=(--max-sentences 40); BIG=(--max-steps 3 --batch-tokens 6000)
  SPEED=(--configs tiny --modes fp32,bf16 --batch-tokens 512 --steps 2 --warmup 1)
else
  STEPS=500; RSTEPS=600; LOGE=50; EVS=300; FULL=(); BIG=(--max-steps 150 --batch-tokens 24000)
  SPEED=(--configs base,bundled --modes fp32,bf16 --batch-tokens 4096,16384 --steps 30 --warmup 5)
fi
START=$SECONDS
step() {  # step NAME MAX_SECONDS command...
  local name=$1 max=$2; shift 2
  local left=$((BUDGET - (SECONDS - START))); local t=$(( left < max ? left : max ))
  if [ "$t" -lt 10 ]; then echo "== $name: SKIPPED, ${left}s of the budget left"; echo "$name skipped 0" >>"$W/status"; return; fi
  echo "== $name (timeout ${t}s): $*"
  local s0=$SECONDS smi=""
  if command -v nvidia-smi >/dev/null 2>&1; then  # GPU busy % and memory used, sampled every 250 ms during the step
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 250 >"$W/parts/$name.smi" 2>/dev/null &
    smi=$!
  fi
  timeout -k 5 "$t" "$@" 2>&1 | tee "$W/parts/$name.txt"
  local rc=${PIPESTATUS[0]}
  if [ -n "$smi" ]; then kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null; fi
  echo "== $name rc=$rc $((SECONDS - s0))s"; echo "$name $rc $((SECONDS - s0))" >>"$W/status"
}

echo "== gpu_baseline: device=$DEV small=$SMALL budget=${BUDGET}s python=$($PY -V 2>&1) $(date -u +%FT%TZ) $(uname -m)"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,utilization.gpu --format=csv 2>&1 | head -5
step env 60 $PY -c "
import torch, importlib, importlib.metadata as md
print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0); print('device', torch.cuda.get_device_name(0), 'SMs', p.multi_processor_count, 'mem GiB', round(p.total_memory/2**30, 1))
    print('allow_tf32 matmul', torch.backends.cuda.matmul.allow_tf32, 'cudnn', torch.backends.cudnn.allow_tf32, 'bf16 supported', torch.cuda.is_bf16_supported())
for m in ['tokenizers','safetensors','sacrebleu','platformdirs','tqdm','numpy','transformers','huggingface_hub','sentencepiece','py3langid']:
    try: print(m, md.version(m))
    except Exception as e: print(m, 'MISSING', type(e).__name__)
"
$PY -c "import gzip, shutil, sys; shutil.copyfileobj(gzip.open(sys.argv[1], 'rb'), open(sys.argv[2], 'wb'))" "$DATA/train20k.tsv.gz" "$W/train20k.tsv"
echo "train slice: $(wc -l <"$W/train20k.tsv") pairs; dev: $(wc -l <"$DATA/dev.tsv") pairs"

# 1. the trainer as it is, on the device: bundled en-de config, 20k pairs, then --resume
TRAIN=(train --config resources/training/en-de.toml --train "$W/train20k.tsv" --dev "$DATA/dev.tsv"
       --eval-every 100000 --eval-sentences "$EVS" --keep-checkpoints 0 --log-every "$LOGE" --device "$DEV"
       --threads 0 --progress json)
step train 150 $PY "$W/py/run_cli.py" "${TRAIN[@]}" --out "$W/run" --max-steps "$STEPS"
cp "$W/parts/train.txt" "$OUT/train.jsonl" 2>/dev/null
step resume 90 $PY "$W/py/run_cli.py" "${TRAIN[@]}" --out "$W/run" --max-steps "$RSTEPS" --resume
cat "$W/parts/resume.txt" >>"$OUT/train.jsonl" 2>/dev/null
ls -la "$W/run" "$W/run/last" 2>&1 | head -20

# 3. translation on the device: the bundled en-de model on the dev set, device vs cpu
EVAL=(eval -m models/en-de --test "$DATA/dev.tsv" --json)
step eval_cuda_full 90 $PY "$W/py/run_cli.py" "${EVAL[@]}" --device "$DEV" "${FULL[@]}" --hyps-out "$OUT/hyps_cuda_full.txt"
step eval_cpu_full 120 $PY "$W/py/run_cli.py" "${EVAL[@]}" --device cpu "${FULL[@]}" --hyps-out "$OUT/hyps_cpu_full.txt"
step eval_cuda_full_b256 60 $PY "$W/py/run_cli.py" "${EVAL[@]}" --device "$DEV" "${FULL[@]}" --batch-size 256 --hyps-out "$OUT/hyps_cuda_full_b256.txt"

# 1b. the trainer with a GPU-sized batch (24k target tokens instead of the config's 3,000)
step train_bt24k 90 $PY "$W/py/run_cli.py" "${TRAIN[@]}" --out "$W/run_bt24k" "${BIG[@]}"

# 2. benchmarks/train_speed.py's step on the device (that script itself has no --device)
step train_speed 120 $PY "$W/py/train_speed_dev.py" --device "$DEV" "${SPEED[@]}"

echo "== summary (total $((SECONDS - START))s)"
$PY "$W/py/summarize.py" "$W" "$OUT"
