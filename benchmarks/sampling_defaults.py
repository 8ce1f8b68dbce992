"""Sampling defaults measured on dev: which temperature / top-k / top-p gives sensible samples.

For each bundled model (en-de, en-fr; trained on Tatoeba) the first `--sentences` unique English
sentences of its Tatoeba dev split are decoded greedily, with beam 4 (references), and by sampling
at a few settings, each with `--seeds` seeds. Scores are sacreBLEU BLEU and chrF against all dev
references of a sentence (multi-reference, as `eval --multi-ref`), reported as mean ± half the
range over seeds.

Two more columns say whether a setting is worth being the default:

* junk %: share of samples that are junk. A sample is junk when it has a word repeated
  `REPEAT_RUN` times in a row, or did not end before the maximum length, or its sentence chrF
  against the greedy output of the same sentence is below `JUNK_CHRF` (the sample no longer says
  what the model's best reading says: a different sentence, not a paraphrase).
* varies %: share of samples that differ from the greedy output. A setting under `MIN_VARIES`
  is near-greedy: it hides what sampling is for.

The chosen default is the setting with the best mean chrF (over models) among those that vary
at least `MIN_VARIES`; it is printed last. Takes a few minutes on 2 CPU cores:

    python benchmarks/sampling_defaults.py --sentences 300 --seeds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from sacrebleu.metrics import CHRF

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.locations import bundled_models_dir  # noqa: E402
from nmt_desktop.core.training.metrics import bleu, chrf, group_references  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tatoeba"
JUNK_CHRF = 30.0
REPEAT_RUN = 3
MIN_VARIES = 0.30


@dataclass(frozen=True)
class Setting:
    label: str
    cfg: DecodeConfig
    sampled: bool


def settings() -> list[Setting]:
    def s(label: str, **kw: float) -> Setting:
        return Setting(label, DecodeConfig(sample=True, attention=False, alternatives=0, **kw), True)

    return [
        Setting("greedy", DecodeConfig(attention=False, alternatives=0), False),
        Setting("beam 4", DecodeConfig(beam_size=4, attention=False, alternatives=0), False),
        s("T=1.0", temperature=1.0),
        s("T=1.0 top-k 10", temperature=1.0, top_k=10),
        s("T=0.7 top-p 0.9", temperature=0.7, top_p=0.9),
        s("T=0.8 top-k 40 top-p 0.95", temperature=0.8, top_k=40, top_p=0.95),
        s("T=0.6 top-p 0.8", temperature=0.6, top_p=0.8),
    ]


def dev_set(pair: str, n: int) -> tuple[list[str], list[list[str | None]]]:
    rows = []
    for line in (DATA / pair / "dev.tsv").read_text(encoding="utf-8").splitlines():
        src, _, ref = line.partition("\t")
        if src and ref:
            rows.append((src, ref))
    sources, streams = group_references(rows)
    sources = sources[:n]
    streams = [s[:n] for s in streams]
    return sources, [s for s in streams if any(r is not None for r in s)]


def is_junk(sample: str, greedy: str, finished: bool, scorer: CHRF) -> bool:
    words = sample.split()
    if any(len(set(words[i:i + REPEAT_RUN])) == 1 for i in range(len(words) - REPEAT_RUN + 1)):
        return True
    if not finished:
        return True
    return scorer.sentence_score(sample, [greedy]).score < JUNK_CHRF


def spread(values: list[float]) -> str:
    mean = statistics.fmean(values)
    return f"{mean:.2f} ± {(max(values) - min(values)) / 2:.2f}" if len(values) > 1 else f"{mean:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="en-de,en-fr")
    ap.add_argument("--sentences", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    scorer = CHRF()
    rows: dict[str, dict[str, dict[str, list[float]]]] = {}  # setting -> model -> metric -> values
    started = time.perf_counter()
    for name in args.models.split(","):
        translator = Translator.load(bundled_models_dir() / name)
        sources, refs = dev_set(f"{translator.config.src_lang}-{translator.config.tgt_lang}", args.sentences)
        greedy: list[str] = []
        for setting in settings():
            seeds = range(args.seeds) if setting.sampled else [None]
            for seed in seeds:
                cfg = DecodeConfig(**{**setting.cfg.__dict__, "seed": seed})
                out = translator.translate_batch(sources, cfg, batch_size=32)
                texts = [t.text for t in out]
                if setting.label == "greedy":
                    greedy = texts
                m = rows.setdefault(setting.label, {}).setdefault(name, {})
                m.setdefault("bleu", []).append(bleu(texts, refs).score)
                m.setdefault("chrf", []).append(chrf(texts, refs).score)
                if setting.sampled:
                    junk = sum(is_junk(t.text, g, t.best.finished, scorer) for t, g in zip(out, greedy))
                    m.setdefault("junk", []).append(100.0 * junk / len(out))
                    m.setdefault("varies", []).append(100.0 * sum(a != g for a, g in zip(texts, greedy)) / len(out))
            print(f"{name:6s} {setting.label:28s} done at {time.perf_counter() - started:6.0f} s", file=sys.stderr)
    models = args.models.split(",")
    print(f"{args.sentences} unique Tatoeba dev sentences per model (multi-reference), {args.seeds} seeds per "
          f"sampled setting; BLEU / chrF mean ± half range over seeds; junk and varies in % of samples")
    print()
    print("| setting | " + " | ".join(f"{m} BLEU | {m} chrF | {m} junk % | {m} varies %" for m in models) + " |")
    print("|---|" + "---|---|---|---|" * len(models))
    for label, per_model in rows.items():
        cells = []
        for m in models:
            v = per_model[m]
            cells += [spread(v["bleu"]), spread(v["chrf"]),
                      spread(v["junk"]) if "junk" in v else "-", spread(v["varies"]) if "varies" in v else "-"]
        print(f"| {label} | " + " | ".join(cells) + " |")
    candidates = {label: statistics.fmean(statistics.fmean(pm[m]["chrf"]) for m in models)
                  for label, pm in rows.items()
                  if "varies" in next(iter(pm.values()))
                  and min(statistics.fmean(pm[m]["varies"]) for m in models) >= 100 * MIN_VARIES}
    print()
    if candidates:
        best = max(candidates, key=candidates.get)
        print(f"default: {best} (best mean chrF {candidates[best]:.2f} among settings whose samples differ from "
              f"greedy in >= {100 * MIN_VARIES:.0f}% of sentences for every model)")
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
