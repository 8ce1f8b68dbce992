"""The Translate file dialog's preview: a row per block of the document (a line, a paragraph, a table cell,
a cue), the source block beside its translation; the block's `where` is the row header and tooltip, and a
verbatim block (a code block: never translated) is greyed.

Two text panes side by side lost their line-by-line match as soon as one line wrapped more often in one pane
than in the other (issue 29). Here a line and its translation are the two cells of one row, both wrapped, and
the row is as tall as the taller of them, so line i of the translation is always level with line i of the
source. Blank lines are kept as (short) rows; the row header numbers the lines. A long run without spaces (a URL;
an OPUS-MT-size model's run of tokens) gets break opportunities (`labels.breakable`): Qt wraps at spaces only,
and such a cell was cut at the column's edge."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from .. import theme
from ..labels import breakable

SOURCE, TARGET = 0, 1
_Index = QModelIndex | QPersistentModelIndex


class LinePairs(QAbstractTableModel):
    """The file's blocks (column 0) and their translations so far (column 1, empty until translated)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.source: list[str] = []
        self.target: list[str] = []
        self.where: list[str] = []  # each row's place in the document ("body, paragraph 3"); "" for none
        self.verbatim: list[bool] = []  # rows kept as they are (greyed)
        self.notes: list[str] = []  # each row's formatting note once translated (summary.formatting_note)

    def set_source(self, lines: list[str], where: list[str] | None = None,
                   verbatim: list[bool] | None = None) -> None:
        self.beginResetModel()
        self.source, self.target = list(lines), [""] * len(lines)
        self.where = list(where) if where is not None else [""] * len(lines)
        self.verbatim = list(verbatim) if verbatim is not None else [False] * len(lines)
        self.notes = [""] * len(lines)
        self.endResetModel()

    def set_target(self, lines: list[str]) -> None:
        """The translated lines so far (a prefix of the file's lines, or all of them); only changed rows update."""
        for row, text in enumerate(lines[: len(self.source)]):
            if self.target[row] != text:
                self.target[row] = text
                self.dataChanged.emit(self.index(row, TARGET), self.index(row, TARGET))

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's names and default
        return 0 if parent.isValid() else len(self.source)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else 2

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> str | QColor | None:
        if not index.isValid():
            return None
        row = index.row()
        if role == Qt.ItemDataRole.DisplayRole:  # a URL or a run of tokens with no space wraps, not cut at the edge
            return breakable((self.source if index.column() == SOURCE else self.target)[row])
        if role == Qt.ItemDataRole.ToolTipRole:
            kept = " (kept as it is: not translated)" if self.verbatim[row] else ""
            note = f"\n{self.notes[row]}" if self.notes[row] else ""
            return f"{self.where[row] or f'row {row + 1}'}{kept}{note}"
        if role == Qt.ItemDataRole.ForegroundRole and self.verbatim[row]:
            return QColor(theme.current().muted)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> str | None:
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        if orientation == Qt.Orientation.Horizontal:
            return ("Source", "Translation")[section] if role == Qt.ItemDataRole.DisplayRole else None
        where = self.where[section] if 0 <= section < len(self.where) else ""
        return where or str(section + 1)


class LineTable(QTableView):
    """`LinePairs` shown as two equal, wrapped columns; each row as tall as its taller cell.

    Rows are fitted to their text only where they are seen (the rows in view, after a scroll, a resize or a
    change of their text): Qt's own ResizeToContents measures every row of the file after each translated line,
    a pause of 0.2 s per line with a 5,000-line file."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("lineTable")  # its cells' padding: gui/theme.py
        self.pairs = LinePairs(self)
        self.setModel(self.pairs)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)  # tall rows scroll smoothly
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setShowGrid(False)
        self.setAlternatingRowColors(True)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # fitted here, row by row
        self.verticalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        self.verticalHeader().setMaximumWidth(220)  # a long `where` ("footer 2, table 1, …") is cut, not the text
        # cut at its start with "…", keeping the end that tells rows apart ("<p> 12"); Qt's default here drew a
        # right-aligned `where` clipped mid-letter ("3/wasteland-content.xhtml" for "EPUB/…"); the tooltip has it all
        self.verticalHeader().setTextElideMode(Qt.TextElideMode.ElideLeft)
        self._fitted: set[int] = set()  # rows whose height fits their text at the current column widths
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_visible_rows)
        self.horizontalHeader().sectionResized.connect(lambda *_: self._refit(None))
        self.verticalScrollBar().valueChanged.connect(lambda _v: self._fit_timer.start())
        self.pairs.modelReset.connect(lambda: self._refit(None))
        self.pairs.dataChanged.connect(lambda top, bottom, *_: self._refit(range(top.row(), bottom.row() + 1)))

    def _refit(self, rows: range | None) -> None:
        """Forget the fit of `rows` (None: of every row) and fit the rows in view once events are processed."""
        if rows is None:
            self._fitted.clear()
        else:
            self._fitted.difference_update(rows)
        self._fit_timer.start()

    def fit_visible_rows(self) -> None:
        """Make each row in view as tall as its text (a fitted row may bring more rows into view: go on)."""
        for _round in range(20):
            first = self.rowAt(0)
            if first < 0:
                return
            last = self.rowAt(self.viewport().height() - 1)
            last = self.pairs.rowCount() - 1 if last < 0 else last
            todo = [row for row in range(first, last + 1) if row not in self._fitted]
            if not todo:
                return
            for row in todo:
                self.resizeRowToContents(row)
                self._fitted.add(row)

    def column_text(self, column: int) -> str:
        """One column as plain text, a line per row."""
        return "\n".join(self.pairs.source if column == SOURCE else self.pairs.target)
