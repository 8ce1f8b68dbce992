"""The Translate tab's face while no model is loaded: what to do next, and a button that does it."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget


class EmptyState(QWidget):
    """Shown on the Translate tab while no model is loaded."""

    def __init__(self, open_model: Callable[[], None], parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel("No model loaded — Open model…")
        self.title.setObjectName("emptyTitle")
        self.title.setAlignment(Qt.AlignCenter)
        self.hint = QLabel("Open a model folder or .zip, or pick one on the Models tab.")
        self.hint.setObjectName("hint")
        self.hint.setAlignment(Qt.AlignCenter)
        self.button = QPushButton("Open model…")
        self.button.setObjectName("primaryButton")
        self.button.setToolTip("Load a model folder from disk (Ctrl+O)")
        self.button.clicked.connect(open_model)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.title)
        layout.addWidget(self.hint)
        layout.addWidget(self.button, 0, Qt.AlignCenter)
        layout.addStretch(2)

    def set_loading(self, name: str | None) -> None:
        self.title.setText(f"Loading {name}…" if name else "No model loaded — Open model…")
        self.button.setVisible(not name)
