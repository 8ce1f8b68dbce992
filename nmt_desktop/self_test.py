"""`nmt-desktop --self-test [-m MODEL]`: prove that an installation (above all a packaged one) works.

Loads the default bundled model (or MODEL), translates a few fixed sentences, renders the real
attention view offscreen and checks the image is not blank, checks that the language identifier (whose
model is a data file the package must carry) tells Chinese from English, then prints one JSON report on stdout:
versions, the model, whether the compiled decoding step is used, each translation with its time,
the grid image's size, and `"ok": true` (exit 0). Any failure gives the same report with
`"ok": false` and a one-line `"error"` (exit 1).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nmt_desktop import __version__

if TYPE_CHECKING:
    from PySide6.QtGui import QImage

    from nmt_desktop.core.decoding.results import Translation

SENTENCES = ("I love you.", "Thank you very much.", "Where is the station?")
GRID_SIZE = (900, 600)  # the attention view's size when grabbed
MIN_COLOURS = 8  # a painted grid of heatmaps has many colours; a blank widget one or two
CHINESE = "我今天很累，想早点睡觉。"  # what the language identifier must tell from English


class SelfTestError(Exception):
    """A check failed; the message is the report's `error`."""


def _needs_offscreen() -> bool:
    """Linux without an X11 or Wayland display (a server, CI): Qt must render offscreen."""
    return (sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
            and not os.environ.get("WAYLAND_DISPLAY"))


def _versions() -> dict[str, str]:
    import numpy
    import PySide6
    import pyqtgraph
    import tokenizers
    import torch

    return {"nmt_desktop": __version__, "python": platform.python_version(), "torch": torch.__version__,
            "PySide6": PySide6.__version__, "pyqtgraph": pyqtgraph.__version__,
            "tokenizers": tokenizers.__version__, "numpy": numpy.__version__}


def _model_path(model: str | None) -> Path:
    from nmt_desktop.core.locations import bundled_models_dir, default_model_path, resolve_model_path

    if model is not None:
        return resolve_model_path(model)
    path = default_model_path()
    if path is None:
        raise SelfTestError(f"no bundled model in {bundled_models_dir()}: add one there or pass -m MODEL")
    return path


def _distinct_colours(image: QImage) -> int:
    """How many different pixel colours a QImage has."""
    import numpy as np
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGB32)
    width, height = image.width(), image.height()
    if width == 0 or height == 0:
        return 0
    row_words = image.bytesPerLine() // 4
    pixels = np.frombuffer(image.constBits(), dtype=np.uint32, count=row_words * height)
    return int(np.unique(pixels.reshape(height, row_words)[:, :width]).size)


def _render_grid(translation: Translation) -> dict[str, int]:
    """Show `translation` in the app's AttentionView offscreen; the grabbed grid's size and colours."""
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from nmt_desktop.gui.attention.grid import AttentionView
    from nmt_desktop.gui.lifetime import running_app

    with running_app():  # the view is deleted and the app closed down before the process ends
        view = AttentionView()
        view.resize(*GRID_SIZE)
        view.set_translation(translation)
        view.show()
        for _ in range(5):
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        image = view.grid.grab().toImage()
        view.close()
    colours = _distinct_colours(image)
    if colours < MIN_COLOURS:
        raise SelfTestError(f"the attention grid rendered blank ({colours} colours in "
                            f"{image.width()}x{image.height()} pixels)")
    return {"width": image.width(), "height": image.height(), "colours": colours}


def _identify_language() -> str:
    """The language identifier's reading of `CHINESE` for an English model: "zh" (core/decoding/source_language.py)."""
    from nmt_desktop.core.decoding.source_language import guess_language

    guess = guess_language(CHINESE, "en")
    found = guess.best if guess is not None else "nothing"
    if found != "zh":
        raise SelfTestError(f"the language identifier took Chinese for {found}")
    return found


def _documents(translator: Any) -> dict[str, int]:
    """A .docx (made with python-docx, so its templates are in the bundle), a .md and a .srt translated
    and saved through the document adapters (core/documents/), which are imported by name: a frozen app
    that lost one fails here. Returns each format's block count."""
    import tempfile

    import docx

    from nmt_desktop.core.documents.formats import open_document
    from nmt_desktop.core.documents.translate_document import save_translation, translate_document

    counts = {}
    with tempfile.TemporaryDirectory() as folder:
        word = docx.Document()
        paragraph = word.add_paragraph("I saw the ")
        paragraph.add_run("black dog").bold = True
        paragraph.add_run(" in the garden.")
        word.save(Path(folder) / "a.docx")
        (Path(folder) / "a.md").write_text("# Hello\n\nI love **you**.\n", encoding="utf-8")
        (Path(folder) / "a.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nThank you.\n", encoding="utf-8")
        for name in ("a.docx", "a.md", "a.srt"):
            document = open_document(Path(folder) / name)
            out = save_translation(translate_document(translator, document), Path(folder) / f"out.{name}")
            again = open_document(out)
            if len(again.blocks) != len(document.blocks) or again.blocks[-1].text == document.blocks[-1].text:
                raise SelfTestError(f"the {name[2:]} document did not translate")
            counts[name[2:]] = len(document.blocks)
    return counts


def run(model: str | None = None) -> dict[str, Any]:
    """The self-test report (never raises: a failure is `ok: false` with `error`)."""
    from nmt_desktop.core.locations import is_frozen

    report: dict[str, Any] = {"ok": False, "frozen": is_frozen(), "executable": sys.executable,
                              "platform": platform.platform()}
    try:
        if _needs_offscreen():
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        report["qt_platform"] = os.environ.get("QT_QPA_PLATFORM", "default")
        report["versions"] = _versions()
        from nmt_desktop.core.config import DecodeConfig
        from nmt_desktop.core.decoding.translator import Translator

        path = _model_path(model)
        start = time.perf_counter()
        translator = Translator.load(path)
        report["model"] = {"name": translator.name, "path": str(path),
                           "load_ms": round(1000 * (time.perf_counter() - start), 1)}
        from nmt_desktop.core.decoding.backends import native_library

        report["native_step"] = native_library.load()  # the compiled decoding step (core/decoding/backends/native_library.py)
        results, translation = [], None
        for sentence in SENTENCES:
            start = time.perf_counter()
            translation = translator.translate(sentence, DecodeConfig(beam_size=4))
            ms = round(1000 * (time.perf_counter() - start), 1)
            results.append({"source": sentence, "translation": translation.text, "ms": ms})
        report["translations"] = results
        empty = [r["source"] for r in results if not r["translation"].strip()]
        if empty:
            raise SelfTestError(f"empty translation for {empty[0]!r}")
        report["grid"] = _render_grid(translation)
        report["language_id"] = _identify_language()
        report["documents"] = _documents(translator)
        report["ok"] = True
    except Exception as exc:  # noqa: BLE001 - every failure becomes the report's one-line error
        message = " ".join(str(exc).split())
        report["error"] = message if isinstance(exc, SelfTestError) else f"{type(exc).__name__}: {message}"
    return report


def main(model: str | None = None) -> int:
    """Print the report as one JSON line; 0 if everything worked, else 1."""
    report = run(model)
    print(json.dumps(report, ensure_ascii=False), flush=True)
    return 0 if report["ok"] else 1
