"""What the Translate tab's trust line costs (issue 41): the quality estimate of every sentence of a 90-sentence
text on the bundled en-de model, one sentence at a time as the line checks them, beside the text's own
beam-4 translation. Decides whether the line checks every sentence (it does: in the background, counted).

    OMP_NUM_THREADS=1 python benchmarks/trust_line_cost.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nmt_desktop.core.analysis.quality import estimate_translation  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402

SENTENCES = 90


def main() -> None:
    rows = (ROOT / "benchmarks" / "qe" / "wiki-en-de.tsv").read_text(encoding="utf-8").splitlines()
    sources = [row.split("\t")[0] for row in rows][:SENTENCES]
    translator = Translator.load(ROOT / "models" / "en-de")
    start = time.perf_counter()
    translations = translator.translate_batch(sources, DecodeConfig(beam_size=4), batch_size=32)
    translated = time.perf_counter()
    for translation in translations:
        estimate_translation(translator, translation)
    checked = time.perf_counter()
    print(f"{len(sources)} sentences: translated (beam 4, batches of 32) in {translated - start:.2f} s; "
          f"trust line checked in {checked - translated:.2f} s "
          f"({(checked - translated) / len(sources) * 1000:.0f} ms a sentence)")


if __name__ == "__main__":
    main()
