"""The Train form's small input widgets: a float typed as text, a path with a Browse… button, and spin boxes
made in one call."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtWidgets import QDoubleSpinBox, QFileDialog, QHBoxLayout, QLineEdit, QPushButton, QSpinBox, QWidget

from nmt_desktop.core.config import ConfigError

CORPUS_FILTER = "Parallel corpora (*.tsv *.txt *.tmx *.tab);;All files (*)"


class FloatEdit(QLineEdit):
    """A float typed as text (learning rates read better as 7e-4 than in a spin box)."""

    def __init__(self, name: str, value: float):
        super().__init__()
        self.name = name
        self.setValue(value)

    def setValue(self, value: float) -> None:  # noqa: N802 - Qt style
        self.setText(repr(float(value)))

    def value(self) -> float:
        try:
            return float(self.text().strip())
        except ValueError:
            raise ConfigError(f"{self.name} must be a number, got {self.text()!r}") from None


class PathRow(QWidget):
    """A path line edit with a Browse… button."""

    def __init__(self, title: str, placeholder: str = "", on_pick: Callable[[], None] | None = None,
                 file_filter: str = CORPUS_FILTER):
        super().__init__()
        self.title = title
        self.file_filter = file_filter
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(placeholder)
        self.button = QPushButton("Browse…")
        self.button.clicked.connect(self._browse)
        self._on_pick = on_pick
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.edit, 1)
        lay.addWidget(self.button)

    def _browse(self) -> None:
        start = str(Path(self.text()).parent) if self.text() else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, self.title, start, self.file_filter)
        if path:
            self.edit.setText(path)
            if self._on_pick is not None:
                self._on_pick()

    def text(self) -> str:
        return self.edit.text().strip()

    def setText(self, text: str | None) -> None:  # noqa: N802
        self.edit.setText(text or "")


def spin_box(low: int, high: int, value: int | None = None, step: int | None = None, special: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    if step is not None:
        box.setSingleStep(step)
    if special:
        box.setSpecialValueText(special)
    if value is not None:
        box.setValue(value)
    return box


def double_box(low: float, high: float, step: float | None = None, value: float | None = None) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(low, high)
    if step is not None:
        box.setSingleStep(step)
    if value is not None:
        box.setValue(value)
    return box
