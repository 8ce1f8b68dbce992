#!/usr/bin/env bash
# GPU baseline before any GPU work (issue 33 refile): runs the project's code unchanged on a CUDA device.
#   1.  `nmt-desktop train` (resources/training/en-de.toml, a 20k-pair en-de slice) on the device, then --resume;
#       again with a 24k-token batch; wall time, steps/s, target tokens/s, peak CUDA memory (through a wrapper
#       that calls nmt_desktop.cli.main.main unchanged and reads torch.cuda.max_memory_allocated at exit)
#   3.  `nmt-desktop eval` of models/en-de on the en-de dev set on the device and on the CPU: BLEU, sentences/s,
#       identical outputs
#   2.  benchmarks/train_speed.py's step (its make_batch, its loss) on the device, fp32 and bf16 autocast, with
#       a device sync per step and FLOPs counted by torch.utils.flop_counter: tokens/s, TFLOP/s, MFU vs 989 TFLOP/s
# Its Python lives in files: benchmarks/gpu_baseline_run_cli.py (the CLI with peak CUDA memory),
# benchmarks/train_speed.py --device (the step), benchmarks/gpu_baseline_summary.py. Needs DATA (default .gpu/) with dev.tsv (copy of
# ../shared/data/tatoeba/en-de/dev.tsv) and train20k.tsv.gz (20,000 lines of ../shared/data/tatoeba/en-de/train.tsv,
# shuffled with random.Random(0), first 20k), and whl/platformdirs-4.14.8-py3-none-any.whl (missing on the device).
# Results in RESULTS.md, "GPU baseline before any GPU work".
#
#   device:  set -o pipefail; bash benchmarks/gpu_baseline.sh 2>&1 | tee $OUT/log.txt
#   CPU dry run with tiny sizes:  GB_DEVICE=cpu GB_SMALL=1 PYTHON=.venv/bin/python bash benchmarks/gpu_baseline.sh
set -u


# ---------------------------------------------------------------------------------------------
DEV=${GB_DEVICE:-cuda}
SMALL=${GB_SMALL:-0}
BUDGET=${GB_BUDGET:-450}          # seconds for all steps together; each step's timeout is cut to what is left
PY=${PYTHON:-python3}
OUT=${OUT:-.gpu/out-local}
W=${GB_WORK:-/tmp/gpu_baseline}
DATA=${GB_DATA:-.gpu}             # dev.tsv and train20k.tsv.gz (a seeded 20k-pair sample of tatoeba en-de train.tsv)
mkdir -p "$OUT"; rm -rf "$W"; mkdir -p "$W/parts"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NMT_DESKTOP_NATIVE=0 TOKENIZERS_PARALLELISM=true
# the device image lacks platformdirs (a dependency of nmt_desktop.core.locations): carried as a wheel in $DATA/whl
if ls "$DATA"/whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$W/site" "$DATA"/whl/*.whl \
    && export PYTHONPATH=$W/site:$PYTHONPATH && echo "installed $(ls "$DATA"/whl) into $W/site"
fi
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
step train 150 $PY benchmarks/gpu_baseline_run_cli.py "${TRAIN[@]}" --out "$W/run" --max-steps "$STEPS"
cp "$W/parts/train.txt" "$OUT/train.jsonl" 2>/dev/null
step resume 90 $PY benchmarks/gpu_baseline_run_cli.py "${TRAIN[@]}" --out "$W/run" --max-steps "$RSTEPS" --resume
cat "$W/parts/resume.txt" >>"$OUT/train.jsonl" 2>/dev/null
ls -la "$W/run" "$W/run/last" 2>&1 | head -20

# 3. translation on the device: the bundled en-de model on the dev set, device vs cpu
EVAL=(eval -m models/en-de --test "$DATA/dev.tsv" --json)
step eval_cuda_full 90 $PY benchmarks/gpu_baseline_run_cli.py "${EVAL[@]}" --device "$DEV" "${FULL[@]}" --hyps-out "$OUT/hyps_cuda_full.txt"
step eval_cpu_full 120 $PY benchmarks/gpu_baseline_run_cli.py "${EVAL[@]}" --device cpu "${FULL[@]}" --hyps-out "$OUT/hyps_cpu_full.txt"
step eval_cuda_full_b256 60 $PY benchmarks/gpu_baseline_run_cli.py "${EVAL[@]}" --device "$DEV" "${FULL[@]}" --batch-size 256 --hyps-out "$OUT/hyps_cuda_full_b256.txt"

# 1b. the trainer with a GPU-sized batch (24k target tokens instead of the config's 3,000)
step train_bt24k 90 $PY benchmarks/gpu_baseline_run_cli.py "${TRAIN[@]}" --out "$W/run_bt24k" "${BIG[@]}"

# 2. benchmarks/train_speed.py's step on the device
step train_speed 120 $PY benchmarks/train_speed.py --device "$DEV" --threads 0 --json --peak-tflops 989 "${SPEED[@]}"

echo "== summary (total $((SECONDS - START))s)"
$PY benchmarks/gpu_baseline_summary.py "$W" "$OUT"
