"""The source-language warning measured on dev: how often it is wrong on text in the model's language (false
alarms), and how often it is said for text in another language (detections).

Every line of the shared dev sets (../shared/data, read at run time) is checked as the input of a model that
reads English and of one that reads German or French: an English line given to an English model should get
no warning, a German line given to it should. Lines: the unique sentences of both Tatoeba dev splits (short,
everyday), Multi30k val + test_2016_flickr (image captions) and the Hansards trial set of align/ (lower-cased,
tokenized English and French). `core/decoding/source_language.is_other_language` is applied with a grid of
thresholds, then with the ones the app uses (`MIN_WORDS`, `MAX_SOURCE_PROBABILITY`, `MIN_OTHER_PROBABILITY`).
A few seconds on one CPU:

    python benchmarks/source_language.py
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nmt_desktop.core.decoding import source_language as sl  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def unique(lines: list[str]) -> list[str]:
    return [line for line in dict.fromkeys(line.strip() for line in lines) if line]


def texts() -> dict[str, dict[str, list[str]]]:
    """language -> set name -> lines."""
    out: dict[str, dict[str, list[str]]] = {"en": {}, "de": {}, "fr": {}}
    for pair in ("en-de", "en-fr"):
        rows = [line.split("\t") for line in (DATA / "tatoeba" / pair / "dev.tsv").read_text(encoding="utf-8")
                .splitlines() if "\t" in line]
        out["en"][f"tatoeba {pair} dev"] = unique([r[0] for r in rows])
        out[pair[3:]]["tatoeba dev"] = unique([r[1] for r in rows])
    for lang in ("en", "de", "fr"):
        out[lang]["multi30k val+test"] = unique(sum(((DATA / "multi30k" / f"{split}.{lang}").read_text(
            encoding="utf-8").splitlines() for split in ("val", "test_2016_flickr")), []))
    for side, lang in (("src", "en"), ("tgt", "fr")):
        out[lang]["hansards (align)"] = unique((DATA / "align" / f"wpt-en-fr.dev.{side}").read_text(
            encoding="utf-8").splitlines())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args()
    started = time.perf_counter()
    sl.warm_up()
    data = texts()
    # (model language, line language, set, guess) for every line as the input of every model language
    guesses = [(model, lang, name, sl.guess_language(line, model))
               for model in ("en", "de", "fr") for lang, sets in data.items() for name, lines in sets.items()
               for line in tqdm(lines, desc=f"{model} model, {lang} {name}", file=sys.stderr, leave=False)
               if model == "en" or lang in ("en", model)]

    def rates(min_words: float, max_source: float, min_other: float) -> tuple[float, float, int, int]:
        same = [g for model, lang, _, g in guesses if model == lang]
        other = [g for model, lang, _, g in guesses if model != lang]
        warned = lambda gs: sum(sl.is_other_language(g, min_words, max_source, min_other) for g in gs)  # noqa: E731
        return 100 * warned(same) / len(same), 100 * warned(other) / len(other), len(same), len(other)

    print("Grid: false alarms (% of lines in the model's own language) and detections (% of lines in another "
          "language)")
    print()
    print("| min words | max P(model's language) | min P(other language) | false alarms % | detected % |")
    print("|---|---|---|---|---|")
    for min_words, max_source, min_other in itertools.product((2, 3, 4), (0.001, 0.01, 0.05), (0.0, 0.5, 0.7)):
        fa, det, n_same, n_other = rates(min_words, max_source, min_other)
        print(f"| {min_words} | {max_source} | {min_other} | {fa:.2f} | {det:.1f} |")
    print()
    print(f"{n_same} lines in the model's own language, {n_other} in another")
    print()
    print(f"The app's thresholds: min words {sl.MIN_WORDS}, P(model's language) < {sl.MAX_SOURCE_PROBABILITY}, "
          f"P(other) >= {sl.MIN_OTHER_PROBABILITY}")
    print()
    print("| model reads | lines in | set | lines | judged (enough words) | warned | warned % of lines "
          "| warned % of judged |")
    print("|---|---|---|---|---|---|---|---|")
    keys = dict.fromkeys((model, lang, name) for model, lang, name, _ in guesses)
    for model, lang, name in keys:
        gs = [g for m, la, n, g in guesses if (m, la, n) == (model, lang, name)]
        judged = sum(g.words >= sl.MIN_WORDS for g in gs)
        warned = sum(sl.is_other_language(g) for g in gs)
        print(f"| {model} | {lang} | {name} | {len(gs)} | {judged} | {warned} | {100 * warned / len(gs):.2f} "
              f"| {100 * warned / max(judged, 1):.2f} |")
    print()
    print(f"wall time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
