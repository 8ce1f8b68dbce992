"""A very large real EPUB through the real `nmt-desktop translate-file`, timed by phase (issue 42: the hidden
corpus's largest file is a 745k-character EPUB, and no file may take over 300 s).

The book is an EPUB 3 publication unpacked in a folder (IDPF/epub3-samples' `30/moby-dick`, fetched, never
committed) zipped here into a valid .epub (`mimetype` first and stored, the rest deflated) under the git-ignored
benchmarks/out/large_epub/, or any .epub given. It prints the book's characters (the text of the blocks the app
translates), then runs the CLI in a child process (bundled models/en-de unless --model) with the phases timed
around the CLI's own functions: open (parse the package), load (the model), prepare (protect spans, split
sentences), decode (the batched translation and the kept-span repair: constraints.translate_constrained),
transfer (alignment and inline transfer per block), save (write the package); with the load average before
and after, since the machine is shared, and the child's CPU seconds: at `--threads 1` close to the wall time one
idle core would take, the figure to extrapolate from on a busy machine. `--profile OUT` runs the child under
cProfile instead (slower; no phases).

    git clone --depth 1 https://github.com/IDPF/epub3-samples /tmp/epub3     # 1,219,059 characters of text
    nice -n 19 .venv/bin/python benchmarks/large_epub.py /tmp/epub3/30/moby-dick --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out" / "large_epub"
SUMMARY = re.compile(r": (\d+) sentences in (\d+) blocks translated in ([\d.]+) s")

# The child: the real CLI (nmt_desktop.cli.main.main), its phases timed by wrapping the functions it calls.
CHILD = r"""
import json, sys, time
from collections import defaultdict
phases = defaultdict(float)
def timed(module, name, phase):
    original = getattr(module, name)
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            phases[phase] += time.perf_counter() - t
    setattr(module, name, wrapper)
import nmt_desktop.core.documents.formats as formats
import nmt_desktop.core.documents.translate_document as td
import nmt_desktop.cli.translate_file as tf
import nmt_desktop.cli.common as common
timed(formats, "open_document", "open")
timed(tf, "load_translator", "load")
timed(td, "_prepare", "prepare")
timed(td, "translate_constrained", "decode")
timed(td, "_block_result", "transfer")
timed(td, "save_translation", "save")
from nmt_desktop.cli.main import main
code = main(sys.argv[2:])
json.dump(phases, open(sys.argv[1], "w"))
sys.exit(code)
"""


def pack(folder: Path, target: Path) -> Path:
    """An unpacked EPUB folder zipped as readers expect: `mimetype` first, stored; every other file deflated."""
    if not (folder / "mimetype").is_file() or not (folder / "META-INF" / "container.xml").is_file():
        sys.exit(f"{folder} is not an unpacked EPUB: it needs a mimetype file and META-INF/container.xml")
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as z:
        z.write(folder / "mimetype", "mimetype", compress_type=zipfile.ZIP_STORED)
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "mimetype"):
            z.write(path, path.relative_to(folder).as_posix(), compress_type=zipfile.ZIP_DEFLATED)
    return target


def characters(epub: Path) -> tuple[int, int]:
    """The characters and blocks of the text the app translates (the document adapter's blocks)."""
    sys.path.insert(0, str(ROOT))
    from nmt_desktop.core.documents.formats import open_document

    blocks = open_document(epub).blocks
    return sum(len(b.text) for b in blocks), len(blocks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("book", help="an unpacked EPUB folder (zipped here) or an .epub file")
    ap.add_argument("--model", default=str(ROOT / "models" / "en-de"))
    ap.add_argument("--threads", help="passed as --threads (default: the CLI's own policy)")
    ap.add_argument("--profile", metavar="OUT", help="run the child under cProfile, writing OUT (no phases)")
    args = ap.parse_args()
    book = Path(args.book)
    epub = pack(book, OUT / f"{book.name}.epub") if book.is_dir() else book
    chars, blocks = characters(epub)
    print(f"{epub}: {chars:,} characters in {blocks:,} blocks, {epub.stat().st_size:,} bytes")
    out = OUT / f"{epub.stem}.translated.epub"
    OUT.mkdir(parents=True, exist_ok=True)
    cli = [str(epub), "-o", str(out), "-m", args.model] + (["--threads", args.threads] if args.threads else [])
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        phases_file = f.name
    if args.profile:
        command = [sys.executable, "-m", "cProfile", "-o", args.profile, "-m", "nmt_desktop", "translate-file", *cli]
    else:
        command = [sys.executable, "-c", CHILD, phases_file, "translate-file", *cli]
    load_before = os.getloadavg()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    load_after = os.getloadavg()
    print(done.stderr.strip()[-2000:])
    if done.returncode:
        sys.exit(f"translate-file exited {done.returncode}")
    found = SUMMARY.search(done.stderr)
    sentences = int(found.group(1)) if found else 0
    print(f"sentences {sentences:,}; {seconds:.1f} s in the child ({sentences / seconds:.1f} sentences/s); "
          f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min), "
          f"{load_after[1]:.2f} (5 min); {os.cpu_count()} cores; the child's CPU time {cpu:.1f} s (with "
          f"--threads 1, about what it takes on one idle core)")
    if not args.profile:
        phases = json.loads(Path(phases_file).read_text())
        print("phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
    os.unlink(phases_file)
    with zipfile.ZipFile(out) as z:  # the output reopens: a valid zip with mimetype first
        assert z.namelist()[0] == "mimetype", "mimetype is not the first member"
    print(f"output {out}: {out.stat().st_size:,} bytes, {characters(out)[0]:,} characters")


if __name__ == "__main__":
    main()
