"""Sentences per second of `nmt-desktop translate-file` per thread setting, on a real-looking HTML page and a
.docx full of numbers and URLs (issue 42: an HTML page took 9 s idle, 112 s beside two busy processes with the
default threads and 19 s with `--threads 1`).

Both documents are generated here from /work/shared/data (never committed): the .docx has ~300 Multi30k
sentences, most with a number, a price, a date, a version or a URL; the HTML page is an article of ~150
Tatoeba sentences in headings, paragraphs, a list and a table, with links and emphasis. Each setting
(`default` = no --threads, then 1, 2) runs the real CLI in a child process, the settings interleaved round by
round so that a busy machine's load falls on all of them alike; the figure is the median of the rounds'
sentences/s (the CLI's own summary: sentences and seconds of translate + save), with its ratio to the first setting.
`--profile` prints the top of a cProfile of translate_document on the .docx (in process, 1 thread).
`--file PATH` (repeat) adds real documents, e.g. the corpus's largest (tests/real_documents/files/poi-drawing.docx,
tika-big-preamble.html, epub3-wasteland.epub); `--only files` runs those alone.

Idle:            nice -n 19 .venv/bin/python benchmarks/document_threads.py --rounds 3
Under contention (the lead engineer's run; this script never starts stress-ng itself):
    stress-ng --cpu 2 --timeout 900 & nice -n 19 .venv/bin/python benchmarks/document_threads.py --rounds 3 --label "stress-ng --cpu 2"
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
SUMMARY = re.compile(r": (\d+) sentences in (\d+) blocks translated in ([\d.]+) s")


def _with_spans(sentence: str, rng: random.Random) -> str:
    """A sentence given a number, a price, a date, a version or a URL (kept spans, as real reports have)."""
    extra = rng.choice([f"in {rng.randint(1990, 2030)}", f"for {rng.randint(2, 99)}.{rng.randint(10, 99)} EUR",
                        f"on {rng.randint(1, 28)}.{rng.randint(1, 12)}.{rng.randint(2000, 2030)}",
                        f"(see https://example.org/{rng.choice(['docs', 'faq', 'report'])}/{rng.randint(1, 999)})",
                        f"with version {rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                        f"at {rng.randint(3, 250)} km/h", ""])
    return f"{sentence.rstrip('.')} {extra}.".replace(" .", ".") if extra else sentence


def build_docx(path: Path, sentences: int = 300, seed: int = 42) -> None:
    import docx

    rng = random.Random(seed)
    lines = [s.strip() for s in (DATA / "multi30k" / "train.en").read_text(encoding="utf-8").splitlines()[:5000]]
    chosen = [_with_spans(s.rstrip(".") + ".", rng) for s in rng.sample(lines, sentences)]
    document = docx.Document()
    document.add_heading("Quarterly report 2024", 1)
    for n in range(0, len(chosen), 3):
        paragraph = document.add_paragraph()
        paragraph.add_run(" ".join(chosen[n: n + 3]))
    document.save(path)


def build_html(path: Path, sentences: int = 150, seed: int = 7) -> None:
    from html import escape

    rng = random.Random(seed)
    pairs = (DATA / "tatoeba" / "en-de" / "dev.tsv")
    if not pairs.exists():
        pairs = next((DATA / "tatoeba" / "en-de").glob("*"))
    lines = [line.split("\t")[0].strip() for line in pairs.read_text(encoding="utf-8").splitlines() if "\t" in line]
    chosen = [escape(_with_spans(s, rng)) for s in rng.sample(lines, sentences)]
    body, n = [], 0
    while n < len(chosen):
        kind = n // 10 % 4
        if kind == 0:
            body.append(f"<h2>{chosen[n]}</h2>")
            n += 1
        elif kind == 1:
            body.append("<ul>" + "".join(f"<li>{s}</li>" for s in chosen[n: n + 4]) + "</ul>")
            n += 4
        elif kind == 2:
            cells = chosen[n: n + 4]
            body.append("<table><tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr></table>")
            n += 4
        else:
            words = chosen[n].split(" ", 2)
            linked = f'<a href="https://example.org/a">{words[0]}</a> <em>{" ".join(words[1:])}</em>'
            body.append(f"<p>{linked} {' '.join(chosen[n + 1: n + 3])}</p>")
            n += 3
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Everyday phrases</title></head>"
            "<body><article>\n" + "\n".join(body) + "\n</article></body></html>\n")
    path.write_text(page, encoding="utf-8")


def run_cli(source: Path, out: Path, threads: str, model: str) -> tuple[int, float]:
    """(sentences, seconds) from translate-file's summary line."""
    command = [sys.executable, "-m", "nmt_desktop", "translate-file", str(source), "-o", str(out), "-m", model]
    if threads != "default":
        command += ["--threads", threads]
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=1800)
    found = SUMMARY.search(done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"{source.name} --threads {threads}: {done.stderr.strip()[-400:]}")
    return int(found.group(1)), float(found.group(3))


def profile(source: Path, top: int) -> None:
    import cProfile
    import pstats

    import torch

    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.formats import open_document
    from nmt_desktop.core.documents.translate_document import translate_document
    from nmt_desktop.core.locations import bundled_models_dir

    torch.set_num_threads(1)
    translator = Translator.load(bundled_models_dir() / "en-de")
    profiler = cProfile.Profile()
    profiler.enable()
    result = translate_document(translator, open_document(source), DecodeConfig(attention=True, alternatives=0))
    profiler.disable()
    print(f"\nprofile of translate_document on {source.name} ({result.sentences} sentences, "
          f"{sum(o.kept for o in result.report.outcomes)} kept spans), top {top} by cumulative time:")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="default,1,2", help="settings to compare (default = no --threads)")
    parser.add_argument("--model", default="en-de")
    parser.add_argument("--only", choices=["html", "docx", "files"], help="one of the two documents, or only --file's")
    parser.add_argument("--file", action="append", default=[], type=Path,
                        help="a real document to run too (repeat), e.g. tests/real_documents/files/poi-drawing.docx")
    parser.add_argument("--label", default="idle", help="what else ran on the machine, for the table")
    parser.add_argument("--profile", action="store_true", help="cProfile translate_document on the .docx instead")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        documents = {"html": folder / "page.html", "docx": folder / "report.docx"}
        build_html(documents["html"])
        build_docx(documents["docx"])
        if args.profile:
            profile(documents["docx"], args.top)
            return
        names = [] if args.only == "files" else [args.only] if args.only else list(documents)
        for path in args.file:
            documents[path.name] = path.resolve()
            names.append(path.name)
        settings = args.threads.split(",")
        rates: dict[tuple[str, str], list[float]] = {}
        counts: dict[str, int] = {}
        for _round in range(args.rounds):
            for name in names:
                for threads in settings:
                    source = documents[name]
                    sentences, seconds = run_cli(source, folder / f"out{source.suffix}", threads, args.model)
                    counts[name] = sentences
                    rates.setdefault((name, threads), []).append(sentences / seconds)
        print(f"\n{args.label}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end, "
              f"{args.rounds} rounds interleaved, median sentences/s (ratio to --threads {settings[0]}):\n")
        print("| document | sentences | " + " | ".join(f"--threads {t}" for t in settings) + " |")
        print("|---|---|" + "---|" * len(settings))
        for name in names:
            base = statistics.median(rates[(name, settings[0])])
            cells = [f"{statistics.median(rates[(name, t)]):.1f} ({statistics.median(rates[(name, t)]) / base:.2f})"
                     for t in settings]
            print(f"| {name} | {counts[name]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
