"""Drag and drop onto the main window: what a dropped file means.

A folder or a .zip is a model: it loads through the Models tab's load path (a bad model gets the same
one-sentence error as File > Open model). A document the core reads (formats.SUFFIXES: .docx, .odt, .pptx,
.xlsx, .html, .md, .srt, .vtt, .epub, .txt) opens File > Translate file… on it (the whole file is translated
there, formatting kept, with progress and Save, rather than pasted into the source box, which is for short
text). Anything else is refused with one sentence in the status bar (naming what may be dropped).

Files may be dropped anywhere on the window: `install_file_drops` puts a `FileDropFilter` on the window and
on every child that accepts drops itself (the source box would paste the file's path as text), so the window
takes dropped files there too; dragged text still goes where it is dropped. The filter sits on those widgets
only, not on the application, where it would run for every event of the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QWidget

from nmt_desktop.core.documents.formats import SUFFIXES

TEXT_SUFFIXES = SUFFIXES  # every document format the Translate file dialog opens
MODEL_SUFFIXES = (".zip",)


@dataclass(frozen=True)
class Drop:
    """What to do with a drop: kind "model" or "text" with its path, or "refused" with the sentence why."""

    kind: str
    path: Path | None = None
    message: str = ""


def classify(mime: QMimeData) -> Drop:
    if not mime.hasUrls():
        return Drop("refused", message="Drop a model folder, a model .zip or a document onto the window")
    urls = mime.urls()
    if len(urls) != 1:
        return Drop("refused", message=f"{len(urls)} items dropped: drop one model folder or one document at a time")
    url = urls[0]
    if not url.isLocalFile():
        return Drop("refused", message=f"{url.toString()} is not a file on this computer: download it first")
    path = Path(url.toLocalFile())
    if path.is_dir():
        return Drop("model", path)
    if not path.exists():
        return Drop("refused", message=f"{path.name} does not exist")
    suffix = path.suffix.lower()
    if suffix in MODEL_SUFFIXES:
        return Drop("model", path)
    if suffix in TEXT_SUFFIXES:
        return Drop("text", path)
    return Drop("refused", message=f"Cannot open {path.name}: drop a model folder, a model .zip or a document (.docx, .odt, .pptx, .xlsx, .html, .md, .srt, .vtt, .epub, .txt)")


_DRAG_EVENTS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop)


def install_file_drops(window: QWidget, handle: Callable[[QMimeData], None]) -> FileDropFilter:
    """Let `window` take files dropped anywhere on it (call once its widgets are built); `handle(mime)` runs."""
    window.setAcceptDrops(True)
    drops = FileDropFilter(window, handle)
    for widget in [window, *window.findChildren(QWidget)]:
        if widget.acceptDrops():
            widget.installEventFilter(drops)
    return drops


class FileDropFilter(QObject):
    """An event filter: a drag of files over a filtered widget of `window` is the window's; on the drop
    `handle(mime)` runs."""

    def __init__(self, window: QWidget, handle: Callable[[QMimeData], None]):
        super().__init__(window)
        self._window, self._handle = window, handle

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt name
        if event.type() not in _DRAG_EVENTS or not isinstance(obj, QWidget) or obj.window() is not self._window:
            return False
        if not isinstance(event, QDropEvent) or not event.mimeData().hasUrls():
            return False
        event.acceptProposedAction()
        if event.type() == QEvent.Type.Drop:
            self._handle(event.mimeData())
        return True
