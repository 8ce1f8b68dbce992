"""The finish of a translation in the attention grid: `AttentionView.set_translation` of the translation
that just streamed, with the paint it causes, in ms (issue 30: the finished translation extends what streamed
instead of being rebuilt and repainted). Offscreen, in process: the grid is fed as the Translate tab feeds it
(`begin`, then `append_step` for every streamed step), then the finished `Translation` is handed over and
the events are processed until it is painted. Runs on the tree on PYTHONPATH (the old tree's view lives in
gui/attention_view.py, the new one's in gui/attention/grid.py), so the same script measures both:

    for t in /tmp/before .; do PYTHONPATH=$t python benchmarks/finish_repaint.py -m en-de --json; done
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-m", "--model", default="en-de")
    p.add_argument("--text", default="The old man next to the station lives in a small house with his two dogs.")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    import torch
    from PySide6.QtWidgets import QApplication

    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import resolve_model_path
    try:
        from nmt_desktop.gui.attention.grid import AttentionView
    except ImportError:  # the tree before issue 30
        from nmt_desktop.gui.attention_view import AttentionView

    torch.set_num_threads(1)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    tr = Translator.load(str(resolve_model_path(a.model)))
    out = {"model": a.model, "layers": tr.config.decoder_layers, "heads": tr.config.n_heads}
    for name, cfg in (("greedy", DecodeConfig()), ("beam", DecodeConfig(beam_size=5))):
        view = AttentionView()
        view.resize(1200, 800)
        view.show()
        times = []
        for i in range(a.repeats + 2):
            stream = tr.stream(a.text, cfg)
            steps = list(stream)
            view.begin(stream.result.source_tokens, tr.config.decoder_layers, tr.config.n_heads)
            for step in steps:
                view.append_step(step.piece, step.cross_attention)
            app.processEvents()
            t0 = time.perf_counter()
            view.set_translation(stream.result)
            app.processEvents()  # the paint the finish causes
            if i >= 2:  # two warm-ups: the grid built, the caches warm
                times.append((time.perf_counter() - t0) * 1000)
        out[name] = {"finish_ms_median": round(statistics.median(times), 3), "finish_ms_max": round(max(times), 3),
                     "target_tokens": len(stream.result.target_tokens)}
        view.close()
    if a.json:
        print(json.dumps(out))
    else:
        for name in ("greedy", "beam"):
            print(f"{a.model} {name}: finish {out[name]['finish_ms_median']} ms (median), max {out[name]['finish_ms_max']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
