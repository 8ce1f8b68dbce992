"""The desk on a 5,000-segment XLIFF: the seconds until the window is shown against the seconds until its
memory lookups are done, in the same run. Before the lookups moved to a worker thread (issue 44) the window
showed only after all of them; now it shows first and the suggestions fill in.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/desk_large_file.py --work /tmp/desk-large
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SEGMENTS = 5000


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, required=True, help="a new folder for the file, the memory and the journal")
    a = p.parse_args()
    from PySide6.QtWidgets import QApplication

    from nmt_desktop.core.memory import Entry, Pair, TranslationMemory
    from nmt_desktop.gui.desk.desk_window import DeskWindow

    app = QApplication([])
    a.work.mkdir(parents=True, exist_ok=True)
    sources = [f"Segment number {i} of the long file about topic {i % 97}." for i in range(SEGMENTS)]
    units = "\n".join(f'  <unit id="u{i}"><segment><source>{s}</source></segment></unit>'
                      for i, s in enumerate(sources))
    path = a.work / "long.xlf"
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" '
                    f'version="2.0" srcLang="en" trgLang="de">\n <file id="f1">\n{units}\n </file>\n</xliff>\n',
                    encoding="utf-8")
    with TranslationMemory(a.work / "memory.sqlite") as memory:  # every tenth exact, the rest fuzzy
        memory.add([Entry(s, "Segment Nummer", Pair.of("en", "de")) for s in sources[::10]])
    t0 = time.perf_counter()
    window = DeskWindow(path, a.work / "memory.sqlite", a.work / "journal")
    window.show()
    app.processEvents()
    shown = time.perf_counter() - t0
    done: list[float] = []
    window.suggestionsDone.connect(lambda _stopped: done.append(time.perf_counter() - t0))
    while not done:
        app.processEvents()
    print(f"load {os.getloadavg()}: shown after {shown:.2f} s, lookups done after {done[0]:.2f} s "
          f"({done[0] / shown:.0f}x), {len(window.suggestions)} of {SEGMENTS} segments with a memory suggestion")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
