"""The alternatives of one target token: the tokens the model weighed at that step, with their probabilities;
one of them can be forced (double-click or the context menu) to re-decode from there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from nmt_desktop.core.analysis.words import display_piece

from ..attention.token_axis import TOKEN_LEGEND
from ..formatting import format_prob
from .output_html import probability

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Step

HINT = "Hover or click a target token to see its alternatives."


def table_prob(p: float) -> str:
    """One decimal ("96.4%", "0.3%"), never a nonzero probability as "0.0%" ("<0.1%")."""
    return f"{p:.1%}" if p >= 0.001 else format_prob(p)


class AlternativesView(QWidget):
    """A title naming the step and a table of its alternatives; `forceRequested(row)` asks to force one."""

    forceRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.step: Step | None = None  # the step shown
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Token", "Probability"])
        self.table.horizontalHeaderItem(0).setToolTip(TOKEN_LEGEND)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        self.table.setContextMenuPolicy(Qt.ActionsContextMenu)
        self.force_action = QAction("Force this token (re-decode from here)", self.table)
        self.force_action.triggered.connect(lambda: self.forceRequested.emit(self.table.currentRow()))
        self.table.addAction(self.force_action)
        self.table.cellDoubleClicked.connect(lambda r, _c: self.forceRequested.emit(r))
        self.title = QLabel(HINT)
        self.title.setWordWrap(True)
        self.title.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.table, 1)

    def show_step(self, step: Step) -> None:
        self.step = step
        piece = display_piece(step.piece)
        self.title.setText(f"Step {step.index + 1}: “{piece}”  (p = {table_prob(probability(step.logprob))})")
        self.table.setRowCount(len(step.alternatives))
        for r, alt in enumerate(step.alternatives):
            tok = QTableWidgetItem(display_piece(alt.piece))
            if alt.piece == step.piece:
                font = QFont(tok.font())
                font.setBold(True)
                tok.setFont(font)
            self.table.setItem(r, 0, tok)
            p = QTableWidgetItem(table_prob(alt.prob))
            p.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            self.table.setItem(r, 1, p)

    def clear(self) -> None:
        self.step = None
        self.table.setRowCount(0)
        self.title.setText(HINT)
