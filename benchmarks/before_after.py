"""Before vs after a change, in the same run: a benchmark of this tree against the same benchmark of an older one.

A refactor must not make decoding or the app slower, and these machines are noisy, so both trees are
measured in one session, alternating rounds (before, after, before, after, ...) so that load hits both
alike. `--before DIR` is a checkout of the old commit (e.g. `git worktree add /tmp/before <commit>`);
each round runs that tree's own copy of the benchmark with `PYTHONPATH=DIR` (its scripts import its own
package) and this tree's copy with `PYTHONPATH=.`, both with `--json`, and the table gives the median
of every figure over the rounds and after / before.

    python benchmarks/before_after.py --before /tmp/before --rounds 3 vs_peers -- --configs small,base --threads 1 --no-hf --quick
    python benchmarks/before_after.py --before /tmp/before --rounds 3 gui_latency -- --repeats 3

vs_peers figures: ms per generated token (latency rows) and sentences per second (throughput rows) per
engine, and the ratio of ours to CTranslate2 in the same process (the peer of each run). gui_latency
figures: the medians of its summary (first / last token painted, start-up, stalls).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def figures(bench: str, result: dict) -> dict[str, float]:
    """The comparable numbers of one benchmark's --json output, by a readable key."""
    out: dict[str, float] = {}
    if bench == "vs_peers":
        for r in result["rows"]:
            key = f"{r['config']} t{r['threads']} {r['measure']} beam{r['beam']} {r['engine']}"
            if r["measure"] == "latency":
                out[key + " ms/token"] = r["ms_per_token"]
            else:
                out[key + " sent/s"] = r["sentences_per_s"]
        for r in result.get("ratios", []):
            out[f"{r['config']} t{r['threads']} {r['measure']} beam{r['beam']} {r['ratio']}"] = r["value"]
        return out
    def walk(prefix: str, node: object) -> None:
        if isinstance(node, dict):
            if "median" in node and isinstance(node["median"], (int, float)):
                out[prefix] = float(node["median"])
                return
            for k, v in node.items():
                walk(f"{prefix} {k}".strip(), v)
    walk("", result["summary"])
    return out


def run_once(bench: str, tree: Path, args: list[str]) -> dict[str, float]:
    script = tree / "benchmarks" / f"{bench}.py"
    env = dict(os.environ, PYTHONPATH=str(tree))
    child = subprocess.run([sys.executable, str(script), *args, "--json"], capture_output=True, text=True,
                           env=env, cwd=tree)
    if child.returncode != 0:
        raise SystemExit(f"{script} failed (exit {child.returncode}): {child.stderr[-2000:]}")
    return figures(bench, json.loads(child.stdout[child.stdout.index("{"):]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, type=Path, help="a checkout of the old commit")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of each tree (default 3)")
    p.add_argument("bench", choices=("vs_peers", "gui_latency"))
    p.add_argument("args", nargs=argparse.REMAINDER, help="after --: the benchmark's own options")
    a = p.parse_args(argv)
    extra = [x for x in a.args if x != "--"]
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for i in range(a.rounds):
        for name, tree in (("before", a.before.resolve()), ("after", ROOT)):
            print(f"round {i + 1}/{a.rounds}: {name}", file=sys.stderr, flush=True)
            runs[name].append(run_once(a.bench, tree, extra))
    keys = [k for k in runs["after"][0] if all(k in r for r in runs["before"] + runs["after"])]
    print(f"| {a.bench} ({a.rounds} rounds, medians) | before | after | after / before |")
    print("|---|---:|---:|---:|")
    for k in keys:
        b = statistics.median(r[k] for r in runs["before"])
        f = statistics.median(r[k] for r in runs["after"])
        print(f"| {k} | {b:.3f} | {f:.3f} | {f / b if b else float('nan'):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
