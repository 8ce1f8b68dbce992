"""Translation memory lookups (issue 44): ms per lookup at 100k and 1M segments, the word index against a plain
scan (rapidfuzz over every source, the same scorer and cut-off) in the same run, how often the index finds the
scan's best match where that scores 70 or more (a useful fuzzy match), and the import rate (TMX file -> memory, through `import_files`; the TMX itself written by `write_tmx`).

Memories (en-de, built in --work, default a temporary folder): the first 100,000 pairs of Tatoeba en-de train;
1M = every pair of Tatoeba en-de train and Multi30k train (193,179 real pairs) and four perturbed copies of
each, a copy having one word (seeded choice) replaced by a word drawn from the corpus' vocabulary: near
duplicates, which give a lookup many good candidates (harder than distinct text). Queries: Tatoeba en-de dev
sources (held out from train by English sentence, so fuzzy lookups), and as many sources taken from the memory
(exact lookups). Lookup: 5 best, score >= 50. The scan holds every source in a Python list already (its load
time is not counted). A few minutes on one CPU:

    nice -n 19 python benchmarks/tm_lookup.py [--queries 200] [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rapidfuzz import process  # noqa: E402
from rapidfuzz.distance import Levenshtein  # noqa: E402

from nmt_desktop.core.memory import Entry, Pair, TranslationMemory  # noqa: E402
from nmt_desktop.core.memory.importing import import_files  # noqa: E402
from nmt_desktop.core.memory.tmx_file import write_tmx  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EN_DE = Pair("en", "de")


def real_pairs() -> list[tuple[str, str]]:
    rows = [line.rstrip("\n").split("\t")[:2] for line in open(DATA / "tatoeba" / "en-de" / "train.tsv", encoding="utf-8")]
    multi30k = zip((DATA / "multi30k" / "train.en").read_text(encoding="utf-8").splitlines(),
                   (DATA / "multi30k" / "train.de").read_text(encoding="utf-8").splitlines())
    return [(s, t) for s, t in rows] + list(multi30k)


def perturbed(pairs: list[tuple[str, str]], size: int, seed: int = 44) -> list[tuple[str, str]]:
    """`pairs`, then copies with one word replaced by a corpus word, until `size` pairs (see the docstring)."""
    rng = random.Random(seed)
    vocabulary = sorted({w for s, _t in pairs[:50_000] for w in s.split()})
    out, copy = list(pairs[:size]), 0
    while len(out) < size:
        copy += 1
        for source, target in pairs:
            words = source.split()
            words[rng.randrange(len(words))] = rng.choice(vocabulary)
            out.append((" ".join(words), target))
            if len(out) == size:
                break
    return out


def timed(fn, queries: list[str]) -> tuple[list[float], list]:
    times, answers = [], []
    for q in queries:
        started = time.perf_counter()
        answers.append(fn(q))
        times.append((time.perf_counter() - started) * 1000)
    return times, answers


def measure(size: int, pairs: list[tuple[str, str]], dev: list[str], n: int, work: Path) -> dict:
    chosen = perturbed(pairs, size)
    tmx, path = work / f"tm{size}.tmx", work / f"tm{size}.sqlite"
    started = time.perf_counter()
    write_tmx(tmx, (Entry(source, target, EN_DE) for source, target in chosen), "en")
    export_s = time.perf_counter() - started
    started = time.perf_counter()
    with TranslationMemory(path) as memory:
        [done] = import_files(memory, [tmx])
    import_s = time.perf_counter() - started
    rng = random.Random(size)
    fuzzy_queries = rng.sample(dev, n)
    exact_queries = [chosen[i][0] for i in rng.sample(range(len(chosen)), n)]
    with TranslationMemory(path) as memory:
        sources = [e.source for e in memory.entries(EN_DE)]
        memory.search(dev[0], EN_DE)  # the first lookup opens the index pages: not counted
        rows = {}
        for kind, queries in (("fuzzy", fuzzy_queries), ("exact", exact_queries)):
            index_ms, index_found = timed(lambda q: memory.search(q, EN_DE, 5, 50.0), queries)
            scan_ms, scan_found = timed(lambda q: process.extract(q, sources, scorer=Levenshtein.normalized_similarity,
                                                                  limit=5, score_cutoff=0.5), queries)
            useful = [(a, b) for a, b in zip(index_found, scan_found) if b and b[0][1] >= 0.7]
            same = sum(1 for a, b in useful if a and abs(a[0].score - 100 * b[0][1]) < 1e-6)
            rows[kind] = (statistics.median(index_ms), statistics.mean(index_ms), max(index_ms),
                          statistics.median(scan_ms), statistics.mean(scan_ms), f"{same}/{len(useful)}")
    size_mb = sum(p.stat().st_size for p in work.glob(path.name + "*")) / 1e6
    return {"size": size, "stored": done.added, "merged": done.merged, "import_s": import_s, "export_s": export_s,
            "rate": (done.added + done.merged) / import_s, "mb": size_mb, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--work", type=Path, default=None, help="folder for the TMX files and memories")
    args = parser.parse_args()
    pairs = real_pairs()
    dev = list(dict.fromkeys(line.split("\t")[0] for line in
                             (DATA / "tatoeba" / "en-de" / "dev.tsv").read_text(encoding="utf-8").splitlines()))
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        results = [measure(size, pairs, dev, args.queries, work) for size in args.sizes]
    print("| segments | lookups | index ms (median / mean / max) | scan ms (median / mean) | scan / index (mean) "
          "| index finds the scan's best (queries whose best scores >= 70) |")
    print("|---|---|---|---|---|---|")
    for r in results:
        for kind, (i_med, i_mean, i_max, s_med, s_mean, same) in r["rows"].items():
            print(f"| {r['size']:,} | {args.queries} {kind} | {i_med:.1f} / {i_mean:.1f} / {i_max:.1f} | "
                  f"{s_med:.1f} / {s_mean:.1f} | {s_mean / i_mean:.0f}x | {same} |")
    print()
    for r in results:
        print(f"import {r['size']:,} segments: {r['stored']:,} stored, {r['merged']:,} merged, {r['import_s']:.1f} s "
              f"({r['rate']:,.0f} segments/s), memory file {r['mb']:.0f} MB; the TMX written by write_tmx (what "
              f"`tm export` does) in {r['export_s']:.1f} s")


if __name__ == "__main__":
    main()
