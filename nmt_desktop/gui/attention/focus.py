"""The focus view: one attention matrix, large, with token ticks, a colour bar and the value under the cursor.

Opened from a cell of the attention grid (attention_view.py) and used on its own by the Analysis and
Train tabs. Colour scales: see heatmap.py. Every token is labelled (token_axis.py): labels rotate and
shrink to fit, and when even the smallest font cannot fit, the plot keeps a minimum size and scrolls.
Tokens show as `words.display_piece` spells them ("·word" for a word start). Colours follow gui/theme.py.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Signal

from nmt_desktop.core.analysis.words import display_pieces

from .. import theme
from ..plot_menu import give_menu_to
from .heatmap import DIVERGING_COLORMAP, LOG_LEVELS, colormap, display_image, outline_mark, paper_theme, top_level
from .token_axis import TokenAxis

_COLORBAR_PX, _TITLE_PX = 61, 30  # colour bar with its axis, title (at least; measured when laid out)
_MARGIN_PX = 26  # the layout's margins and spacing


class FocusView(QtWidgets.QWidget):
    """One matrix, large: source tokens on x, target tokens on y, a colour bar, the value under the cursor.

    `hover(row, col)` is what mouse moves call (and what tests call): it updates the value label and the
    highlight and emits `hovered(row, col)` ((-1, -1) when the cursor leaves). `diverging=True` keeps a
    blue-white-red map for differences whatever colour map the theme has."""

    hovered = Signal(int, int)
    clicked = Signal(int, int)  # (row, col) of a click on the matrix; -1 outside it

    def __init__(self, parent: QtWidgets.QWidget | None = None, diverging: bool = False):
        super().__init__(parent)
        self.diverging = diverging
        self.graphics = pg.GraphicsLayoutWidget()
        self.axes = {"left": TokenAxis("left"), "bottom": TokenAxis("bottom")}
        self.plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0, axisItems=dict(self.axes))
        self.plot.setMenuEnabled(False)
        give_menu_to(self.plot, self.graphics)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.plot.showAxis("top", False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colormap(), interactive=False, width=14,
                                        colorMapMenu=False)
        give_menu_to(self.colorbar, self.graphics)  # a ColorBarItem is a PlotItem too
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.row_mark, self.col_mark = outline_mark(), outline_mark()
        self.plot.addItem(self.row_mark, ignoreBounds=True)
        self.plot.addItem(self.col_mark, ignoreBounds=True)
        self.scroll = QtWidgets.QScrollArea()  # scrolls only when the labels need more room than there is
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.graphics)
        self.value_label = QtWidgets.QLabel("value under cursor: –")
        self.value_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.value_label)
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._source: list[str] = []
        self._target: list[str] = []
        self._labels: tuple[list[str], list[str]] = ([], [])  # (source, target) as shown
        self._hover = (-1, -1)
        self._names = ("target", "source")
        self._title = ""
        self._theme = theme.current()
        self._fitting = 0
        self.graphics.scene().sigMouseMoved.connect(self._mouse_moved)
        self.graphics.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.plot.vb.sigResized.connect(self.fit_ticks)
        self.plot.vb.sigRangeChanged.connect(self.fit_ticks)
        theme.follow(self, self.restyle)

    # look
    def restyle(self, look: theme.Theme) -> None:
        """Background, axis and text colours and the colour map of `look` (a gui/theme.py Theme); a hidden view
        (another tab) takes them when shown: pyqtgraph's colour maps and pens are slow, and a colour-map change
        restyled every focus view of the window at once (the monkey test's event-loop budget)."""
        self._theme = look
        self._restyle_pending = not self.isVisible()
        if not self._restyle_pending:
            self._apply_look(look)

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if getattr(self, "_restyle_pending", False):
            self._restyle_pending = False
            self._apply_look(self._theme)

    def _apply_look(self, look: theme.Theme) -> None:
        self.graphics.setBackground(look.plot_background)
        for axis in (*self.axes.values(), self.colorbar.getAxis("right")):
            axis.setPen(look.plot_text)
            axis.setTextPen(look.plot_text)
        self.plot.setTitle(self._title, color=look.plot_text, size="10pt")
        self.colorbar.setColorMap(pg.colormap.get(DIVERGING_COLORMAP if self.diverging else look.colormap))

    @contextmanager
    def paper(self) -> Iterator[None]:
        """Light colours (a figure for a paper) with the current colour map while exporting."""
        shown = self._theme
        self._theme = paper = paper_theme()
        self._apply_look(paper)
        try:
            yield
        finally:
            self._theme = shown
            self._apply_look(shown)

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
        self._labels = (display_pieces(self._source), display_pieces(self._target))
        self._names = names
        if levels is None:
            levels = LOG_LEVELS if mode == "log" else (0.0, top_level(matrix))
        if rows and cols:
            self.image.setImage(display_image(matrix, mode), autoLevels=False, levels=levels)
            self.colorbar.setLevels(values=levels)
        else:
            self.image.clear()
        self._title = f"{title}{' (colour: log10 weight)' if mode == 'log' else ''}"
        self.plot.setTitle(self._title, color=self._theme.plot_text, size="10pt")
        self.axes["bottom"].set_labels(self._labels[0])
        self.axes["left"].set_labels(self._labels[1])
        if reshaped:
            self.plot.vb.setRange(xRange=(0, max(cols, 1)), yRange=(0, max(rows, 1)), padding=0)
        self.fit_ticks()
        row, col = self._hover
        self._hover = (-2, -2)  # force a refresh of label and marks
        self.hover(row if row < rows else -1, col if col < cols else -1)

    def fit_ticks(self, *_) -> None:
        """Fit every token label to the pixels a token has now (token_axis.fit_labels), and give the plot
        the minimum size at which the smallest labels still fit (the scroll area scrolls below it)."""
        if self._fitting > 3:  # axes resizing each other: stop after a few rounds (fit_labels has hysteresis)
            return
        self._fitting += 1
        try:
            vb = self.plot.vb
            (x0, x1), (y0, y1) = vb.viewRange()
            px_col = vb.width() / max(x1 - x0, 1e-9) if vb.width() > 0 else 0.0
            px_row = vb.height() / max(y1 - y0, 1e-9) if vb.height() > 0 else 0.0
            bottom = self.axes["bottom"].apply_fit(px_col)
            left = self.axes["left"].apply_fit(px_row)
            cols, rows = len(self._labels[0]), len(self._labels[1])
            extra_w = max(self.colorbar.width(), _COLORBAR_PX) + _MARGIN_PX  # colour bar and layout margins
            extra_h = max(self.plot.titleLabel.height(), _TITLE_PX) + _MARGIN_PX
            self.graphics.setMinimumSize(int(left.thickness + cols * bottom.min_px + extra_w + 2),
                                         int(bottom.thickness + rows * left.min_px + extra_h + 2))
        finally:
            self._fitting -= 1

    def token_labels(self) -> tuple[list[str], list[str]]:
        """(source, target) labels as shown on the axes (display_piece applied, not elided)."""
        return list(self._labels[0]), list(self._labels[1])

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
        source, target = self._labels
        if row >= 0 and col >= 0:
            text = (f"value under cursor: {rname} '{target[row]}' / {cname} '{source[col]}' = "
                    f"{float(self._matrix[row, col]):.3f}")
        elif row >= 0:
            text = f"value under cursor: {rname} '{target[row]}'"
        elif col >= 0:
            text = f"value under cursor: {cname} '{source[col]}'"
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

    def _mouse_clicked(self, event) -> None:
        """A click on a cell or a token label: that row and/or column (linked views select it)."""
        self._mouse_moved(event.scenePos())
        if event.button() == QtCore.Qt.MouseButton.LeftButton:
            self.clicked.emit(*self._hover)

    def leaveEvent(self, ev) -> None:  # noqa: N802
        self.hover(-1, -1)
        super().leaveEvent(ev)
