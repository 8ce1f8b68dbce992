"""Throughput of a 100-page .docx against translating the same sentences as plain lines, at 1 and 2 threads.

The document: 40,000 words of Multi30k training captions (about 100 pages at 400 words a page), in
paragraphs of four sentences, every third paragraph with a bold phrase and a link-coloured italic word, a
table every 40 paragraphs, a header and a footer. It goes through what `translate-file` runs
(open_document, translate_document, save_translation): formatting carried over by alignment, placeholders,
and "--plain" (no alignment) beside it. The peer in the same run is `Translator.translate_batch` over the
document's sentences as lines (the batch path of `translate`), same model, backend and batch size.

    python benchmarks/document_throughput.py [--words 40000] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))


def build(path: Path, words: int) -> list[str]:
    """Write the test document; return its sentences (as the plain-lines peer translates them)."""
    import docx

    lines = [line.strip().rstrip(".") + "." for line in (DATA / "multi30k" / "train.en").read_text(encoding="utf-8").splitlines()]
    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "Captions of everyday scenes"
    document.sections[0].footer.paragraphs[0].text = "A benchmark document for nmt-desktop"
    sentences, count, n = [], 0, 0
    while count < words:
        group = lines[n: n + 4]
        n += 4
        sentences += group
        count += sum(len(s.split()) for s in group)
        paragraph = document.add_paragraph()
        if (n // 4) % 3 == 0:
            first = group[0].split()
            cut = max(1, len(first) // 2)
            paragraph.add_run(" ".join(first[:cut]) + " ")
            paragraph.add_run(" ".join(first[cut: cut + 2])).bold = True
            paragraph.add_run(" " + " ".join(first[cut + 2:]) + " " + " ".join(group[1:]))
        else:
            paragraph.add_run(" ".join(group))
        if (n // 4) % 40 == 0:
            table = document.add_table(rows=2, cols=2)
            for cell, sentence in zip((c for row in table.rows for c in row.cells), lines[n: n + 4]):
                cell.text = sentence
                sentences.append(sentence)
            n += 4
    document.save(path)
    return sentences


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--words", type=int, default=40_000)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--model", default=str(ROOT / "models" / "en-de"))
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--repeats", type=int, default=2, help="rounds, the three paths alternating; the best rate is kept")
    args = p.parse_args()

    import torch

    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.formats import open_document
    from nmt_desktop.core.documents.translate_document import DocumentOptions, save_translation, translate_document

    folder = Path(tempfile.mkdtemp())
    source = folder / "book.docx"
    sentences = build(source, args.words)
    translator = Translator.load(args.model)
    print(f"{source.name}: {sum(len(s.split()) for s in sentences)} words, {len(sentences)} sentences; "
          f"backend {type(translator.backend).__name__}")
    print("| threads | plain lines (translate_batch) | .docx, --plain | .docx, formatting kept | docx / lines |")
    print("|---:|---:|---:|---:|---:|")
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        best = {"lines": 0.0, "plain": 0.0, "kept": 0.0}
        for _round in range(args.repeats):  # alternating, so that background load hits all three alike
            started = time.perf_counter()
            translator.translate_batch(sentences, DecodeConfig(attention=False, alternatives=0), batch_size=args.batch_size)
            best["lines"] = max(best["lines"], len(sentences) / (time.perf_counter() - started))
            for key, keep in (("plain", False), ("kept", True)):
                started = time.perf_counter()
                document = open_document(source)
                result = translate_document(translator, document, DecodeConfig(alternatives=0),
                                            DocumentOptions(keep_formatting=keep, batch_size=args.batch_size))
                save_translation(result, folder / f"book.{threads}.{key}.docx")
                best[key] = max(best[key], result.sentences / (time.perf_counter() - started))
        print(f"| {threads} | {best['lines']:.1f} sentences/s | {best['plain']:.1f} sentences/s | "
              f"{best['kept']:.1f} sentences/s | {best['kept'] / best['lines']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
