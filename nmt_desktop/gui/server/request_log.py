"""The dialog's live request log: a table row per `request` event of the server's JSON lines, and the
counters summed from the same events (so the two can never disagree)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

COLUMNS = ("Time", "Client", "Request", "Status", "Segments", "Characters", "ms", "Model")
MAX_ROWS = 1000  # the oldest rows go first: a day of Weblate traffic must not grow the window without end


@dataclass
class ServerCounters:
    """What the server has answered since it started, from its request events."""

    requests: int = 0
    segments: int = 0
    characters: int = 0
    errors: int = 0  # answers with status 400 or above
    total_ms: float = 0.0

    def add(self, event: dict[str, Any]) -> None:
        self.requests += 1
        self.segments += _int(event.get("segments"))
        self.characters += _int(event.get("characters"))
        self.errors += _int(event.get("status")) >= 400
        self.total_ms += _float(event.get("ms"))

    def text(self) -> str:
        mean = f" · {self.total_ms / self.requests:.0f} ms a request on average" if self.requests else ""
        return " · ".join(counted(n, word) for n, word in ((self.requests, "request"), (self.segments, "segment"),
                                                          (self.characters, "character"), (self.errors, "error"))) + mean


def counted(n: int, word: str) -> str:
    """'1 request', '2,000 requests'."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def row_texts(event: dict[str, Any]) -> list[str]:
    """A request event as the table's cells (time as hh:mm:ss of its ISO 8601 stamp)."""
    stamp = str(event.get("time", ""))
    clock = stamp[11:19] if len(stamp) >= 19 and stamp[10] in "T " else stamp
    ms = event.get("ms")
    return [clock, str(event.get("client", "")), f"{event.get('method', '')} {event.get('path', '')}".strip(),
            str(event.get("status", "")), str(_int(event.get("segments"))), str(_int(event.get("characters"))),
            f"{ms:.0f}" if isinstance(ms, (int, float)) else "", str(event.get("model") or "")]


class RequestLog(QTableWidget):
    """Newest request at the bottom, followed while the view is scrolled to the end."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.setToolTip("Each request the server answered: when, from where, what, its status, how many segments "
                        "and characters, how long it took and which model translated it")

    def add(self, event: dict[str, Any]) -> None:
        follow = self.verticalScrollBar().value() >= self.verticalScrollBar().maximum()
        while self.rowCount() >= MAX_ROWS:
            self.removeRow(0)
        row = self.rowCount()
        self.insertRow(row)
        for col, text in enumerate(row_texts(event)):
            item = QTableWidgetItem(text)
            if col >= 3 and col <= 6:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(row, col, item)
        if follow:
            self.scrollToBottom()
