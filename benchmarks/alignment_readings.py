"""AER, precision and recall of every alignment reading on a gold word-alignment set (issue 23).

    python benchmarks/alignment_readings.py -m models/en-fr --data ../shared/data/align/wpt-en-fr.dev
    python benchmarks/alignment_readings.py -m models/en-de --data benchmarks/align/en-de.dev

`--data PREFIX` names PREFIX.src, PREFIX.tgt (whitespace-tokenized, one sentence per line) and PREFIX.gold
(`i-j` sure, `i?j` possible, 0-based). The gold target is forced through the decoder (Translator.score)
and each reading of core/analysis/alignment.py aligns the whitespace tokens; prints a Markdown table
(one row per reading, layer and decision) for benchmarks/RESULTS.md, the old default and the new one
marked. The rows are issue 23's (not grown, prior and attention weight at issue 23's default), then the
default of issue 31 (mutual links grown); benchmarks/alignment_methods.py has issue 31's rows.
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


def read_set(prefix: str, gold_path: str | None = None) -> tuple[list[str], list[str], list[al.GoldLinks]]:
    src = Path(prefix + ".src").read_text(encoding="utf-8").splitlines()
    tgt = Path(prefix + ".tgt").read_text(encoding="utf-8").splitlines()
    gold_path = gold_path or prefix + ".gold"
    gold_lines = Path(gold_path).read_text(encoding="utf-8").splitlines()
    if not len(src) == len(tgt) == len(gold_lines):
        raise SystemExit(f"{prefix}: {len(src)} sources, {len(tgt)} targets, {len(gold_lines)} gold lines")
    return src, tgt, [al.parse_gold(g, f"{gold_path} line {n}") for n, g in enumerate(gold_lines, 1)]


BEST = al.ISSUE23_METHOD  # the rows below are issue 23's; al.BEST_METHOD is added at the end


def methods(layers: int, heads: int) -> list[tuple[str, al.AlignMethod]]:
    """(label, method): every attention reading per layer and all layers, with and without the prior and identical
    words (at the default's strength), then masking alone and with attention."""
    out = []
    plain = dict(prior=0.0, identical=False, grow=0.0)
    for reading in al.ATTENTION_READINGS:
        for layer in [*range(layers), None]:
            for decision in ("argmax", "mutual"):
                base = al.AlignMethod(reading=reading, layer=layer, decision=decision, **plain)
                where = "all" if layer is None else f"L{layer + 1}"
                out.append((f"{reading} | {where} | {decision}", base))
                out.append((f"{reading} | {where} | {decision} + prior + identical",
                            replace(base, prior=BEST.prior, identical=True)))
    for decision in ("argmax", "mutual"):
        base = al.AlignMethod(reading="masking", decision=decision, attention_weight=0.0, **plain)
        out.append((f"masking | - | {decision}", base))
        out.append((f"masking | - | {decision} + prior", replace(base, prior=BEST.prior)))
        out.append((f"masking | - | {decision} + prior + identical", replace(base, prior=BEST.prior, identical=True)))
        out.append((f"masking + attention | all | {decision} + prior + identical",
                    replace(base, prior=BEST.prior, identical=True, attention_weight=BEST.attention_weight)))
    out.append(("masking + attention | all | mutual grown + prior + identical (issue 31)", al.BEST_METHOD))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-m", "--model", required=True)
    p.add_argument("--data", required=True, help="PREFIX of PREFIX.src, PREFIX.tgt, PREFIX.gold")
    p.add_argument("--gold", help="the gold file when it is not PREFIX.gold (a cased copy of a set shares its gold)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--truecase", action="store_true",
                   help="restore capitals the model's vocabulary knows (core/analysis/truecase.py) before scoring")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    src, tgt, gold = read_set(args.data, args.gold)
    tr = Translator.load(args.model)
    if args.truecase:
        src = list(map(truecaser(tr.tokenizers.source), src))
        tgt = list(map(truecaser(tr.tokenizers.target), tgt))
    t0 = time.perf_counter()
    scored = tr.score_batch(list(zip(src, tgt)))
    score_s = time.perf_counter() - t0
    L, H = tr.config.decoder_layers, tr.config.n_heads
    old, best = replace(al.OLD_METHOD, layer=L - 1), al.default_method(tr.card, L)
    rows = []
    for label, method in methods(L, H):
        t0 = time.perf_counter()
        pred = [al.align(s, method, a.split(), b.split(), translator=tr) for s, a, b in zip(scored, src, tgt)]
        seconds = time.perf_counter() - t0
        r = al.alignment_error(pred, gold)
        mark = " **default**" if method == best else " (old default)" if method == old else ""
        rows.append(f"| {label}{mark} | {100 * r.aer:.1f} | {100 * r.precision:.1f} | {100 * r.recall:.1f} | "
                    f"{seconds / len(src) * 1000:.0f} |")
    print(f"{Path(args.model).name} on {Path(args.data).name}{' truecased' if args.truecase else ''} ({len(src)} sentences, {sum(len(g.sure) for g in gold)} "
          f"sure / {sum(len(g.possible) for g in gold)} possible links; scoring {score_s:.1f} s, "
          f"{args.threads} thread(s))\n")
    print("| reading \\| heads \\| decision | AER % | precision % | recall % | ms / sentence |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
