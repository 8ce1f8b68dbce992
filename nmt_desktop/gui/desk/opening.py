"""File > Post-edit file…: choose a bilingual file and open the desk on it; a file that does not read is one
sentence in the main window's error box, and the app stays up."""

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
        desk = DeskWindow(Path(path), parent=window)
    except (DocumentError, TranslationMemoryError, OSError) as exc:
        window.show_error(str(exc), "Post-edit file")
        return None
    desk.show()
    return desk
