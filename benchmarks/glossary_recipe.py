"""Glossaries on a dev set built from the shared data: term success rate and chrF with and without the
glossary, and the cost per sentence of forcing the terms in.

The glossary (benchmarks/glossary/<set>.tsv, written by `--build`) is mined from the training side of the
shared corpora: for each frequent English content word, the German word that co-occurs with it most
(Dice coefficient over sentence pairs, at least 0.3), German nouns only (capitalised, not sentence-initial), as
glossaries hold terms rather than function words. The dev set is every dev sentence whose source holds
a term (an inflected form counts, as in the app) *and* whose reference uses the term's target, so the
glossary states what the reference says: a translator's glossary, not a guess. Success: the target term
in the output (at a word start, as `glossary.target_present`).

    python benchmarks/glossary_recipe.py --build        # mine the glossaries (once; committed)
    python benchmarks/glossary_recipe.py                # measure (the RESULTS.md table)
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))

STOP = set("""a an the and or but of in on at to for with from by as is are was were be been being it its this that these
those there here he she they we you i me my your his her their our them him us who whom which what when where why how
not no yes very too also just only some any all each every both few more most other such than then so can could will
would shall should may might must do does did done have has had having about above after again against because before
below between down during into off out over through under until up while one two three four five tom mary""".split())
SETS = {
    "tatoeba": (DATA / "tatoeba/en-de/train.tsv", DATA / "tatoeba/en-de/dev.tsv"),
    "multi30k": ((DATA / "multi30k/train.en", DATA / "multi30k/train.de"), (DATA / "multi30k/val.en", DATA / "multi30k/val.de")),
}
WORD = re.compile(r"\w+")


def pairs(spec) -> list[tuple[str, str]]:
    if isinstance(spec, tuple):
        en, de = (p.read_text(encoding="utf-8").splitlines() for p in spec)
        return list(zip(en, de))
    return [tuple(line.split("\t")[:2]) for line in spec.read_text(encoding="utf-8").splitlines() if "\t" in line]


def mine(train: list[tuple[str, str]], min_count: int = 30, min_dice: float = 0.3, size: int = 300) -> list[tuple[str, str]]:
    """(English word, German word) pairs by Dice coefficient over sentence co-occurrence."""
    en_count, de_count, both = collections.Counter(), collections.Counter(), collections.Counter()
    for en, de in train:
        e = {w.lower() for w in WORD.findall(en) if len(w) >= 4 and w.lower() not in STOP and not w.isdigit()}
        d = {w for w in WORD.findall(de)[1:] if len(w) >= 3 and w[0].isupper()}  # nouns: what glossaries hold
        en_count.update(e)
        de_count.update(d)
        both.update((a, b) for a in e for b in d)
    best: dict[str, tuple[float, str]] = {}
    for (a, b), c in both.items():
        if en_count[a] < min_count or de_count[b] < min_count:
            continue
        dice = 2 * c / (en_count[a] + de_count[b])
        if dice >= min_dice and dice > best.get(a, (0.0, ""))[0]:
            best[a] = (dice, b)
    ranked = sorted(best.items(), key=lambda kv: -en_count[kv[0]])[:size]
    return sorted((a, b) for a, (_d, b) in ranked)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", action="store_true", help="mine the glossaries from the training data")
    p.add_argument("--sets", default="tatoeba,multi30k")
    p.add_argument("--model", default=str(ROOT / "models" / "en-de"))
    p.add_argument("--lines", type=int, default=0, help="dev sentences per set (0: all that hold a term)")
    p.add_argument("--backend", default="auto")
    args = p.parse_args()
    (HERE / "glossary").mkdir(exist_ok=True)
    if args.build:
        for name in args.sets.split(","):
            terms = mine(pairs(SETS[name][0]))
            out = HERE / "glossary" / f"{name}-en-de.tsv"
            out.write_text("source\ttarget\tnote\n" + "".join(f"{a}\t{b}\tmined (Dice)\n" for a, b in terms),
                           encoding="utf-8")
            print(f"{out}: {len(terms)} terms")
        return 0

    from sacrebleu.metrics import CHRF

    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary, find_terms, target_present
    from nmt_desktop.core.documents.translate_document import DocumentOptions, translate_lines

    translator = Translator.load(args.model, backend=args.backend)
    cfg = DecodeConfig()
    print("| set | sentences | term uses | success without | success with | chrF without | chrF with | "
          "s/sentence without | s/sentence with | forced decodes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.sets.split(","):
        glossary = Glossary.read(HERE / "glossary" / f"{name}-en-de.tsv")
        dev = []
        for en, de in pairs(SETS[name][1]):
            wanted = [m.term for m in find_terms(en, glossary.terms) if target_present(de, m.term)]
            if wanted:
                dev.append((en, de, wanted))
        if args.lines:
            dev = dev[: args.lines]
        sources = [en for en, _de, _t in dev]
        references = [de for _en, de, _t in dev]
        plain_options = DocumentOptions(automatic_dnt=False)
        with_options = DocumentOptions(glossary=glossary, automatic_dnt=False)
        started = time.perf_counter()
        plain = [b.target for b in translate_lines(translator, sources, cfg, plain_options).blocks]
        plain_s = time.perf_counter() - started
        started = time.perf_counter()
        result = translate_lines(translator, sources, cfg, with_options)
        with_s = time.perf_counter() - started
        forced = [b.target for b in result.blocks]
        uses = sum(len(t) for *_x, t in dev)
        ok_plain = sum(target_present(out, term) for out, (*_x, terms) in zip(plain, dev) for term in terms)
        ok_with = sum(target_present(out, term) for out, (*_x, terms) in zip(forced, dev) for term in terms)
        chrf = CHRF()
        c_plain = chrf.corpus_score(plain, [references]).score
        c_with = chrf.corpus_score(forced, [references]).score
        print(f"| {name} | {len(dev)} | {uses} | {100 * ok_plain / uses:.1f}% | {100 * ok_with / uses:.1f}% | "
              f"{c_plain:.1f} | {c_with:.1f} | {plain_s / len(dev):.4f} | {with_s / len(dev):.4f} | "
              f"{result.report.repairs} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
