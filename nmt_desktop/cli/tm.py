"""The `tm` command: the translation memory (core/memory/): `tm import FILE...` (TMX; XLIFF and PO, confirmed
segments only), `tm lookup TEXT` (exact and fuzzy matches with their score and the words that differ),
`tm export -o FILE.tmx`, `tm stats`. Each takes `--tm PATH` (default: the user's memory in the data folder)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from nmt_desktop.cli.common import CLIError, UsageError, fix_arg, stdin_lines, utf8_stdout


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser("tm", parents=[common], help="the translation memory: import, look up, export, stats",
                       description="The translation memory: confirmed segment pairs per language pair in one SQLite "
                                   "file (default: the user's memory; --tm PATH another), found again exactly or "
                                   "fuzzily (a score 0-100 and the words that differ). translate-file --tm reuses it.")
    actions = p.add_subparsers(title="actions", metavar="ACTION", dest="action")
    memory = argparse.ArgumentParser(add_help=False)
    memory.add_argument("--tm", metavar="PATH", help="the memory file (default: the user's memory)")
    languages = argparse.ArgumentParser(add_help=False)
    languages.add_argument("--source", metavar="CODE", help="source language (en also reads en-US)")
    languages.add_argument("--target", metavar="CODE", help="target language")

    i = actions.add_parser("import", parents=[common, memory, languages], help="add TMX, XLIFF or PO files",
                           description="Add the segment pairs of TMX files (every pair of languages, or the one "
                                       "--source/--target name) and of XLIFF and PO files (confirmed segments only; "
                                       "--source/--target where the file names no languages). A segment already in "
                                       "the memory is merged, not repeated; the import commits every 2,000 "
                                       "segments, so one cut short keeps what it had committed.")
    i.add_argument("files", nargs="+", metavar="FILE")
    lookup = actions.add_parser("lookup", parents=[common, memory, languages], help="find a text's matches",
                                description="Exact and fuzzy matches of TEXT (or of each stdin line without TEXT), "
                                            "best first: score 0-100 (100: the same source), source, target and "
                                            "the words of the memory's source that differ from TEXT.")
    lookup.add_argument("text", nargs="?", metavar="TEXT")
    lookup.add_argument("--min", type=float, default=50.0, metavar="SCORE", dest="min_score",
                        help="the lowest score shown (default 50)")
    lookup.add_argument("--limit", type=int, default=5, metavar="N", help="matches shown per text (default 5)")
    lookup.add_argument("--json", action="store_true", help="one JSON object per text")
    export = actions.add_parser("export", parents=[common, memory, languages], help="write the memory as TMX 1.4",
                                description="Write the memory's entries (every pair, or those --source/--target "
                                            "name) as a TMX 1.4 file, inline tags as bpt/ept/ph.")
    export.add_argument("-o", "--output", required=True, metavar="FILE.tmx")
    stats = actions.add_parser("stats", parents=[common, memory], help="what the memory holds",
                               description="Entries per language pair, the file and its size.")
    stats.add_argument("--json", action="store_true")
    return p


def run(args: argparse.Namespace) -> int:
    from nmt_desktop.core.memory import TranslationMemory, TranslationMemoryError

    if args.action is None:
        raise UsageError("tm needs an action: import, lookup, export or stats (see 'nmt-desktop tm --help')")
    utf8_stdout()
    path = Path(fix_arg(args.tm)) if args.tm else None
    try:
        with TranslationMemory(path, create=args.action == "import") as memory:
            return {"import": _import, "lookup": _lookup, "export": _export, "stats": _stats}[args.action](memory, args)
    except TranslationMemoryError as exc:
        raise CLIError(str(exc)) from None


def _segments(n: int) -> str:
    return f"{n} segment{'s' if n != 1 else ''}"


def _bar(unit: str, total: int | None = None):
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, leave=False)


def _import(memory, args: argparse.Namespace) -> int:
    from nmt_desktop.core.memory.importing import import_files

    bar = _bar("segment")
    started = time.perf_counter()
    try:
        done = import_files(memory, [Path(fix_arg(f)) for f in args.files], args.source, args.target,
                            bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - started
    for item in done:
        print(f"{item.path}: {_segments(item.added)} added, {item.merged} already in the memory (merged)", file=sys.stderr)
    total = sum(d.added + d.merged for d in done)
    print(f"{memory.path}: {_segments(total)} in {seconds:.1f} s; the memory holds {memory.count()}", file=sys.stderr)
    return 0


def _pair(memory, args: argparse.Namespace, action: str):
    """The pair --source/--target name; without them the memory's only pair (UsageError when it holds several)."""
    from nmt_desktop.core.memory import Pair

    pairs = list(memory.pairs())
    if args.source and args.target:
        return Pair.of(args.source, args.target)
    chosen = [p for p in pairs if (not args.source or Pair.of(args.source, p.target).covers(p))
              and (not args.target or Pair.of(p.source, args.target).covers(p))]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        raise CLIError(f"{memory.path}: no entries for that language pair" if pairs else f"{memory.path} is empty")
    names = ", ".join(str(p) for p in chosen)
    raise UsageError(f"the memory holds several language pairs ({names}): name one with --source and --target to {action}")


def _lookup(memory, args: argparse.Namespace) -> int:
    pair = _pair(memory, args, "look up")
    texts = [fix_arg(args.text)] if args.text is not None else stdin_lines(sys.stdin.buffer)
    for text in texts:
        matches = memory.search(text, pair, args.limit, args.min_score)
        if args.json:
            print(json.dumps({"text": text, "source_language": pair.source, "target_language": pair.target,
                              "matches": [_match_json(m) for m in matches]}, ensure_ascii=False), flush=True)
            continue
        if not matches:
            print(f"no match of {args.min_score:g} or more: {text}")
        for m in matches:
            print(f"{m.score:5.1f}  {m.entry.source}\n       {m.entry.target}")
            if m.differences:
                print("       differs: " + "; ".join(d.describe() for d in m.differences))
        sys.stdout.flush()
    return 0


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _match_json(match) -> dict:
    e = match.entry
    return {"score": round(match.score, 1), "exact": match.exact, "source": e.source, "target": e.target,
            "source_language": e.pair.source, "target_language": e.pair.target, "origin": e.origin,
            "context": e.context, "document": e.document, "created": _iso(e.created), "changed": _iso(e.changed),
            "differences": [{"op": d.op, "memory": d.memory, "text": d.text} for d in match.differences]}


def _export(memory, args: argparse.Namespace) -> int:
    from nmt_desktop.core.memory.tmx_file import write_tmx

    out = Path(fix_arg(args.output))
    if not out.parent.is_dir():
        raise CLIError(f"cannot write {out}: folder {out.parent} does not exist")
    pair = _pair(memory, args, "export") if args.source or args.target else None  # None: every pair
    sources = {p.source for p in ([p for p, _ in memory.pairs_for(pair)] if pair else memory.pairs())}
    bar = _bar("segment", memory.count(pair))
    try:
        written = write_tmx(out, memory.entries(pair), sources.pop() if len(sources) == 1 else "*all*",
                            bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    print(f"{out}: {_segments(written)} written (TMX 1.4)", file=sys.stderr)
    return 0


def _stats(memory, args: argparse.Namespace) -> int:
    stats = memory.stats()
    size = sum(p.stat().st_size for p in memory.path.parent.glob(memory.path.name + "*") if p.is_file())
    if args.json:
        print(json.dumps({"path": str(memory.path), "bytes": size, "entries": sum(s.entries for s in stats),
                          "pairs": [{"source_language": s.pair.source, "target_language": s.pair.target,
                                     "entries": s.entries, "distinct_sources": s.sources,
                                     "first": _iso(s.first) if s.entries else None,
                                     "last": _iso(s.last) if s.entries else None} for s in stats]}))
        return 0
    print(f"{memory.path} ({size / 1e6:.1f} MB)")
    if not stats:
        print("  empty")
    for s in stats:
        print(f"  {s.pair}: {s.entries} segments ({s.sources} distinct sources), last changed "
              f"{_iso(s.last) if s.entries else '-'}")
    return 0
