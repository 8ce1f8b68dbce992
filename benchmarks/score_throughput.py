"""Scoring throughput (issue 23): sentence pairs per second of `score` next to `translate` (greedy), 1 thread.

The bundled en-fr model; the first `--sentences` pairs of the Tatoeba en-fr dev set: `translate`
decodes the sources greedily, `score` forces the dev references through the decoder (teacher
forcing, `Translator.score_batch`). Both run in one process, interleaved round by round so that load
hits them alike (the settings' order alternates); the median round is reported, with the ratio score / translate in pairs per second
(above 1: scoring is faster). Two settings: what each command computes by default (translate plain:
no attention, no alternatives; score JSON: 5 alternatives, no attention), and with attention on (as
`translate --json` and `align` use it).

    python benchmarks/score_throughput.py --sentences 500 --rounds 3
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from decode_speed import LoadMeter  # noqa: E402  (benchmarks/ is the script's folder)

from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.locations import bundled_models_dir  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "tatoeba" / "en-fr" / "dev.tsv"
BATCH_SIZE = 16  # the CLI's default


def read_pairs(path: Path, n: int) -> list[tuple[str, str]]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        source, _, target = line.partition("\t")
        if source.strip() and target.strip():
            pairs.append((source.strip(), target.strip()))
        if len(pairs) == n:
            break
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model", default=str(bundled_models_dir() / "en-fr"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    translator = Translator.load(args.model)
    pairs = read_pairs(DEV, args.sentences)
    sources = [s for s, _ in pairs]
    settings = {
        "defaults": (DecodeConfig(beam_size=1, attention=False, alternatives=0),
                     DecodeConfig(beam_size=1, attention=False, alternatives=5)),
        "attention on": (DecodeConfig(beam_size=1, attention=True, alternatives=0),
                         DecodeConfig(beam_size=1, attention=True, alternatives=0)),
    }
    translator.translate_batch(sources[:BATCH_SIZE], settings["defaults"][0], batch_size=BATCH_SIZE)  # warm-up
    translator.score_batch(pairs[:BATCH_SIZE], settings["defaults"][1], batch_size=BATCH_SIZE)
    times: dict[tuple[str, str], list[float]] = {}
    with LoadMeter() as load:
        for r in range(args.rounds):
            order = list(settings.items())
            for name, (translate_cfg, score_cfg) in (order if r % 2 == 0 else order[::-1]):  # alternate first
                t0 = time.perf_counter()
                decoded = translator.translate_batch(sources, translate_cfg, batch_size=BATCH_SIZE)
                t1 = time.perf_counter()
                scored = translator.score_batch(pairs, score_cfg, batch_size=BATCH_SIZE)
                t2 = time.perf_counter()
                tokens = {"translate": sum(len(t.target_ids) for t in decoded),
                          "score": sum(len(t.target_ids) for t in scored)}
                times.setdefault((name, "translate"), []).append(t1 - t0)
                times.setdefault((name, "score"), []).append(t2 - t1)
    n = len(pairs)
    print(f"model {Path(args.model).name}, {n} pairs of {DEV.name}, batch {BATCH_SIZE}, 1 thread, {args.rounds} "
          f"rounds (median); torch {torch.__version__}, {platform.processor() or platform.machine()}; "
          + ("load unknown" if load.other_cpus is None else f"{load.other_cpus:.2f} other CPUs busy"))
    print(f"target tokens (</s> included): translate {tokens['translate']}, score {tokens['score']}")
    print("| setting | translate greedy, pairs/s | score, pairs/s | score / translate |")
    print("|---|---:|---:|---:|")
    for name in settings:
        translate_rate = n / statistics.median(times[(name, "translate")])
        score_rate = n / statistics.median(times[(name, "score")])
        print(f"| {name} | {translate_rate:.1f} | {score_rate:.1f} | {score_rate / translate_rate:.2f} |")


if __name__ == "__main__":
    main()
