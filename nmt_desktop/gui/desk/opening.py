"""File > Post-edit file…: choose a bilingual file and open the desk on it; a file that does not read is one
sentence in the main window's error box, and the app stays up. The desk gets the main window's current model
for its machine suggestions (used when it translates the file's languages: suggestions.model_fits)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from nmt_desktop.core.bilingual import BILINGUAL_SUFFIXES
from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.memory.entries import TranslationMemoryError

if TYPE_CHECKING:
    from nmt_desktop.gui.window_api import WindowApi

FILTER = f"Bilingual files ({' '.join('*' + s for s in BILINGUAL_SUFFIXES)})"


def open_desk(window: "WindowApi", path: str | Path | None = None):
    """Open the desk on `path` (asked for when None); the desk window, or None when cancelled or refused."""
    from nmt_desktop.gui.desk.desk_window import DeskWindow

    if path is None:
        path, _ = QFileDialog.getOpenFileName(window, "Post-edit file", "", FILTER)
        if not path:
            return None
    try:
        desk = DeskWindow(Path(path), parent=window, translator=window.translate_panel.translator,
                          model_languages=_languages(window), main_window=window)
    except (DocumentError, TranslationMemoryError, OSError) as exc:
        window.show_error(str(exc), "Post-edit file")
        return None
    desk.show()
    return desk


def _languages(window: "WindowApi") -> tuple[str, str]:
    info = window.info
    return (info.src_lang, info.tgt_lang) if info is not None else ("", "")
