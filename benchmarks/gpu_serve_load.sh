#!/usr/bin/env bash
# serve_load.py on the lent machine's 16 CPU cores (issue 43; RESULTS "The server at 32 clients with nothing else
# on the cores"): the same benchmark as on the 2-core machine, with nothing else running beside it, and on two of
# its cores (taskset). Prepare the git-ignored .gpu/ first: .gpu/dev.tsv = ../shared/data/tatoeba/en-de/dev.tsv;
# .gpu/whl/ = Python 3.12 wheels of the server's packages that the machine's image lacks (pip download
# --only-binary=:all: --python-version 3.12 platformdirs py3langid python-docx python-pptx webvtt-py starlette
# uvicorn python-multipart httptools polib rapidfuzz); .gpu/py/srt.py (srt has no wheel). Run with carry [".gpu"].
# RUNS picks the runs: "first" (the first call: httpx clients, threads 1 and 4) or "second" (the default).
set -u
export PYTHONUNBUFFERED=1 NMT_DESKTOP_CONFIG_DIR=/tmp/cfg
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/whl/*.whl && export PYTHONPATH=/tmp/site:$PWD/.gpu/py:$PWD
echo "cores $(nproc); $(python3 -c 'import torch, sys; print(sys.version.split()[0], torch.__version__)')"
timeout 300 python3 -m nmt_desktop.core.decoding.backends.native_library 2>&1 | tail -1
echo "native build ${SECONDS}s"
load() {  # NAME TIMEOUT [taskset CPUS] -- serve_load arguments
    local name=$1 limit=$2; shift 2
    timeout "$limit" "$@" --data .gpu/dev.tsv --json "$OUT/$name.json" 2>&1 | grep -E "round|ratio_32|equal_seq"
    echo "$name done ${SECONDS}s"
}
S=(python3 benchmarks/serve_load.py)
if [ "${RUNS:-second}" = first ]; then
    load serve_load_t1 200 "${S[@]}" --client httpx --sentences 1500 --rounds 3 --threads 1
    load serve_load_t4 150 "${S[@]}" --client httpx --sentences 1500 --rounds 2 --threads 4
else
    load raw_t1 110 "${S[@]}" --sentences 1000 --rounds 2 --threads 1
    load raw_t4 110 "${S[@]}" --sentences 1000 --rounds 2 --threads 4
    load raw_2cores 110 taskset -c 0,1 "${S[@]}" --sentences 1000 --rounds 2 --threads 1
    load httpx_2cores 110 taskset -c 0,1 "${S[@]}" --client httpx --sentences 1000 --rounds 2 --threads 1
fi
