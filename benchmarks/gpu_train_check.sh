#!/usr/bin/env bash
# nmt-desktop train on a lent GPU with --debug, then --resume (RESULTS "GPU baseline", third call); .gpu/ as for
# gpu_multi30k.sh, plus .gpu/train20k.tsv.gz and .gpu/dev.tsv as gpu_baseline.sh makes them.
set -u
export PYTHONUNBUFFERED=1 NMT_DESKTOP_NATIVE=0 NMT_DESKTOP_CONFIG_DIR=/tmp/cfg
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/whl/*.whl && export PYTHONPATH=/tmp/site:.
gunzip -c .gpu/train20k.tsv.gz > /tmp/train20k.tsv
T=(train --config resources/training/en-de.toml --train /tmp/train20k.tsv --dev .gpu/dev.tsv --eval-sentences 100 --keep-checkpoints 0 --log-every 20 --device cuda --progress json)
timeout 120 python3 -m nmt_desktop --debug "${T[@]}" --out /tmp/run --max-steps 400 --eval-every 200 2>&1 | cut -c1-420 | tail -14
echo "== resume"
timeout 90 python3 -m nmt_desktop --debug "${T[@]}" --out /tmp/run --max-steps 500 --eval-every 200 --resume 2>&1 | cut -c1-420 | tail -8
