"""Numbers in a translation: left to the model, hidden behind a placeholder name, or left in the text and
forced back where the model changed them (what ships; core/documents/placeholders.py, constraints.py).

Every dev sentence with a digit (Tatoeba dev, Multi30k val) and 150 Tatoeba training sentences with a number
of 2+ digits; "kept": the number appears as written in the translation; chrF against the references.

    python benchmarks/number_spans.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))


def main() -> int:
    from sacrebleu.metrics import CHRF

    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents import placeholders, translate_document
    from nmt_desktop.core.documents.translate_document import DocumentOptions, translate_lines

    translator = Translator.load(ROOT / "models" / "en-de")
    dev = [line.split("\t")[:2] for line in open(DATA / "tatoeba/en-de/dev.tsv", encoding="utf-8") if re.search(r"\d", line)]
    en = (DATA / "multi30k/val.en").read_text(encoding="utf-8").splitlines()
    de = (DATA / "multi30k/val.de").read_text(encoding="utf-8").splitlines()
    dev += [(a, b) for a, b in zip(en, de) if re.search(r"\d", a)]
    train = [line.split("\t")[:2] for line in open(DATA / "tatoeba/en-de/train.tsv", encoding="utf-8")
             if re.search(r"\d{2,}", line)][:150]
    print("| set | sentences | numbers | way | kept | chrF |")
    print("|---|---:|---:|---|---:|---:|")
    for name, pairs in (("dev", dev), ("train", train)):
        sources, references = [a for a, _ in pairs], [b for _, b in pairs]
        wanted = [m.group() for s in sources for m in placeholders.NUMBER_PATTERN.finditer(s)]

        def report(way: str, outputs: list[str]) -> None:
            kept = sum(m.group() in out for s, out in zip(sources, outputs)
                       for m in placeholders.NUMBER_PATTERN.finditer(s))
            chrf = CHRF().corpus_score(outputs, [references]).score
            print(f"| {name} | {len(sources)} | {len(wanted)} | {way} | {kept} | {chrf:.1f} |", flush=True)

        report("left to the model", [b.target for b in translate_lines(
            translator, sources, options=DocumentOptions(automatic_dnt=False)).blocks])
        report("kept by forcing (ships)", [b.target for b in translate_lines(translator, sources).blocks])
        shipped, numbers = placeholders.DEFAULT_PATTERN, translate_document.number_spans
        placeholders.DEFAULT_PATTERN = re.compile(f"{shipped.pattern}|(?:{placeholders.NUMBER_PATTERN.pattern})")
        translate_document.number_spans = lambda text, taken=(): []
        try:
            report("placeholder name", [b.target for b in translate_lines(translator, sources).blocks])
        finally:
            placeholders.DEFAULT_PATTERN, translate_document.number_spans = shipped, numbers
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
