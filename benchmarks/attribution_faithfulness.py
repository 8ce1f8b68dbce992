"""How faithful each attribution method is (issue 31): comprehensiveness / sufficiency AOPC of every method of
core/analysis/attribution.py, beside a seeded random ranking's and the plain cross-attention's, on the first N
reference pairs of a TSV file, teacher-forced (the given German, not the model's own translation).

Comprehensiveness (higher is better): the mean drop of log p(y_t) when the top 10%..50% source tokens of y_t's
row are replaced by <unk>; sufficiency (lower is better): the drop when only those are kept. Per line the
random ranking is the same for every method (seed 0), so "random" is one number per file.

    python benchmarks/attribution_faithfulness.py -m models/en-de -n 40
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "tatoeba" / "en-de" / "dev.tsv"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-m", "--model", default=str(REPO / "models" / "en-de"))
    p.add_argument("--data", default=str(DEFAULT_DATA), help="source<TAB>reference lines")
    p.add_argument("-n", type=int, default=40, help="first N lines (default 40)")
    p.add_argument("--methods", default=None, help="comma-separated (default: every method)")
    p.add_argument("--ig-steps", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    import numpy as np
    import torch

    from nmt_desktop.core.analysis.attribution import METHODS, attribute, faithfulness
    from nmt_desktop.core.decoding.translator import Translator

    torch.set_num_threads(a.threads)
    methods = a.methods.split(",") if a.methods else list(METHODS)
    tr = Translator.load(a.model)
    pairs = []
    with open(a.data, encoding="utf-8") as f:
        for line in f:
            if len(pairs) == a.n:
                break
            source, _, target = line.rstrip("\n").partition("\t")
            pairs.append((source, target))
    scored = [tr.score(s, t) for s, t in pairs]
    rows: dict[str, dict[str, list[float]]] = {m: {"comp": [], "suff": [], "seconds": []} for m in methods}
    rand: dict[str, list[float]] = {"comp": [], "suff": []}
    started = time.perf_counter()
    for i, translation in enumerate(scored):
        for method in methods:
            options = {"steps": a.ig_steps} if method == "integrated_gradients" else {}
            att = attribute(tr, translation, method, **options)
            faith = faithfulness(tr, translation, att, seed=0)
            rows[method]["comp"].append(faith.aopc_comprehensiveness)
            rows[method]["suff"].append(faith.aopc_sufficiency)
            rows[method]["seconds"].append(att.seconds)
            if method == methods[0]:
                rand["comp"].append(faith.random_aopc_comprehensiveness)
                rand["suff"].append(faith.random_aopc_sufficiency)
        print(f"line {i + 1}/{len(scored)} done, {time.perf_counter() - started:.0f} s", flush=True,
              file=sys.stderr)
    mean = lambda xs: float(np.mean(xs))
    se = lambda xs: float(np.std(xs, ddof=1) / np.sqrt(len(xs))) if len(xs) > 1 else float("nan")
    base = rows.get("attention")
    out = {"model": a.model, "data": a.data, "n": len(scored), "threads": a.threads,
           "target_tokens_mean": statistics.mean(len(t.target_ids) for t in scored),
           "random": {"comprehensiveness_aopc": mean(rand["comp"]), "sufficiency_aopc": mean(rand["suff"])},
           "methods": {m: {"comprehensiveness_aopc": mean(r["comp"]), "sufficiency_aopc": mean(r["suff"]),
                           "comprehensiveness_se": se(r["comp"]), "sufficiency_se": se(r["suff"]),
                           # paired with the attention baseline, line by line: mean difference and its s.e.
                           "comp_minus_attention": None if base is None else
                           (mean(np.subtract(r["comp"], base["comp"])), se(np.subtract(r["comp"], base["comp"]))),
                           "suff_minus_attention": None if base is None else
                           (mean(np.subtract(r["suff"], base["suff"])), se(np.subtract(r["suff"], base["suff"]))),
                           "seconds_per_sentence": mean(r["seconds"])} for m, r in rows.items()}}
    if a.json:
        print(json.dumps(out))
        return 0
    att = out["methods"].get("attention")
    print(f"{Path(a.model).name}, first {out['n']} lines of {a.data} (teacher-forced references, "
          f"{out['target_tokens_mean']:.1f} target tokens on average), {a.threads} thread(s); "
          f"comprehensiveness: higher is better, sufficiency: lower is better; ± one standard error over lines; "
          f"the last two columns: the method minus attention, paired per line")
    print()
    print("| method | comprehensiveness AOPC | sufficiency AOPC | random comp. / suff. | attention comp. / suff. "
          "| seconds / sentence | comp. - attention | suff. - attention |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    pm = lambda pair: "-" if pair is None else f"{pair[0]:+.3f} ± {pair[1]:.3f}"
    rc, rs = out["random"]["comprehensiveness_aopc"], out["random"]["sufficiency_aopc"]
    for m, r in out["methods"].items():
        att_cell = "-" if att is None else f"{att['comprehensiveness_aopc']:.3f} / {att['sufficiency_aopc']:.3f}"
        print(f"| {m} | {r['comprehensiveness_aopc']:.3f} ± {r['comprehensiveness_se']:.3f} "
              f"| {r['sufficiency_aopc']:.3f} ± {r['sufficiency_se']:.3f} | {rc:.3f} / {rs:.3f} "
              f"| {att_cell} | {r['seconds_per_sentence']:.4f} | {pm(r['comp_minus_attention'])} "
              f"| {pm(r['suff_minus_attention'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
