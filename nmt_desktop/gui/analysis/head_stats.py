"""Head statistics: a sortable table of every cross-attention head's statistics, and a grid of small
heatmaps ordered by one statistic (`core.analysis.heads.head_stats`).

Both are made when the view is shown (or read), not when a translation finishes on the Translate tab: the
statistics of an OPUS-MT-size model's 48 heads took ~20 ms and its grid ~290 ms of the GUI thread, for a
page the user may never open. The grid is one view box holding every head's image side by side (48 view
boxes with their layouts took most of those 290 ms)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QShowEvent
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from nmt_desktop.core.analysis import head_statistics as analysis
from nmt_desktop.core.analysis.head_names import head_description, head_name, layer_name

from .. import theme
from ..attention.heatmap import top_level
from .analysis_view import AnalysisView

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.results import Translation

STAT_FIELDS = ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage")
STAT_TITLES = {"entropy": "Entropy", "eos_share": "</s> share", "punct_share": "Punct. share",
               "diagonality": "Diagonality", "monotonicity": "Monotonicity", "coverage": "Coverage"}
# what each column measures, shown on its header (the definitions of core/analysis/heads.HeadStats)
STAT_TIPS = {
    "entropy": "How spread out the head's attention is: the mean entropy of its rows in nats (0: every target "
               "token looks at one source token; high: it looks everywhere)",
    "eos_share": "The share of attention that goes to </s>: a head that parks its attention there when it has "
                 "nothing to look at (an attention sink)",
    "punct_share": "The share of attention that goes to punctuation",
    "diagonality": "How much the head follows the diagonal: the mean share of a target token's attention within "
                   "one source position of where the diagonal crosses its row (1: a strictly diagonal head)",
    "monotonicity": "Whether the head reads the source in order: the Spearman correlation between each target "
                    "position and the source position it attends to most (1: left to right, -1: reversed)",
    "coverage": "How much of the source the head covers: the share of source tokens (</s> excluded) that "
                "receive a total attention of at least 0.5 over the whole translation",
}


class NumericItem(QTableWidgetItem):
    """A table item shown as text but sorted by its numeric value (Qt.UserRole)."""

    def __init__(self, value: float, text: str):
        super().__init__(text)
        self.setData(Qt.UserRole, float(value))
        self.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        a, b = self.data(Qt.UserRole), other.data(Qt.UserRole)
        if a is None or b is None:
            return super().__lt__(other)
        return float(a) < float(b)


class HeadStatsView(QWidget, AnalysisView):
    """A sortable table of every head's statistics and a grid of small heatmaps ordered by a statistic."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._rows: list[analysis.HeadStats] = []
        self.attention: np.ndarray | None = None  # (L, H, T, S)
        self._pending: Translation | None = None  # a translation whose statistics are made when shown
        self.table = QTableWidget(0, 2 + len(STAT_FIELDS))
        self.table.setHorizontalHeaderLabels(["Layer", "Head"] + [STAT_TITLES[f] for f in STAT_FIELDS])
        for column, name in enumerate(STAT_FIELDS, start=2):  # hovering a column's title says what it measures
            self.table.horizontalHeaderItem(column).setToolTip(STAT_TIPS[name])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setSortIndicator(0, Qt.AscendingOrder)
        self.table.setSortingEnabled(True)
        self.sort_combo = QComboBox()
        self.sort_combo.addItems([STAT_TITLES[f] for f in STAT_FIELDS])
        self.sort_combo.setToolTip("Order the heatmap grid by this statistic (largest first)")
        self.sort_combo.currentIndexChanged.connect(self._fill_grid)
        self.graphics = pg.GraphicsLayoutWidget()
        self.grid_order: list[tuple[int, int]] = []
        self._grid_images: list[pg.ImageItem] = []
        self._grid_dirty = False  # the grid is rebuilt when shown: pyqtgraph's set-up per fill is slow
        self.hint = QLabel("Translate something on the Translate tab to see its heads here.")
        self.hint.setObjectName("hint")

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Sort heads by"))
        row.addWidget(self.sort_combo, 1)
        rl.addLayout(row)
        rl.addWidget(self.graphics, 1)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.table)
        split.addWidget(right)
        split.setSizes([700, 420])
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(split, 1)
        self._look = theme.current()
        theme.follow(self, self._restyle)

    def _restyle(self, look: theme.Theme) -> None:
        """Background, label colour and colour map of the heatmap grid (rebuilt in the new colours)."""
        self._look = look
        self.graphics.setBackground(look.plot_background)
        if self._rows:
            self._fill_grid()

    @property
    def rows(self) -> list[analysis.HeadStats]:
        """Every head's statistics (computed now if a translation is waiting to be shown)."""
        self._compute()
        return self._rows

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
        """Show `translation`'s heads: now if the view is visible, else when it is shown or read."""
        assert translation.attention is not None  # AnalysisPanel passes only translations with attention
        self._pending = translation
        if self.isVisible():
            self._compute()

    def _compute(self) -> None:
        """The statistics and table of the pending translation, if any."""
        translation, self._pending = self._pending, None
        if translation is None:
            return
        self.attention = translation.attention
        self._rows = analysis.head_stats(translation)
        self.hint.setText(f"{len(self._rows)} cross-attention heads · {translation.attention.shape[2]} target × "
                          f"{translation.attention.shape[3]} source tokens")
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self._rows))
        for r, s in enumerate(self._rows):
            self.table.setItem(r, 0, NumericItem(s.layer * 10000 + s.head, layer_name(s.layer)))  # ties: head order
            self.table.setItem(r, 1, NumericItem(s.head, head_name(s.layer, s.head)))
            for c in (0, 1):
                self.table.item(r, c).setToolTip(head_description(s.layer, s.head))
            for c, name in enumerate(STAT_FIELDS):
                value = getattr(s, name)
                self.table.setItem(r, 2 + c, NumericItem(value, f"{value:.3f}"))
        self.table.setSortingEnabled(True)
        self._fill_grid()

    def clear(self) -> None:
        self._rows, self.attention, self._pending = [], None, None
        self.table.setRowCount(0)
        self._fill_grid()

    def column_values(self, column: int) -> list[float]:
        """The table's values in `column`, top to bottom, as shown (sorted or not)."""
        self._compute()
        return [float(self.table.item(r, column).data(Qt.UserRole)) for r in range(self.table.rowCount())]

    def sort_by(self, field_name: str, descending: bool = True) -> None:
        self._compute()
        column = 2 + STAT_FIELDS.index(field_name)
        self.table.sortItems(column, Qt.DescendingOrder if descending else Qt.AscendingOrder)

    def set_grid_statistic(self, field_name: str) -> None:
        self._compute()
        self.sort_combo.setCurrentIndex(STAT_FIELDS.index(field_name))

    @property
    def grid_images(self) -> list[pg.ImageItem]:
        """The grid's images in `grid_order` (built now if the grid is waiting to be shown)."""
        self._compute()
        if self._grid_dirty:
            self._build_grid()
        return self._grid_images

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        self._compute()
        if self._grid_dirty:
            self._build_grid()

    def _ordered(self) -> tuple[str, list[analysis.HeadStats]]:
        """The grid's statistic and the heads by it, largest first (stable: ties in (layer, head) order)."""
        field_name = STAT_FIELDS[max(0, self.sort_combo.currentIndex())]
        return field_name, sorted(self._rows, key=lambda s: -getattr(s, field_name))

    def _fill_grid(self) -> None:
        """Order the grid; build its cells now if visible, else when first shown (a translation
        finished on the Translate tab must not stall the event loop for an unseen grid)."""
        self.grid_order = [(s.layer, s.head) for s in self._ordered()[1]]
        self._grid_dirty = True
        if self.isVisible():
            self._build_grid()

    def _build_grid(self) -> None:
        """Every head's heatmap in one view box, `columns` to a row, each titled with its name and statistic."""
        self._grid_dirty = False
        self.graphics.clear()
        self._grid_images = []
        field_name, ordered = self._ordered()
        if self.attention is None or not ordered:
            return
        box = self.graphics.addViewBox(lockAspect=False, enableMouse=False, invertY=True)
        box.setMenuEnabled(False)
        rows_t, cols_s = self.attention.shape[2], self.attention.shape[3]
        columns = max(1, min(self.attention.shape[1], 6))
        gap_x, title_y = max(1.0, 0.3 * cols_s), max(2.0, 0.35 * rows_t)  # data units between heatmaps, for titles
        cmap = pg.colormap.get(self._look.colormap)
        for i, s in enumerate(ordered):
            r, c = divmod(i, columns)
            x, y = c * (cols_s + gap_x), r * (rows_t + title_y) + title_y
            matrix = self.attention[s.layer, s.head].astype(np.float32)  # (T, S)
            image = pg.ImageItem(matrix, axisOrder="row-major", levels=(0.0, top_level(matrix)))
            image.setColorMap(cmap)
            image.setRect(QRectF(x, y, cols_s, rows_t))
            box.addItem(image)
            title = pg.TextItem(f"{head_name(s.layer, s.head)} · {getattr(s, field_name):.3f}",
                                color=self._look.plot_text, anchor=(0, 1))
            title.setFont(_title_font())
            title.setPos(x, y)
            box.addItem(title)
            self._grid_images.append(image)
        n_rows = (len(ordered) + columns - 1) // columns
        box.setRange(xRange=(0, columns * (cols_s + gap_x)), yRange=(0, n_rows * (rows_t + title_y)), padding=0.01)


def _title_font() -> QFont:
    font = QFont()
    font.setPointSizeF(8.0)
    return font
