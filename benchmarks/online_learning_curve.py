"""The adaptation curve of online learning's shipped gate (chrF per block of 50 segments), scored from the lines an
`online_learning.py --counts ... --json F` run keeps: the static model, the parent with kNN alone, and the learned
weights for a segment with a memory match and at least as many words as the memory's shortest tenth before it
(`OnlineLearner.wants_learned`), else the parent with kNN.

    .venv/bin/python benchmarks/online_learning_curve.py benchmarks/out/len_test_s0.jsonl --split test
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive import REPO, curve, domain_pairs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("jsonl", type=Path)
    p.add_argument("--split", choices=("dev", "test"), default="test")
    p.add_argument("--domain", default="parliament-en-de")
    args = p.parse_args(argv)
    args.parliament, args.segments = REPO / "data_local" / "opennmt", 0
    pairs = domain_pairs(args.domain, args.split, args)
    refs, words = [t for _, t in pairs], [len(s.split()) for s, _ in pairs]
    run = json.loads(args.jsonl.read_text(encoding="utf-8").splitlines()[-1])
    lines = run["lines"]

    def tenth(i: int) -> int:
        ordered = sorted(words[:i])
        return ordered[int(0.1 * (len(ordered) - 1))] if i >= 10 else 0

    gated = [learned if count >= 1 and words[i] >= tenth(i) else knn
             for i, (learned, knn, count) in enumerate(zip(lines["adaptive"], lines["parent_knn"], lines["counts"]))]
    for name, values in (("static", run["curve_static"]), ("kNN alone", curve(lines["parent_knn"], refs)),
                         ("learned, gated", curve(gated, refs))):
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in values) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
