"""Linked views: the one token pair every view of a translation points at.

Hovering a word in the source box, a token of the translation or a cell or label of any heatmap names a
target token and/or a source token of the translation shown; every view listening lights up the same
ones (its row or column, its word, its alignment links, its alternatives). A click selects: the selection
stays when the pointer leaves and when the user switches views, until another click, a click on the same
token again, or a new translation (token indices belong to one translation).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal


@dataclass(frozen=True)
class Highlight:
    """Token indices of the translation shown: `row` a target token, `col` a source token; -1: none."""

    row: int = -1
    col: int = -1

    @property
    def empty(self) -> bool:
        return self.row < 0 and self.col < 0


NOTHING = Highlight()


class LinkedTokens(QObject):
    """What is pointed at (`hover`) over what is selected (`select`); `changed(Highlight)` when that changes."""

    changed = Signal(object)  # the Highlight every view should show now

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.hovered = NOTHING
        self.selected = NOTHING
        self._shown = NOTHING

    @property
    def current(self) -> Highlight:
        return self.hovered if not self.hovered.empty else self.selected

    def hover(self, row: int = -1, col: int = -1) -> None:
        """The pointer is over these tokens ((-1, -1): over none of them: the selection shows again)."""
        self.hovered = Highlight(row, col)
        self._announce()

    def select(self, row: int = -1, col: int = -1) -> None:
        """A click: select these tokens, or clear the selection when they are the ones selected."""
        picked = Highlight(row, col)
        self.selected = NOTHING if picked == self.selected else picked
        self._announce()

    def clear(self) -> None:
        """A new translation is shown: nothing is pointed at or selected."""
        self.hovered = self.selected = NOTHING
        self._announce()

    def _announce(self) -> None:
        if self.current != self._shown:
            self._shown = self.current
            self.changed.emit(self._shown)
