"""A view's face while it has nothing to show: what is missing and what to do next, never blank axes.

`EmptyMessage` is the title and hint any view shows in place of its plots (the Compare and Beam tree views);
`EmptyState` is the Translate tab's, with a button that opens a model."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

NO_MODEL = "No model loaded — Open model…"


class EmptyMessage(QWidget):
    """A centred title saying what is missing and a hint saying what to do next."""

    def __init__(self, title: str = "", hint: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel(title)
        self.title.setObjectName("emptyTitle")
        self.title.setAlignment(Qt.AlignCenter)
        self.title.setWordWrap(True)
        self.hint = QLabel(hint)
        self.hint.setObjectName("hint")
        self.hint.setAlignment(Qt.AlignCenter)
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.title)
        layout.addWidget(self.hint)
        layout.addStretch(2)

    def set_message(self, title: str, hint: str) -> None:
        self.title.setText(title)
        self.hint.setText(hint)


class EmptyState(EmptyMessage):
    """Shown on the Translate tab while no model is loaded."""

    def __init__(self, open_model: Callable[[], None], parent: QWidget | None = None):
        super().__init__(NO_MODEL, "Open a model folder or .zip, or pick one on the Models tab.", parent)
        self.title.setWordWrap(False)
        self.button = QPushButton("Open model…")
        self.button.setObjectName("primaryButton")
        self.button.setToolTip("Load a model folder from disk (Ctrl+O)")
        self.button.clicked.connect(open_model)
        self.layout().insertWidget(3, self.button, 0, Qt.AlignCenter)  # under the hint, above the lower stretch

    def set_loading(self, name: str | None) -> None:
        self.title.setText(f"Loading {name}…" if name else NO_MODEL)
        self.button.setVisible(not name)
