"""AER, precision and recall of the alignment readings and of every attribution method read as an alignment
(issue 31), on the gold sets at hand, with a breakdown by sentence length for the default.

    .venv/bin/python benchmarks/alignment_methods.py                        # the three sets below, every row
    .venv/bin/python benchmarks/alignment_methods.py --concat 3 --only readings   # + pairs joined 3 by 3

Sets (PREFIX.src / .tgt / .gold, whitespace tokens, `i-j` sure / `i?j` possible): the WPT en-fr trial set
(../shared/data/align/wpt-en-fr.dev, models/en-fr), benchmarks/align/en-de.dev and en-de.long (models/en-de).
Each side is truecased for the model, as `nmt-desktop align` does, and the gold target forced through the
decoder (`Translator.score_batch`). Every row reads the same scored pairs: readings of core/analysis/
alignment.py (the default, issue 23's default, ablations), then each name of `attribution.METHODS` as a
reading (its source attribution's positive part, merged to words, with the default's prior, identical words
and decision; and with mutual links not grown). `--concat K` adds each set's pairs joined K at a time (gold
shifted), a length check on pairs whose parts are known: a reading that holds up on long input keeps the
links it finds in each part. Evidence is computed once per reading and shared by its decisions, so the ms
column is the evidence's cost per sentence (1 thread unless --threads).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from nmt_desktop.core.analysis import alignment as al  # noqa: E402
from nmt_desktop.core.analysis.truecase import truecaser  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SETS = {"en-fr WPT dev": ("models/en-fr", "../shared/data/align/wpt-en-fr.dev"),
        "en-de.dev": ("models/en-de", "benchmarks/align/en-de.dev"),
        "en-de.long": ("models/en-de", "benchmarks/align/en-de.long")}
BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 10_000))  # source words
BEST, ISSUE23 = al.BEST_METHOD, al.ISSUE23_METHOD


def read_set(prefix: Path) -> tuple[list[str], list[str], list[al.GoldLinks]]:
    src = prefix.with_name(prefix.name + ".src").read_text(encoding="utf-8").splitlines()
    tgt = prefix.with_name(prefix.name + ".tgt").read_text(encoding="utf-8").splitlines()
    gold = [al.parse_gold(g, f"{prefix}.gold line {n}")
            for n, g in enumerate(prefix.with_name(prefix.name + ".gold").read_text(encoding="utf-8").splitlines(), 1)]
    if not len(src) == len(tgt) == len(gold):
        raise SystemExit(f"{prefix}: {len(src)} sources, {len(tgt)} targets, {len(gold)} gold lines")
    return src, tgt, gold


def joined(src: list[str], tgt: list[str], gold: list[al.GoldLinks], k: int):
    """Pairs joined k at a time (a last incomplete group dropped), gold links shifted to the joined words."""
    out_s, out_t, out_g = [], [], []
    for start in range(0, len(src) - k + 1, k):
        g, di, dj = al.GoldLinks(), 0, 0
        for n in range(start, start + k):
            g.sure |= {(i + di, j + dj) for i, j in gold[n].sure}
            g.possible |= {(i + di, j + dj) for i, j in gold[n].possible}
            di, dj = di + len(src[n].split()), dj + len(tgt[n].split())
        out_s.append(" ".join(src[start:start + k]))
        out_t.append(" ".join(tgt[start:start + k]))
        out_g.append(g)
    return out_s, out_t, out_g


def rows_of(only: str) -> list[tuple[str, al.AlignMethod]]:
    """(label, method): readings first (default, issue 23's, ablations), then every attribution method."""
    out: list[tuple[str, al.AlignMethod]] = []
    if only in ("all", "readings"):
        out += [("masking + attention 0.75, prior 1.5, mutual grown 0.4 (**default**)", BEST),
                ("  same, mutual not grown", replace(BEST, grow=0.0)),
                ("  same, argmax", replace(BEST, decision="argmax", grow=0.0)),
                ("  same, grown 0.3", replace(BEST, grow=0.3)),
                ("  same, grown 0.5", replace(BEST, grow=0.5)),
                ("  same, prior 1", replace(BEST, prior=1.0)),
                ("  same, attention 0.5", replace(BEST, attention_weight=0.5)),
                ("issue 23 default: masking + attention 0.5, prior 1, mutual", ISSUE23),
                ("  issue 23 evidence, mutual grown 0.4", replace(ISSUE23, grow=0.4)),
                ("masking alone, prior 1.5, mutual grown 0.4", replace(BEST, attention_weight=0.0)),
                ("predict, all layers, prior 1.5, mutual grown 0.4", replace(BEST, reading="predict")),
                ("shift, all layers, prior 1.5, mutual grown 0.4", replace(BEST, reading="shift")),
                ("old default: predict, last layer, argmax", al.OLD_METHOD)]
    if only in ("all", "attributions"):
        for name in al.attribution_methods():
            out.append((f"{name} (default decision)", replace(BEST, reading=name)))
            out.append((f"{name}, mutual not grown", replace(BEST, reading=name, grow=0.0)))
    return out


def evidence_key(method: al.AlignMethod) -> al.AlignMethod:
    return replace(method, decision="argmax", threshold=0.3, grow=0.0)


def score_rows(tr: Translator, src: list[str], tgt: list[str], gold: list[al.GoldLinks],
               rows: list[tuple[str, al.AlignMethod]], ig_steps: int) -> tuple[list[str], dict[str, list]]:
    scored = tr.score_batch(list(zip(src, tgt)))
    cache: dict[al.AlignMethod, tuple[list, float]] = {}
    lines, links_of = [], {}
    for label, method in rows:
        key = evidence_key(method)
        if key not in cache:
            options = {"steps": ig_steps} if method.reading == "integrated_gradients" else None
            t0 = time.perf_counter()
            ev = [al.word_evidence(s, method, a.split(), b.split(), translator=tr, attribution_options=options)
                  for s, a, b in zip(scored, src, tgt)]
            cache[key] = (ev, (time.perf_counter() - t0) / len(src) * 1000)
        ev, ms = cache[key]
        pred = [al.decide(m, method) for m in ev]
        links_of[label] = pred
        r = al.alignment_error(pred, gold)
        lines.append(f"| {label} | {100 * r.aer:.1f} | {100 * r.precision:.1f} | {100 * r.recall:.1f} | "
                     f"{r.links} | {ms:.0f} |")
    return lines, links_of


def buckets(src: list[str], gold: list[al.GoldLinks], preds: dict[str, list]) -> list[str]:
    out = []
    for label, pred in preds.items():
        for lo, hi in BUCKETS:
            idx = [n for n, s in enumerate(src) if lo <= len(s.split()) <= hi]
            if not idx:
                continue
            r = al.alignment_error([pred[n] for n in idx], [gold[n] for n in idx])
            span = f"{lo}-{hi}" if hi < 10_000 else f"{lo}+"
            out.append(f"| {label} | {span} | {len(idx)} | {100 * r.aer:.1f} | {100 * r.precision:.1f} | "
                       f"{100 * r.recall:.1f} |")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    p.add_argument("--only", choices=("all", "readings", "attributions"), default="all")
    p.add_argument("--concat", type=int, default=0, metavar="K", help="also each set's pairs joined K at a time")
    p.add_argument("--ig-steps", type=int, default=4, help="integrated gradients' steps (its own default: 16)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    rows = rows_of(args.only)
    models: dict[str, Translator] = {}
    for name in args.sets:
        model, prefix = SETS[name]
        tr = models.setdefault(model, Translator.load(str(ROOT / model)))
        src, tgt, gold = read_set(ROOT / prefix)
        src = list(map(truecaser(tr.tokenizers.source), src))
        tgt = list(map(truecaser(tr.tokenizers.target), tgt))
        variants = [(name, src, tgt, gold)]
        if args.concat > 1:
            variants.append((f"{name} joined {args.concat} by {args.concat}", *joined(src, tgt, gold, args.concat)))
        for label, s, t, g in variants:
            t0 = time.perf_counter()
            lines, preds = score_rows(tr, s, t, g, rows, args.ig_steps)
            words = sum(len(x.split()) for x in s) / len(s)
            print(f"\n{label}: {len(s)} pairs, {words:.1f} source words on average, {sum(len(x.sure) for x in g)} sure / "
                  f"{sum(len(x.possible) for x in g)} possible links ({time.perf_counter() - t0:.0f} s)\n")
            print("| reading | AER % | precision % | recall % | links | ms / sentence (evidence) |")
            print("|---|---:|---:|---:|---:|---:|")
            print("\n".join(lines))
            chosen = {k: v for k, v in preds.items() if k.startswith(("masking + attention 0.75", "issue 23 default"))}
            if chosen:
                print("\n| reading | source words | pairs | AER % | precision % | recall % |")
                print("|---|---|---:|---:|---:|---:|")
                print("\n".join(buckets(s, g, chosen)))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
