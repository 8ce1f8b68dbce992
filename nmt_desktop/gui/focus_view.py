"""The focus view: one attention matrix, large, with token ticks, a colour bar and the value under the cursor.

Opened from a cell of the attention grid (attention_view.py) and used on its own by the Analysis and
Train tabs. Colour scales: see heatmap.py.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Signal

from .heatmap import LOG_LEVELS, colormap, display_image, outline_mark, token_label, top_level


class FocusView(QtWidgets.QWidget):
    """One matrix, large: source tokens on x, target tokens on y, a colour bar, the value under the cursor.

    `hover(row, col)` is what mouse moves call (and what tests call): it updates the value label and the
    highlight and emits `hovered(row, col)` ((-1, -1) when the cursor leaves)."""

    hovered = Signal(int, int)

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.plot.showAxis("top", False)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setTextPen("k")
            axis.setPen("k")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colormap(), interactive=False, width=14,
                                        colorMapMenu=False)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.getAxis("right").setTextPen("k")
        self.row_mark, self.col_mark = outline_mark(), outline_mark()
        self.plot.addItem(self.row_mark, ignoreBounds=True)
        self.plot.addItem(self.col_mark, ignoreBounds=True)
        self.value_label = QtWidgets.QLabel("value under cursor: –")
        self.value_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.value_label)
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._source: list[str] = []
        self._target: list[str] = []
        self._hover = (-1, -1)
        self._names = ("target", "source")
        self.graphics.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plot.vb.sigResized.connect(self._set_token_ticks)
        self.plot.vb.sigRangeChanged.connect(self._set_token_ticks)

    # content
    def set_matrix(self, matrix: np.ndarray, source_tokens: list[str], target_tokens: list[str], title: str = "",
                   mode: str = "cell", levels: tuple[float, float] | None = None,
                   names: tuple[str, str] = ("target", "source")) -> None:
        """Show `matrix` (rows = target, cols = source; raw weights) in colour scale `mode`; `names` are the
        row and column roles in the value label (("query", "key") for self-attention)."""
        matrix = np.asarray(matrix, dtype=np.float32)
        rows, cols = matrix.shape
        reshaped = (rows, cols) != self._matrix.shape
        self._matrix, self._source, self._target = matrix, list(source_tokens), list(target_tokens[:rows])
        self._names = names
        if levels is None:
            levels = LOG_LEVELS if mode == "log" else (0.0, top_level(matrix))
        if rows and cols:
            self.image.setImage(display_image(matrix, mode), autoLevels=False, levels=levels)
            self.colorbar.setLevels(values=levels)
        else:
            self.image.clear()
        self.plot.setTitle(f"{title}{' (colour: log10 weight)' if mode == 'log' else ''}", color="k", size="10pt")
        self._set_token_ticks()
        if reshaped:
            self.plot.vb.setRange(xRange=(0, max(cols, 1)), yRange=(0, max(rows, 1)), padding=0)
        row, col = self._hover
        self._hover = (-2, -2)  # force a refresh of label and marks
        self.hover(row if row < rows else -1, col if col < cols else -1)

    def _set_token_ticks(self, *_) -> None:
        """Token strings as tick labels. Where they would overlap (long sentences, small window) only
        every k-th token is labelled; hovering names every cell."""
        font = self.plot.getAxis("left").style.get("tickFont") or self.font()
        metrics = QtGui.QFontMetrics(font)
        vb = self.plot.vb
        (x0, x1), (y0, y1) = vb.viewRange()
        px_per_col = vb.width() / max(x1 - x0, 1e-9) if vb.width() > 0 else 0.0
        px_per_row = vb.height() / max(y1 - y0, 1e-9) if vb.height() > 0 else 0.0
        for name, tokens, px in (("bottom", self._source, px_per_col), ("left", self._target, px_per_row)):
            width = 12 if len(tokens) <= 12 else 8
            labels = [token_label(t, width) for t in tokens]
            if name == "bottom":
                need = max((metrics.horizontalAdvance(t) for t in labels), default=0) + 8
            else:
                need = metrics.height() + 2
            step = max(1, int(np.ceil(need / px))) if px > 0 else max(1, -(-len(tokens) // 30))
            ticks = [(i + 0.5, text) for i, text in enumerate(labels) if i % step == 0]
            axis = self.plot.getAxis(name)
            axis.setTicks([ticks, []])
            if name == "left":  # labels wider than the axis are dropped by pyqtgraph: size it to fit
                widest = max((metrics.horizontalAdvance(text) for _, text in ticks), default=20)
                axis.setWidth(min(200, widest + 16))

    def matrix(self) -> np.ndarray:
        return self._matrix

    def tokens(self) -> tuple[list[str], list[str]]:
        """(source tokens, target tokens) of the matrix shown."""
        return list(self._source), list(self._target)

    # hover & highlight
    def hover(self, row: int, col: int) -> None:
        rows, cols = self._matrix.shape
        row = row if 0 <= row < rows else -1
        col = col if 0 <= col < cols else -1
        if (row, col) == self._hover:
            return
        self._hover = (row, col)
        self.set_highlight(row, col)
        rname, cname = self._names
        if row >= 0 and col >= 0:
            text = (f"value under cursor: {rname} '{self._target[row]}' / {cname} '{self._source[col]}' = "
                    f"{float(self._matrix[row, col]):.3f}")
        elif row >= 0:
            text = f"value under cursor: {rname} '{self._target[row]}'"
        elif col >= 0:
            text = f"value under cursor: {cname} '{self._source[col]}'"
        else:
            text = "value under cursor: –"
        self.value_label.setText(text)
        self.hovered.emit(row, col)

    def hovered_cell(self) -> tuple[int, int]:
        return self._hover

    def set_highlight(self, row: int, col: int) -> None:
        rows, cols = self._matrix.shape
        for mark, on, rect in ((self.row_mark, 0 <= row < rows, QtCore.QRectF(0, row, cols, 1)),
                               (self.col_mark, 0 <= col < cols, QtCore.QRectF(col, 0, 1, rows))):
            if on:
                mark.setRect(rect)
            mark.setVisible(on)

    def _mouse_moved(self, pos: QtCore.QPointF) -> None:
        vb = self.plot.vb
        p = vb.mapSceneToView(pos)
        row, col = int(np.floor(p.y())), int(np.floor(p.x()))
        if vb.sceneBoundingRect().contains(pos):
            self.hover(row, col)
        elif self.plot.getAxis("left").sceneBoundingRect().contains(pos):
            self.hover(row, -1)  # hovering a target token
        elif self.plot.getAxis("bottom").sceneBoundingRect().contains(pos):
            self.hover(-1, col)  # hovering a source token
        else:
            self.hover(-1, -1)

    def leaveEvent(self, ev) -> None:  # noqa: N802
        self.hover(-1, -1)
        super().leaveEvent(ev)
