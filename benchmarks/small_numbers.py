"""Bare one- or two-digit numbers ("18 apples", "Article 9"): left to the model (as before 2026-11-28 21:00) or kept
as the number, in digits or in the target language's words, and forced back where the model wrote another number
(core/documents/number_words.py; what ships).

Sentences with a digit from Tatoeba dev and the first 200 Tatoeba training sentences with a bare one- or
two-digit number, of the pair's bundled model (../shared/data, never committed). "Kept": each bare number of the
source (not part of a time, decimal or larger number) appears in the translation in digits or, for 0-99, in the
target language's words. chrF against the references. The sentences whose translation changed are printed.

    nice -n 0 .venv/bin/python benchmarks/small_numbers.py en-de
    nice -n 0 .venv/bin/python benchmarks/small_numbers.py en-fr
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    from sacrebleu.metrics import CHRF

    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents import translate_document
    from nmt_desktop.core.documents.number_words import number_words, says_number
    from nmt_desktop.core.documents.translate_document import translate_lines

    pair = argv[0] if argv else "en-de"
    language = pair.split("-")[1]
    translator = Translator.load(ROOT / "models" / pair)
    rows = [line.split("\t")[:2] for line in open(DATA / "tatoeba" / pair / "dev.tsv", encoding="utf-8")]
    dev = [r for r in rows if re.search(r"\d", r[0])]
    rows = [line.split("\t")[:2] for line in open(DATA / "tatoeba" / pair / "train.tsv", encoding="utf-8")]
    train = [r for r in rows if re.search(r"(?<!\d)\d{1,2}(?!\d)", r[0])][:200]

    def kept(sources: list[str], outputs: list[str]) -> tuple[int, int]:
        found = total = 0
        for source, output in zip(sources, outputs):
            for m in re.finditer(r"(?<![\d:.,])\d+(?![\d:])", source):
                total += 1
                words = number_words(int(m.group()), language) if len(m.group()) <= 2 else None
                found += bool(re.search(rf"(?<!\d){m.group()}(?!\d)", output)) or bool(words and says_number(output, words))
        return found, total

    shipped = translate_document.small_number_spans
    print(f"| {pair} set | sentences | numbers | way | kept (digits or words) | chrF |")
    print("|---|---:|---:|---|---:|---:|")
    for name, pairs in (("dev", dev), ("train, bare 1-2 digits", train)):
        sources, references = [a for a, _ in pairs], [b for _, b in pairs]
        outputs = {}
        for way, spans in (("left to the model", lambda text, taken=(): []), ("kept, digits or words (ships)", shipped)):
            translate_document.small_number_spans = spans
            try:
                outputs[way] = [b.target for b in translate_lines(translator, sources).blocks]
            finally:
                translate_document.small_number_spans = shipped
            found, total = kept(sources, outputs[way])
            chrf = CHRF().corpus_score(outputs[way], [references]).score
            print(f"| {name} | {len(sources)} | {total} | {way} | {found} | {chrf:.2f} |", flush=True)
        for source, before, after in zip(sources, *outputs.values()):
            if before != after:
                print(f"    {source} | {before} | {after}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
