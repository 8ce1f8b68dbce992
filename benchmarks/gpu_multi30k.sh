#!/usr/bin/env bash
# Multi30k en->de on a lent GPU in one device call (RESULTS "GPU baseline", fourth call). Prepare the git-ignored .gpu/
# first: .gpu/m30k/ = ../shared/data/multi30k/{train,val,test_2016_flickr}.{en,de}; .gpu/whl/ = the platformdirs wheel
# (pip download --python-version 3.12 --only-binary=:all: platformdirs); then run it with carry [".gpu"].
set -u
export PYTHONUNBUFFERED=1 NMT_DESKTOP_NATIVE=0 NMT_DESKTOP_CONFIG_DIR=/tmp/cfg
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/whl/*.whl && export PYTHONPATH=/tmp/site:.
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
D=.gpu/m30k
T0=$SECONDS
timeout 300 python3 -m nmt_desktop train --config resources/training/multi30k-en-de.toml \
  --train-src $D/train.en --train-tgt $D/train.de --dev-src $D/val.en --dev-tgt $D/val.de \
  --out /tmp/m30k --device cuda --max-time 255 --eval-every 800 --keep-checkpoints 0 --log-every 400 --progress json 2>&1 \
  | grep -v '"event": "eval_progress"' | cut -c1-300 > $OUT/train.jsonl
echo "train rc=$? wall=$((SECONDS-T0))s"; grep '"event": "\(eval\|end\|error\)"' $OUT/train.jsonl | cut -c1-220 | tail -12
for m in best last; do
  timeout 60 python3 -m nmt_desktop eval -m /tmp/m30k/$m --src $D/test_2016_flickr.en --ref $D/test_2016_flickr.de --beam 5 --device cuda --json 2>&1 | tail -1 | cut -c1-400
done
ls -la /tmp/m30k/best 2>/dev/null | head
