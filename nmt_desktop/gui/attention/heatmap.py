"""Small heatmap building blocks shared by the attention grid and its focus view.

A heatmap is a pyqtgraph `ImageItem` in row-major order (``image[row, col]``: target rows on y,
source columns on x) inside a `ViewBox` with ``invertY(True)``, so row 0 is at the top like a table.
`HeatmapCell` is one small cell of the attention grid, `CellGrid` all of them (built a slice at a time).

Colour scales (`display_image`, applied as a cell or the focus view paints, never stored):

- ``"cell"``: the weights as they are, levels ``(0, max of that matrix)``;
- ``"shared"``: the weights as they are, levels ``(0, max over the whole grid)``;
- ``"log"``: the image holds ``log10(max(w, LOG_FLOOR))`` and every cell has levels
  ``(log10(LOG_FLOOR), 0)`` = ``(-4, 0)``, so 1e-4 and below are black and 1.0 is the top colour.

The colour map is the theme's (gui/theme.py, View > Colour map); differences use `DIVERGING_COLORMAP`.
Token labels: token_axis.py (every token) and `words.display_piece` (how a piece reads).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from nmt_desktop.core.analysis.head_names import head_name, layer_name

from .. import theme

COLOR_SCALES = ("cell", "shared", "log")
LOG_FLOOR = 1e-4
LOG_LEVELS = (float(np.log10(LOG_FLOOR)), 0.0)
_MIN_TOP = 1e-6  # an all-zero matrix still gets a valid (0, tiny) level range

DIVERGING_COLORMAP = "CET-D1"  # blue < 0 < red, for differences of attention

_HIGHLIGHT_BRUSH = QtGui.QColor(255, 255, 255, 70)


def colormap() -> pg.ColorMap:
    """The current theme's heatmap colour map."""
    return pg.colormap.get(theme.current().colormap)


def paper_theme() -> theme.Theme:
    """Light colours with the current colour map: what image exports use (figures for papers)."""
    return replace(theme.LIGHT, colormap=theme.current().colormap)


def display_image(weights: np.ndarray, mode: str) -> np.ndarray:
    """What the ImageItem holds for `weights` in colour scale `mode` (float32)."""
    if mode == "log":
        return np.log10(np.maximum(weights, LOG_FLOOR)).astype(np.float32, copy=False)
    return weights


def top_level(values: np.ndarray | float) -> float:
    top = float(np.max(values)) if np.size(values) else 0.0
    return top if np.isfinite(top) and top > _MIN_TOP else _MIN_TOP


class CellBox(pg.ViewBox):
    """A ViewBox for one small grid cell: no pan/zoom/menu; reports clicks and hovered (row, col)."""

    def __init__(self, on_click: Callable[[], None], on_hover: Callable[[int, int], None]):
        super().__init__(enableMenu=False, invertY=True)
        self.setMouseEnabled(False, False)
        self._on_click, self._on_hover = on_click, on_hover
        self.shape_rc = (0, 0)  # (rows, cols) of the matrix shown, for hover mapping

    def mouseClickEvent(self, ev):  # noqa: N802 (Qt naming)
        if ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            self._on_click()

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802
        ev.ignore()

    def wheelEvent(self, ev, axis=None):  # noqa: N802
        ev.ignore()

    def hoverEvent(self, ev):  # noqa: N802
        if ev.isExit():
            self._on_hover(-1, -1)
            return
        p = self.mapToView(ev.pos())
        rows, cols = self.shape_rc
        r, c = int(np.floor(p.y())), int(np.floor(p.x()))
        self._on_hover(r if 0 <= r < rows else -1, c if 0 <= c < cols else -1)


class HeatmapCell:
    """One grid cell: title, CellBox, ImageItem and two highlight bars (row and column)."""

    def __init__(self, layout: pg.GraphicsLayout, row: int, col: int, title: str,
                 on_click: Callable[[], None], on_hover: Callable[[int, int], None]):
        self.title = title
        self.sub = layout.addLayout(row=row, col=col)
        self.sub.setContentsMargins(2, 2, 2, 2)
        self.sub.setSpacing(0)
        self.label = self.sub.addLabel(title, row=0, col=0, size="8pt")
        self.label.setMaximumHeight(16)
        self.box = CellBox(on_click, on_hover)
        self.sub.addItem(self.box, row=1, col=0)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.box.addItem(self.image)
        self.row_mark = _mark()
        self.col_mark = _mark()
        self.box.addItem(self.row_mark, ignoreBounds=True)
        self.box.addItem(self.col_mark, ignoreBounds=True)
        self.y_extent = 0  # rows the view range currently spans
        self.restyle(theme.current())

    def restyle(self, look: theme.Theme) -> None:
        """Title colour, the grey of rows still to come while streaming, and the colour map of `look`."""
        self.label.setText(self.title, color=look.plot_text, size="8pt")
        self.box.setBackgroundColor(look.pending_cell)
        self.image.setColorMap(pg.colormap.get(look.colormap))

    def set_matrix(self, weights: np.ndarray, mode: str, levels: tuple[float, float]) -> None:
        """Paint `weights` (rows, cols) in colour scale `mode`: the log transform is made here, for this paint only."""
        rows, cols = weights.shape
        self.box.shape_rc = (rows, cols)
        if rows == 0 or cols == 0:
            self.image.clear()
            self.image.image = None
            return
        self.image.setImage(display_image(weights, mode), autoLevels=False, levels=levels)

    def set_extent(self, rows: int, cols: int) -> None:
        """Fix the view range to (cols x rows) cells; no autorange, no re-layout."""
        self.y_extent = rows
        self.box.setRange(xRange=(0, max(cols, 1)), yRange=(0, max(rows, 1)), padding=0)

    def set_highlight(self, row: int, col: int, rows: int, cols: int) -> None:
        _place(self.row_mark, row >= 0 and row < rows, QtCore.QRectF(0, row, cols, 1))
        _place(self.col_mark, col >= 0 and col < cols, QtCore.QRectF(col, 0, 1, rows))


class CellGrid:
    """The attention grid's cells in `widget`'s layout: per layer its H heads then their mean, the overall mean
    last (the order of `AttentionRows.cell_index`).

    A shape new while streaming is built a slice of cells per event-loop turn (pyqtgraph's set-up of a 55-cell
    grid takes ~0.1 s); `on_built(first)` is then told of the cells from `first` on, to paint them, and
    `complete()` builds the rest at once."""

    def __init__(self, widget: pg.GraphicsLayoutWidget, on_click: Callable[[int, int], None],
                 on_hover: Callable[[int, int], None], on_built: Callable[[int], None], slice_s: Callable[[], float]):
        self.widget = widget
        self.cells: list[HeatmapCell] = []
        self.layers = self.heads = 0
        self._specs: list[tuple[int, int, str, int, int]] = []  # every cell: (row, col, title, layer, head)
        self._on_click, self._on_hover, self._on_built = on_click, on_hover, on_built
        self._timer = QtCore.QTimer(widget, singleShot=True, interval=0)
        self._timer.timeout.connect(lambda: self._more(slice_s()))

    @property
    def size(self) -> int:
        """Cells of the whole grid, built or still to build."""
        return len(self._specs)

    def title(self, i: int) -> str:
        return self._specs[i][2]

    def build(self, layers: int, heads: int, budget_s: float | None = None) -> None:
        """Cells for a layers x heads grid: all now (`budget_s` None), else about `budget_s` of them (one at least)
        now and the rest on later event-loop turns. The caller paints the cells there are next."""
        if (layers, heads) == (self.layers, self.heads) and self._specs:
            if budget_s is None:
                self._make(None)
            return
        self._timer.stop()
        self.widget.clear()
        self.cells, self._specs = [], []
        self.layers, self.heads = layers, heads
        if layers == 0 or heads == 0:
            return
        for layer in range(layers):
            for head in list(range(heads)) + [-1]:
                title = head_name(layer, head) if head >= 0 else f"{layer_name(layer)} avg"
                self._specs.append((layer, head if head >= 0 else heads, title, layer, head))
        self._specs.append((layers, heads, "all", -1, -1))
        self.widget.setMinimumSize(70 * (heads + 1), 70 * (layers + 1))
        self._make(budget_s)

    def complete(self) -> None:
        """Build the cells still missing now (a grid begun gradually)."""
        self._more(None)

    def _more(self, budget_s: float | None) -> None:
        first = len(self.cells)
        if first < len(self._specs):
            self._make(budget_s)
            self._on_built(first)

    def _make(self, budget_s: float | None) -> None:
        start = time.perf_counter()
        while len(self.cells) < len(self._specs):
            row, col, title, layer, head = self._specs[len(self.cells)]
            self.cells.append(HeatmapCell(self.widget.ci, row, col, title,
                                          lambda layer=layer, head=head: self._on_click(layer, head), self._on_hover))
            if budget_s is not None and time.perf_counter() - start > budget_s:
                break
        if len(self.cells) < len(self._specs):
            self._timer.start()


def _mark() -> QtWidgets.QGraphicsRectItem:
    item = QtWidgets.QGraphicsRectItem()
    item.setPen(QtGui.QPen(QtCore.Qt.PenStyle.NoPen))
    item.setBrush(QtGui.QBrush(_HIGHLIGHT_BRUSH))
    item.setZValue(10)
    item.setVisible(False)
    return item


def outline_mark() -> QtWidgets.QGraphicsRectItem:
    item = _mark()
    pen = QtGui.QPen(QtGui.QColor(255, 255, 255, 220))
    pen.setCosmetic(True)
    pen.setWidth(1)
    item.setPen(pen)
    item.setBrush(QtGui.QBrush(QtGui.QColor(255, 255, 255, 40)))
    return item


def _place(item: QtWidgets.QGraphicsRectItem, visible: bool, rect: QtCore.QRectF) -> None:
    if visible:
        item.setRect(rect)
    item.setVisible(visible)
