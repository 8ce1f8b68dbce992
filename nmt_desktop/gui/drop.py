"""Drag and drop onto the main window: what a dropped file means.

A folder or a .zip is a model: it loads through the Models tab's load path (a bad model gets the same
one-sentence error as File > Open model). A .txt file opens File > Translate text file… on it (the whole
file is translated there, with progress and Save, rather than pasted into the source box, which is for
short text). Anything else is refused with one sentence in the status bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QMimeData

TEXT_SUFFIXES = (".txt",)
MODEL_SUFFIXES = (".zip",)


@dataclass(frozen=True)
class Drop:
    """What to do with a drop: kind "model" or "text" with its path, or "refused" with the sentence why."""

    kind: str
    path: Path | None = None
    message: str = ""


def classify(mime: QMimeData) -> Drop:
    if not mime.hasUrls():
        return Drop("refused", message="Drop a model folder, a model .zip or a .txt file onto the window")
    urls = mime.urls()
    if len(urls) != 1:
        return Drop("refused", message=f"{len(urls)} items dropped: drop one model folder or one .txt file at a time")
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
    return Drop("refused", message=f"Cannot open {path.name}: drop a model folder, a model .zip or a .txt file")
