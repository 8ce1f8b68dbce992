"""How often formatting inside a sentence lands on the right words: the document path's transfer
(core/documents/inline_transfer.py over the model's default alignment) judged against human word alignments.

For every content word (4+ letters) of every sentence of a gold set, the word is made a bold run of its
sentence, and the reference translation is scored by the model (teacher forcing: the same evidence the
document path reads from its own translation). The transfer then cuts the reference into runs. A case is
kept when the bold run holds exactly the target words that people aligned to the word (sure or possible
links), "overlap" when it holds at least one of them and nothing unaligned to it; words with no gold link
are skipped.

    python benchmarks/inline_formatting.py [--max-sentences N]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SETS = {
    "en-de.dev (cased)": (ROOT / "benchmarks/align/en-de.dev.cased.src", ROOT / "benchmarks/align/en-de.dev.cased.tgt",
                          ROOT / "benchmarks/align/en-de.dev.gold", "en-de"),
    "en-de.long": (ROOT / "benchmarks/align/en-de.long.src", ROOT / "benchmarks/align/en-de.long.tgt",
                   ROOT / "benchmarks/align/en-de.long.gold", "en-de"),
    "wpt en-fr": (ROOT.parent / "shared/data/align/wpt-en-fr.dev.src", ROOT.parent / "shared/data/align/wpt-en-fr.dev.tgt",
                  ROOT.parent / "shared/data/align/wpt-en-fr.dev.gold", "en-fr"),
}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--max-sentences", type=int, default=0)
    p.add_argument("--decision", default=None, help="links by another decision than the document path's (a comparison)")
    args = p.parse_args()

    import numpy as np

    from nmt_desktop.core.analysis.alignment import BEST_METHOD, decide, parse_gold, word_evidence
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.inline_transfer import RunInfo, transfer

    print("| set | cases | kept exactly | overlap, nothing foreign | bold run emptied |")
    print("|---|---:|---:|---:|---:|")
    for name, (src_path, tgt_path, gold_path, model) in SETS.items():
        translator = Translator.load(ROOT / "models" / model)
        sources = src_path.read_text(encoding="utf-8").splitlines()
        targets = tgt_path.read_text(encoding="utf-8").splitlines()
        golds = [parse_gold(line) for line in gold_path.read_text(encoding="utf-8").splitlines()]
        if args.max_sentences:
            sources, targets, golds = sources[: args.max_sentences], targets[: args.max_sentences], golds[: args.max_sentences]
        exact = overlap = empty = cases = 0
        for source, target, gold in zip(sources, targets, golds):
            src_words, tgt_words = source.split(), target.split()
            scored = translator.score(source, target)
            evidence = word_evidence(scored, BEST_METHOD, src_words, tgt_words, translator=translator)
            method = BEST_METHOD if args.decision is None else replace(BEST_METHOD, decision=args.decision, grow=0.0)
            links = list(decide(evidence, method))
            possible = {*gold.sure, *gold.possible}
            for i, word in enumerate(src_words):
                wanted = {j for (a, j) in possible if a == i}
                if len(word) < 4 or not word.isalpha() or not wanted:
                    continue
                # runs: the words before, the bold word, the words after (each a run when not empty)
                runs, source_runs = [], []
                if i > 0:
                    runs.append(RunInfo(False, True))
                bold = len(runs)
                runs.append(RunInfo(True, True))
                if i < len(src_words) - 1:
                    runs.append(RunInfo(False, True))
                for k in range(len(src_words)):
                    source_runs.append(bold if k == i else (0 if k < i else len(runs) - 1))
                out = transfer(runs, source_runs, tgt_words, evidence, links, {})
                # which target words the bold run got: walk the runs in order over the target words
                got, position = set(), 0
                for piece in out:
                    n = len(piece.text.split())
                    if piece.index == bold:
                        got = set(range(position, position + n))
                    position += n
                cases += 1
                exact += got == wanted
                overlap += bool(got & wanted) and got <= wanted
                empty += not got
        print(f"| {name} | {cases} | {100 * exact / cases:.1f}% | {100 * overlap / cases:.1f}% | "
              f"{100 * empty / cases:.1f}% |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
