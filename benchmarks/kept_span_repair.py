"""Kept spans repaired one sentence at a time against together (decoding/lockstep.py), on the same document.

Issue 42: a 304-sentence .docx took 178 s, "187 of 198 kept spans forced in" one sentence and one decode at
a time. This runs `translate_document` (in process, 1 thread) on document_threads.py's generated .docx (~300
Multi30k sentences with numbers, prices, dates, versions and URLs) and, with --html, its HTML page, in two
modes, interleaved round by round so a busy machine's load falls on both alike:
- `alone`: every sentence's repair run on its own (`lockstep.run_alone`, the code before: each decode one call);
- `together`: the shipped path (`lockstep.run_lockstep`: a batch's repairs in lockstep, their decodes batched).
It reports seconds, sentences/s, decode calls and the ratio, and checks that both give the same document text.

    nice -n 19 .venv/bin/python benchmarks/kept_span_repair.py --rounds 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from document_threads import build_docx, build_html  # noqa: E402


def run(source: Path, mode: str, translator, cfg) -> tuple[float, int, int, list[str]]:
    """Seconds, sentences, translate_units calls and the translated texts of one run in `mode`."""
    from unittest import mock

    from nmt_desktop.core.decoding import lockstep
    from nmt_desktop.core.documents import constraints
    from nmt_desktop.core.documents.formats import open_document
    from nmt_desktop.core.documents.translate_document import translate_document

    calls = [0]
    real = translator.translate_units

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    def alone(tr, procedures, batch_size=32):
        return [lockstep.run_alone(tr, p) for p in procedures]

    patches = [mock.patch.object(translator, "translate_units", counted)]
    if mode == "alone":
        patches.append(mock.patch.object(constraints, "run_lockstep", alone))
    for p in patches:
        p.start()
    try:
        start = time.perf_counter()
        result = translate_document(translator, open_document(source), cfg)
        seconds = time.perf_counter() - start
    finally:
        for p in patches:
            p.stop()
    return seconds, result.sentences, calls[0], [block.target for block in result.blocks]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--html", action="store_true", help="the HTML page too")
    parser.add_argument("--beam", type=int, default=1)
    args = parser.parse_args()

    import os

    import torch

    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import bundled_models_dir

    torch.set_num_threads(1)
    translator = Translator.load(bundled_models_dir() / "en-de")
    cfg = DecodeConfig(attention=True, alternatives=0, beam_size=args.beam)
    with tempfile.TemporaryDirectory() as tmp:
        documents = [Path(tmp) / "report.docx"]
        build_docx(documents[0])
        if args.html:
            documents.append(Path(tmp) / "article.html")
            build_html(documents[1])
        print(f"load average at start: {os.getloadavg()[0]:.1f}")
        for source in documents:
            seconds: dict[str, list[float]] = {"alone": [], "together": []}
            texts: dict[str, list[str]] = {}
            for _ in range(args.rounds):
                for mode in ("alone", "together"):
                    s, sentences, calls, texts[mode] = run(source, mode, translator, cfg)
                    seconds[mode].append(s)
                    print(f"{source.name} {mode}: {s:.1f} s, {sentences} sentences, {sentences / s:.2f} sentences/s, "
                          f"{calls} decode calls", flush=True)
            same = texts["alone"] == texts["together"]
            a, t = statistics.median(seconds["alone"]), statistics.median(seconds["together"])
            print(f"{source.name}: median alone {a:.1f} s, together {t:.1f} s: {a / t:.2f}x; same text: {same}")
        print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
