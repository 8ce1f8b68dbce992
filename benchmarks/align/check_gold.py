#!/usr/bin/env python3
"""Check a gold word-alignment set in the `.src` / `.tgt` / `.gold` format of this folder.

    python benchmarks/align/check_gold.py                      # checks en-de.dev next to this file
    python benchmarks/align/check_gold.py PREFIX [PREFIX ...]  # e.g. ../shared/data/align/wpt-en-fr.dev
    python benchmarks/align/check_gold.py --show [--pair N]    # print each pair as a token table
    python benchmarks/align/check_gold.py --no-case-check ../shared/data/align/wpt-en-fr.dev

Checks: the three files have the same number of lines; no empty sentence; tokens separated by
single spaces; every line lower-cased (unless --no-case-check: the WPT en-fr set keeps some
capitals, e.g. "I", "Bill C - 49"); every link is `i-j` (sure) or `i?j` (possible) with i inside
the source sentence's token count and j inside the target's; no link given twice (also not once
as sure and once as possible). Where PREFIX.cased.{src,tgt} exist (the same text in ordinary
casing), they must lower-case to PREFIX.{src,tgt} exactly, so that PREFIX.gold serves both.
Exits 1 and lists every problem when one is found.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "en-de.dev"
LINK = re.compile(r"^(\d+)([-?])(\d+)$")


def read_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text += "\n"
    return text.split("\n")[:-1] if text else []


def parse_links(line: str) -> list[tuple[int, int, bool]]:
    """`i-j` / `i?j` tokens -> (i, j, sure); raises ValueError on a malformed token."""
    out = []
    for tok in line.split():
        m = LINK.match(tok)
        if not m:
            raise ValueError(f"malformed link {tok!r}")
        out.append((int(m.group(1)), int(m.group(3)), m.group(2) == "-"))
    return out


def check(prefix: Path, case_check: bool = True) -> list[str]:
    """Every problem found in PREFIX.{src,tgt,gold}, as readable lines (empty: all good)."""
    files = {ext: Path(f"{prefix}.{ext}") for ext in ("src", "tgt", "gold")}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        return [f"missing file: {m}" for m in missing]
    src, tgt, gold = (read_lines(files[e]) for e in ("src", "tgt", "gold"))
    problems = []
    if not (len(src) == len(tgt) == len(gold)):
        problems.append(f"line counts differ: src {len(src)}, tgt {len(tgt)}, gold {len(gold)}")
    for n, (s, t, g) in enumerate(zip(src, tgt, gold)):
        where = f"line {n + 1}"
        for side, line in (("src", s), ("tgt", t)):
            if not line.strip():
                problems.append(f"{where}: empty {side} sentence")
            if case_check and line != line.lower():
                problems.append(f"{where}: {side} not lower-cased: {line!r}")
            if line != " ".join(line.split()):
                problems.append(f"{where}: {side} tokens not separated by single spaces")
        ns, nt = len(s.split()), len(t.split())
        try:
            links = parse_links(g)
        except ValueError as e:
            problems.append(f"{where}: {e}")
            continue
        seen: dict[tuple[int, int], bool] = {}
        for i, j, sure in links:
            if not 0 <= i < ns:
                problems.append(f"{where}: source index {i} out of range (0..{ns - 1})")
            if not 0 <= j < nt:
                problems.append(f"{where}: target index {j} out of range (0..{nt - 1})")
            if (i, j) in seen:
                problems.append(f"{where}: link {i},{j} given twice")
            seen[(i, j)] = sure
    for side, lower in (("src", src), ("tgt", tgt)):
        cased_path = Path(f"{prefix}.cased.{side}")
        if not cased_path.is_file():
            continue
        cased = read_lines(cased_path)
        if len(cased) != len(lower):
            problems.append(f"{cased_path.name}: {len(cased)} lines, {side} has {len(lower)}")
        for n, (c, low) in enumerate(zip(cased, lower)):
            if c.lower() != low:
                problems.append(f"line {n + 1}: {cased_path.name} does not lower-case to the {side} line")
    return problems


def counts(prefix: Path) -> tuple[int, int, int]:
    """(sentence pairs, sure links, possible-only links)."""
    gold = read_lines(Path(f"{prefix}.gold"))
    sure = possible = 0
    for g in gold:
        for _, _, s in parse_links(g):
            sure += s
            possible += not s
    return len(gold), sure, possible


def show(prefix: Path, only: int | None = None) -> None:
    """Each pair as a table: every source token with its links (`=` sure, `~` possible),
    then the target tokens that have no link at all."""
    src = read_lines(Path(f"{prefix}.src"))
    tgt = read_lines(Path(f"{prefix}.tgt"))
    gold = read_lines(Path(f"{prefix}.gold"))
    for n, (s, t, g) in enumerate(zip(src, tgt, gold)):
        if only is not None and n != only:
            continue
        sw, tw = s.split(), t.split()
        links = parse_links(g)
        print(f"#{n}  {s}\n     {t}")
        for i, w in enumerate(sw):
            cells = [("=" if sure else "~") + f"{tw[j]}({j})"
                     for a, j, sure in sorted(links, key=lambda x: x[1]) if a == i]
            print(f"  {i:3d} {w:<18} {' '.join(cells) if cells else '.'}")
        linked = {j for _, j, _ in links}
        free = [f"{w}({j})" for j, w in enumerate(tw) if j not in linked]
        print(f"      target unaligned: {' '.join(free) if free else '-'}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("prefixes", nargs="*", type=Path, default=[DEFAULT])
    ap.add_argument("--show", action="store_true", help="print each pair as a token table")
    ap.add_argument("--pair", type=int, help="with --show: only this 0-based pair")
    ap.add_argument("--no-case-check", action="store_true", help="allow capitals in .src/.tgt")
    args = ap.parse_args(argv)
    bad = 0
    for prefix in args.prefixes:
        problems = check(prefix, case_check=not args.no_case_check)
        if problems:
            bad += 1
            print(f"{prefix}: {len(problems)} problem(s)")
            for p in problems:
                print(f"  {p}")
            continue
        if args.show:
            show(prefix, args.pair)
        pairs, sure, possible = counts(prefix)
        print(f"{prefix}: OK, {pairs} sentence pairs, {sure} sure links, {possible} possible links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
