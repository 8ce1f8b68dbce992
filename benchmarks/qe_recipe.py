"""How well the trust signals of `nmt-desktop qe` (core/analysis/quality.py) do, against the plain perplexity.

    python benchmarks/qe_recipe.py -m models/en-de [--lines N]

Dev data built at run time from `../shared/data` and the project's own Wikipedia-style set:
- **captions**: Multi30k val (en -> de), **tatoeba**: the en-de dev set, **wiki**: benchmarks/qe/wiki-en-de.tsv.
For each source: the model's own greedy translation (its sentence chrF against the reference is the quality
to rank), the reference, another sentence's reference (a seeded permutation: **detached**) and the
reference with 40% of its words cut from the middle (**omission**). Every pair goes through
`estimate_pairs`, as `qe` runs it. Printed (Markdown): Kendall tau-b between `qe` of the model's own
translation and its sentence chrF; AUROC for telling the reference from the detached one and from the cut
one (higher qe = the reference); the same for the sentence perplexity (lower = better) and each feature;
and how often the cut references' flags name a source word (omission recall proxy) against the full ones.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nmt_desktop.core.analysis.quality import estimate_pairs  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b (ties in either variable corrected), O(n^2) pairs."""
    dx = np.sign(x[:, None] - x[None, :])  # (n, n)
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(len(x), 1)
    dx, dy = dx[upper], dy[upper]
    return float((dx * dy).sum() / np.sqrt((dx != 0).sum() * (dy != 0).sum()))


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    """P(a positive scores above a negative), ties counted half (Mann-Whitney)."""
    above = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
    return float(above / (len(positive) * len(negative)))


def cut_middle(text: str, share: float = 0.4) -> str:
    words = text.split()
    k = round(share * len(words))
    start = (len(words) - k) // 2
    return " ".join(words[:start] + words[start + k:])


def read_set(name: str, lines: int) -> tuple[list[str], list[str]]:
    if name == "captions":
        src = (DATA / "multi30k" / "val.en").read_text(encoding="utf-8").splitlines()
        ref = (DATA / "multi30k" / "val.de").read_text(encoding="utf-8").splitlines()
        return src[:lines], ref[:lines]
    path = DATA / "tatoeba" / "en-de" / "dev.tsv" if name == "tatoeba" else ROOT / "benchmarks" / "qe" / "wiki-en-de.tsv"
    pairs = [line.split("\t")[:2] for line in path.read_text(encoding="utf-8").splitlines()[:lines]]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def measure(translator: Translator, name: str, lines: int) -> dict[str, object]:
    from sacrebleu.metrics import CHRF

    sources, refs = read_set(name, lines)
    started = time.perf_counter()
    own = [t.text for t in translator.translate_batch(sources, DecodeConfig(), batch_size=32, whole_lines=True)]
    chrf = CHRF()
    own_chrf = np.array([chrf.sentence_score(o, [r]).score for o, r in zip(own, refs)])
    order = list(range(len(refs)))
    random.Random(0).shuffle(order)
    detached = [refs[j] if j != i else refs[(i + 1) % len(refs)] for i, j in enumerate(order)]
    cut = [cut_middle(r) for r in refs]
    sets = {kind: estimate_pairs(translator, list(zip(sources, targets)))
            for kind, targets in (("own", own), ("ref", refs), ("detached", detached), ("cut", cut))}
    seconds = time.perf_counter() - started

    def column(kind: str, key: str) -> np.ndarray:
        if key == "qe":
            return np.array([e.qe for e in sets[kind]])
        if key == "perplexity":
            return -np.array([e.perplexity for e in sets[kind]])  # lower perplexity = better
        return np.array([e.features[key] for e in sets[kind]])

    rows = {}
    for key in ("qe", "perplexity", "mean_logprob", "neg_entropy", "support", "length_ratio"):
        rows[key] = (kendall_tau_b(column("own", key), own_chrf),
                     auroc(column("ref", key), column("detached", key)), auroc(column("ref", key), column("cut", key)))
    flagged_full = np.mean([bool(e.untranslated) for e in sets["ref"]])
    flagged_cut = np.mean([bool(e.untranslated) for e in sets["cut"]])
    return {"name": name, "n": len(sources), "rows": rows, "flagged_full": flagged_full, "flagged_cut": flagged_cut,
            "seconds_per_pair": seconds / (4 * len(sources)), "mean_chrf": float(own_chrf.mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-m", "--model", default=str(ROOT / "models" / "en-de"))
    ap.add_argument("--lines", type=int, default=1000, help="pairs per set (default 1000; wiki has 200)")
    ap.add_argument("--sets", default="captions,wiki,tatoeba")
    args = ap.parse_args()
    translator = Translator.load(args.model)
    results = [measure(translator, name, args.lines) for name in args.sets.split(",")]
    print("| set | pairs | signal | Kendall tau (own translation vs its chrF) | AUROC detached | AUROC 40% cut |")
    print("|---|---:|---|---:|---:|---:|")
    for r in results:
        for key, (tau, det, cut) in r["rows"].items():
            label = {"qe": "**qe**", "perplexity": "sentence perplexity"}.get(key, f"feature {key}")
            print(f"| {r['name']} | {r['n']} | {label} | {tau:.3f} | {det:.3f} | {cut:.3f} |")
    print()
    print("| set | own chrF (mean) | lines with an untranslated flag: reference | 40% cut | seconds per pair |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['name']} | {r['mean_chrf']:.1f} | {r['flagged_full']:.1%} | {r['flagged_cut']:.1%} | "
              f"{r['seconds_per_pair']:.4f} |")


if __name__ == "__main__":
    main()
