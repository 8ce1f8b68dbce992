"""The attention grid: a (layer x head) grid of small heatmaps, layer and overall averages, and a focus view.

What is shown is a core `AttentionData` (core/analysis/attention_data.py). `AttentionView` shows
one kind of attention at a time (decoder cross-attention, encoder self-attention, decoder
self-attention) as one `pyqtgraph.GraphicsLayoutWidget`: one ViewBox + ImageItem per cell, rows =
target tokens (top to bottom), columns = source tokens. While decoding streams, `append_step` adds one
row to every cell in place (preallocated buffers, `setImage(buf[:rows], autoLevels=False, levels=...)`,
no re-layout). A click on a cell opens `FocusView` (focus_view.py): the large matrix with token ticks,
a colour bar, the value under the cursor and linked highlighting (the hovered row/column lights up in
every cell).

Colour scales: see `heatmap` ("cell", "shared", "log": log10 of the weights with fixed levels (-4, 0)).

Limits: streaming keeps at most `max_rows` target rows (`begin(..., max_rows=1024)`); later steps are
counted in `dropped_steps` and not drawn.

A new grid shape met while streaming (the first translation of a model, e.g. 55 cells for 6 layers x 8
heads: ~0.1 s of pyqtgraph set-up, several times that while the decoder competes for the CPU) is built
a slice of cells per event-loop turn (`GRID_BUILD_SLICE_S`), so the event loop is never blocked that
long; `cell_item`, exports and a finished translation complete it at once.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets
from PySide6.QtCore import Signal

from nmt_desktop.core.analysis.attention_data import KIND_TITLES, KINDS, AttentionData
from nmt_desktop.core.analysis.head_names import head_name, layer_name
from nmt_desktop.core.analysis.words import word_ids

from . import export, theme
from .focus_view import FocusView
from .heatmap import COLOR_SCALES, LOG_LEVELS, HeatmapCell, display_image, paper_theme, top_level
from .labels import fit_width

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translation

SCALE_TITLES = {"cell": "per cell", "shared": "shared", "log": "log"}
DEFAULT_MAX_ROWS = 1024
GRID_BUILD_SLICE_S = 0.02  # streaming into a new grid shape: build cells for about this long per event-loop turn


def _stacked(weights: np.ndarray) -> np.ndarray:
    """(L, H, R, C) -> (L*(H+1)+1, R, C): per layer its heads then its head mean; the overall mean last."""
    L, H, R, C = weights.shape
    out = np.zeros((L * (H + 1) + 1, R, C), dtype=np.float32)
    if L == 0 or H == 0:
        return out
    block = out[:-1].reshape(L, H + 1, R, C)
    block[:, :H] = weights
    block[:, H] = weights.mean(axis=1, dtype=np.float64)
    out[-1] = weights.mean(axis=(0, 1), dtype=np.float64)
    return out


# --- the grid view -----------------------------------------------------------------------------------


class AttentionView(QtWidgets.QWidget):
    """Grid of (layer x head) heatmaps + a 'head avg' column + an 'all' cell; selector for kind; merge
    toggle; colour scale combo; a focus view (large heatmap) shown on cell click."""

    cellActivated = Signal(int, int)  # (layer, head); head == -1 for a layer average, (-1, -1) overall
    pointerMoved = Signal(int, int)  # (target token, source token) under the pointer in any heatmap; -1: none
    cellSelected = Signal(int, int)  # the same, clicked in the focus view

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        # toolbar
        self.kind_combo = QtWidgets.QComboBox()
        for kind in KINDS:
            self.kind_combo.addItem(KIND_TITLES[kind], kind)
        self.kind_combo.setToolTip("Which attention the heatmaps show: cross-attention (target → source), or the "
                                   "encoder's or decoder's self-attention")
        self.merge_check = QtWidgets.QCheckBox("Merge subwords into words")
        self.merge_check.setToolTip("Sum over the source pieces of a word, mean over the target pieces of a word")
        self.scale_combo = QtWidgets.QComboBox()
        for mode in COLOR_SCALES:
            self.scale_combo.addItem(SCALE_TITLES[mode], mode)
        self.scale_combo.setToolTip("per cell: each cell 0..its max; shared: 0..max over the grid; "
                                    "log: log10 of the weights, 1e-4..1")
        self.export_button = QtWidgets.QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save the grid or focus view as PNG/SVG, the focus matrix as CSV, "
                                      "or the attention tensors as NPZ/JSON")
        self.export_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QtWidgets.QMenu(self.export_button)
        exports = (("Grid as PNG…", "grid", ".png"), ("Grid as SVG…", "grid", ".svg"),
                   ("Focus view as PNG…", "focus", ".png"), ("Focus view as SVG…", "focus", ".svg"),
                   ("Focus matrix as CSV…", "focus", ".csv"),
                   ("Tensors as NPZ…", "tensors", ".npz"), ("Tensors as JSON…", "tensors", ".json"))
        for text, which, suffix in exports:
            action = menu.addAction(text)
            action.triggered.connect(lambda _checked=False, w=which, s=suffix: self._ask_export(w, s))
        self.export_button.setMenu(menu)
        self.status_label = fit_width(QtWidgets.QLabel(""))  # what is shown; wraps, never widens the window
        self.status_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(QtWidgets.QLabel("Show:"))
        bar.addWidget(self.kind_combo)
        bar.addWidget(self.merge_check)
        bar.addWidget(QtWidgets.QLabel("Colour scale:"))
        bar.addWidget(self.scale_combo)
        bar.addWidget(self.status_label, 1)
        bar.addWidget(self.export_button)
        # grid + focus
        self.grid = pg.GraphicsLayoutWidget()
        self.grid.ci.setSpacing(2)
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.grid)
        self.focus_view = FocusView()
        self.focus_view.hide()
        self.splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.scroll)
        self.splitter.addWidget(self.focus_view)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)

        # state
        self._kind = "cross"
        self._merge = False
        self._scale = "cell"
        self._data: dict[str, AttentionData] = {}  # finished content per available kind (raw pieces)
        self._streaming = False
        self._max_rows = DEFAULT_MAX_ROWS
        self.dropped_steps = 0
        self._s_source: list[str] = []  # streaming: raw source tokens, raw buffer, its rows and pieces
        self._s_buf = np.zeros((0, 0, 0, 0), dtype=np.float32)
        self._s_rows = 0
        self._s_tokens: list[str] = []
        # what the cells show: raw stacked matrices R (cells, capacity, cols) and their display form D
        self._layers = self._heads = 0
        self._cells: list[HeatmapCell] = []
        self._specs: list[tuple[int, int, str, int, int]] = []  # every cell of the grid, built or still to build
        self._build_timer = QtCore.QTimer(self, singleShot=True, interval=0)
        self._build_timer.timeout.connect(lambda: self._build_more(GRID_BUILD_SLICE_S))
        self._R = np.zeros((0, 0, 0), dtype=np.float32)
        self._D = self._R
        self._rows = 0
        self._cellmax = np.zeros(0, dtype=np.float32)
        self._shown_kind = "cross"
        self._shown_source: list[str] = []
        self._shown_target: list[str] = []
        self._focus_key = (-1, -1)
        self._highlight = (-1, -1)

        self.kind_combo.currentIndexChanged.connect(lambda i: self.set_kind(self.kind_combo.itemData(i)))
        self.merge_check.toggled.connect(self.set_merge_words)
        self.scale_combo.currentIndexChanged.connect(lambda i: self.set_color_scale(self.scale_combo.itemData(i)))
        self.focus_view.hovered.connect(self._pointer_at)
        self.focus_view.clicked.connect(lambda row, col: self.cellSelected.emit(*self._to_tokens(row, col)))
        self._update_kind_items()
        theme.follow(self, self._restyle)

    def _restyle(self, look: theme.Theme) -> None:
        """The grid's background and every cell's colours and colour map (the focus view follows by itself)."""
        self._look = look
        self.grid.setBackground(look.plot_background)
        for cell in self._cells:
            cell.restyle(look)

    # --- content ----------------------------------------------------------------------------------

    def begin(self, source_tokens: list[str], layers: int, heads: int, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        """Start streaming cross-attention: clears, sizes the grid, rows = 0. At most `max_rows` rows are kept."""
        self._streaming = True
        self._max_rows = max(1, int(max_rows))
        self.dropped_steps = 0
        self._data = {}
        self._s_source = list(source_tokens)
        self._s_buf = np.zeros((layers, heads, min(64, self._max_rows), len(source_tokens)), dtype=np.float32)
        self._s_rows = 0
        self._s_tokens = []
        self._kind = "cross"
        self._highlight = (-1, -1)
        self._update_kind_items()
        self._render()

    def append_step(self, piece: str, cross_attention: np.ndarray) -> None:
        """Add one target row (cross_attention (layers, heads, source_len)) to every cell, in place."""
        if not self._streaming:
            raise RuntimeError("append_step() called without begin()")
        att = np.asarray(cross_attention, dtype=np.float32)
        L, H, _, S = self._s_buf.shape
        if att.shape != (L, H, S):
            raise ValueError(f"cross_attention must have shape {(L, H, S)}, got {att.shape}")
        r = self._s_rows
        if r >= self._max_rows:
            self.dropped_steps += 1
            self.status_label.setText(f"showing the first {self._max_rows} target tokens")
            return
        if r >= self._s_buf.shape[2]:
            self._s_buf = _grown(self._s_buf, 2, min(self._max_rows, 2 * r))
        self._s_buf[:, :, r] = att
        self._s_rows = r + 1
        self._s_tokens.append(piece)
        if self._merge or len(self._specs) != L * (H + 1) + 1:
            self._render()  # merged words change as pieces arrive: recompute (not the cheap path)
            return
        # cheap path: write one row of the stacked raw/display buffers, re-point every ImageItem
        if r >= self._R.shape[1]:
            capacity = min(self._max_rows, max(2 * r, 16))
            log = self._D is not self._R
            self._R = _grown(self._R, 1, capacity)
            self._D = _grown(self._D, 1, capacity) if log else self._R
        block = np.empty((L, H + 1, S), dtype=np.float32)
        block[:, :H] = att
        block[:, H] = att.mean(axis=1)
        row = np.concatenate([block.reshape(L * (H + 1), S), att.mean(axis=(0, 1))[None]], axis=0)
        self._R[:, r] = row
        if self._D is not self._R:
            self._D[:, r] = display_image(row, self._scale)
        self._cellmax = np.maximum(self._cellmax, row.max(axis=1)) if S else self._cellmax
        self._rows = r + 1
        self._shown_target.append(piece)
        self._paint_cells()
        if not self.focus_view.isHidden():
            self._refresh_focus()

    @property
    def streaming(self) -> bool:
        """True between `begin` and the next `set_translation` or `clear`: `append_step` adds rows."""
        return self._streaming

    def clear(self, message: str = "") -> None:
        """Show nothing, and say why in the toolbar (a failed translation, another model): never the attention
        of a text or model the pane no longer names."""
        self._streaming = False
        self.dropped_steps = 0
        self._data = {}
        self._render()
        self.status_label.setText(message)

    def set_translation(self, translation: Translation, hypothesis: int = 0) -> None:
        """Show a finished Translation (cross + encoder/decoder self-attention where present); keeps the
        selected kind if the translation has it."""
        self._streaming = False
        self.dropped_steps = 0
        self.status_label.setText("")
        self._data = {}
        for kind in KINDS:
            try:
                self._data[kind] = AttentionData.from_translation(translation, kind, hypothesis)
            except ValueError:
                pass
        if self._kind not in self._data:
            self._kind = next((k for k in KINDS if k in self._data), "cross")
        self._update_kind_items()
        self._render()

    def set_kind(self, kind: str) -> None:
        """Show "cross" | "encoder" | "decoder"; a kind the content lacks is ignored (disabled in the selector)."""
        if kind not in KINDS:
            raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")
        if kind not in self.available_kinds() or kind == self._kind:
            self._update_kind_items()
            return
        self._kind = kind
        self._highlight = (-1, -1)
        self._update_kind_items()
        self._render()

    def set_merge_words(self, on: bool) -> None:
        on = bool(on)
        if self.merge_check.isChecked() != on:
            self.merge_check.blockSignals(True)
            self.merge_check.setChecked(on)
            self.merge_check.blockSignals(False)
        if on != self._merge:
            self._merge = on
            self._highlight = (-1, -1)
            self._render()

    def set_color_scale(self, mode: str) -> None:
        """"cell" (each cell 0..its max) | "shared" (0..max over the grid) | "log" (log10 weights, levels (-4, 0))."""
        if mode not in COLOR_SCALES:
            raise ValueError(f"unknown colour scale {mode!r}; expected one of {', '.join(COLOR_SCALES)}")
        index = self.scale_combo.findData(mode)
        if self.scale_combo.currentIndex() != index:
            self.scale_combo.blockSignals(True)
            self.scale_combo.setCurrentIndex(index)
            self.scale_combo.blockSignals(False)
        if mode != self._scale:
            self._scale = mode
            self._D = display_image(self._R, mode) if mode == "log" else self._R
            self._paint_cells()
            if not self.focus_view.isHidden():
                self._refresh_focus()

    def available_kinds(self) -> list[str]:
        if self._streaming:
            return ["cross"]
        return [k for k in KINDS if k in self._data]

    def kind(self) -> str:
        return self._kind

    def color_scale(self) -> str:
        return self._scale

    def merge_words(self) -> bool:
        return self._merge

    # --- focus & highlight ------------------------------------------------------------------------

    def focus(self, layer: int, head: int) -> None:
        """Open/refresh the focus view on a cell (head -1: layer average; (-1, -1): overall average)."""
        self._cell_index(layer, head)  # validates
        self._focus_key = (layer, head)
        self.focus_view.show()
        self._refresh_focus()

    def focused_cell(self) -> tuple[int, int]:
        return self._focus_key

    def highlight(self) -> tuple[int, int]:
        """The (row, col) highlighted in every cell ((-1, -1): none)."""
        return self._highlight

    def _refresh_focus(self) -> None:
        layer, head = self._focus_key
        if layer >= self._layers or head >= self._heads:
            layer, head = self._focus_key = (-1, -1)
        i = self._cell_index(layer, head) if self._specs else None
        if i is None:
            matrix = np.zeros((0, len(self._shown_source)), dtype=np.float32)
            title = KIND_TITLES[self._shown_kind]
        else:
            matrix = self._R[i, : self._rows]
            title = f"{KIND_TITLES[self._shown_kind]} · {self._specs[i][2]}"
        self.focus_title = title  # also the CSV export's corner cell
        self.focus_view.set_matrix(matrix, self._shown_source, self._shown_target, title, self._scale,
                                   self._levels_for(i) if i is not None else None,
                                   ("target", "source") if self._shown_kind == "cross" else ("query", "key"))

    def _set_highlight(self, row: int, col: int) -> None:
        self._highlight = (row, col)
        cols = len(self._shown_source)
        for cell in self._cells:
            cell.set_highlight(row, col, self._rows, cols)

    def _cell_hover(self, row: int, col: int) -> None:
        if not self.focus_view.isHidden():
            self.focus_view.hover(row, col)  # emits hovered -> _pointer_at
        else:
            self._pointer_at(row, col)

    def _pointer_at(self, row: int, col: int) -> None:
        self._set_highlight(row, col)
        self.pointerMoved.emit(*self._to_tokens(row, col))

    def show_highlight(self, row: int, col: int) -> None:
        """Light up target token `row` and source token `col` (-1: none) in every cell and the focus view: what
        another view points at (linked views); with "merge words" on, the words they belong to."""
        row, col = self._to_shown(row, col)
        self._set_highlight(row, col)
        self.focus_view.set_highlight(row, col)

    def _word_maps(self) -> tuple[list[int | None], list[int | None]] | None:
        """(target, source) word index of each token while words are merged, else None."""
        data = self._raw_data() if self._merge else None
        return None if data is None else (word_ids(data.target_tokens), word_ids(data.source_tokens))

    def _to_shown(self, row: int, col: int) -> tuple[int, int]:
        maps = self._word_maps()
        if maps is None:
            return row, col
        pick = [m[i] if 0 <= i < len(m) and m[i] is not None else -1 for m, i in zip(maps, (row, col))]
        return pick[0], pick[1]

    def _to_tokens(self, row: int, col: int) -> tuple[int, int]:
        """Shown (row, col) -> token indices: the first piece of a merged word."""
        maps = self._word_maps()
        if maps is None:
            return row, col
        first = [next((i for i, w in enumerate(m) if w == k), -1) if k >= 0 else -1 for m, k in zip(maps, (row, col))]
        return first[0], first[1]

    def _cell_clicked(self, layer: int, head: int) -> None:
        self.focus(layer, head)
        self.cellActivated.emit(layer, head)

    # --- what is shown ----------------------------------------------------------------------------

    def _raw_data(self) -> AttentionData | None:
        if self._streaming:
            return AttentionData("cross", self._s_source, self._s_tokens, self._s_buf[:, :, : self._s_rows])
        return self._data.get(self._kind)

    def data(self) -> AttentionData:
        """What is currently shown (after merge): weights (layers, heads, rows, cols), a copy."""
        L, H = self._layers, self._heads
        if not self._cells:
            return AttentionData(self._shown_kind, self._shown_source, [], np.zeros((0, 0, 0, len(self._shown_source))))
        weights = self._R[:-1].reshape(L, H + 1, self._R.shape[1], -1)[:, :H, : self._rows].copy()
        return AttentionData(self._shown_kind, self._shown_source, self._shown_target[: self._rows], weights)

    def painted_rows(self) -> int:
        """Target rows currently drawn in the grid cells."""
        if not self._cells or self._cells[0].image.image is None:
            return 0
        return int(self._cells[0].image.image.shape[0])

    def cell_item(self, layer: int, head: int) -> HeatmapCell:
        """The grid cell (its `.image` ImageItem, `.box` ViewBox, `.row_mark`/`.col_mark` highlights)."""
        self._build_more(None)  # a grid still being built: finish it now
        return self._cells[self._cell_index(layer, head)]

    def _cell_index(self, layer: int, head: int) -> int:
        L, H = self._layers, self._heads
        if (layer, head) == (-1, -1):
            return L * (H + 1)
        if not (0 <= layer < L and -1 <= head < H):
            raise IndexError(f"no cell (layer {layer}, head {head}) in a {L} x {H} grid")
        return layer * (H + 1) + (H if head == -1 else head)

    def _render(self) -> None:
        """Recompute every cell from the current content, kind, merge toggle and colour scale."""
        data = self._raw_data()
        if data is None:
            data = AttentionData(self._kind, [], [], np.zeros((0, 0, 0, 0), dtype=np.float32))
        if self._merge:
            data = data.merged()
        self._build_grid(data.layers, data.heads, gradual=self._streaming)
        self._shown_kind = data.kind
        self._shown_source = list(data.source_tokens)
        self._shown_target = list(data.target_tokens[: data.rows])
        self._rows = data.rows
        self._R = _stacked(data.weights)
        self._D = display_image(self._R, self._scale) if self._scale == "log" else self._R
        self._cellmax = self._R.max(axis=(1, 2)) if self._R.size else np.zeros(len(self._R), dtype=np.float32)
        if not self._streaming:
            for cell in self._cells:
                cell.set_extent(data.rows, data.cols)
        self._paint_cells(reset_extent=self._streaming)
        row, col = self._highlight
        self._set_highlight(row if row < data.rows else -1, col if col < data.cols else -1)
        if not self.focus_view.isHidden():
            self._refresh_focus()

    def _levels_for(self, i: int) -> tuple[float, float]:
        if self._scale == "log":
            return LOG_LEVELS
        if self._scale == "shared":
            return 0.0, top_level(self._cellmax)
        return 0.0, top_level(self._cellmax[i])

    def _paint_cells(self, reset_extent: bool = False) -> None:
        rows, cols = self._rows, len(self._shown_source)
        for i, cell in enumerate(self._cells):
            if self._streaming and (reset_extent or rows > cell.y_extent):
                # leave room below so the view does not rescale at every step
                guess = max(rows, int(1.3 * cols) + 2) if reset_extent else max(rows, int(1.5 * cell.y_extent))
                cell.set_extent(guess, cols)
            cell.set_image(self._D[i, :rows], self._levels_for(i))
        if self._highlight[1] >= 0:  # the column bar follows the growing rows
            self._set_highlight(*self._highlight)

    def _build_grid(self, layers: int, heads: int, gradual: bool = False) -> None:
        """Cells for a layers x heads grid; `gradual`: the first slice now, the rest on later event-loop turns."""
        if (layers, heads) == (self._layers, self._heads) and self._specs:
            if not gradual:
                self._build_cells(None)  # the caller paints every cell next
            return
        self._build_timer.stop()
        self.grid.clear()
        self._cells = []
        self._specs = []
        self._layers, self._heads = layers, heads
        if layers == 0 or heads == 0:
            return
        for layer in range(layers):
            for head in list(range(heads)) + [-1]:
                title = head_name(layer, head) if head >= 0 else f"{layer_name(layer)} avg"
                col = head if head >= 0 else heads
                self._specs.append((layer, col, title, layer, head))
        self._specs.append((layers, heads, "all", -1, -1))
        self.grid.setMinimumSize(70 * (heads + 1), 70 * (layers + 1))
        self._build_cells(GRID_BUILD_SLICE_S if gradual else None)

    def _build_cells(self, budget_s: float | None) -> None:
        """Make the cells still missing: all (`budget_s` None), else for about `budget_s` (one at least) and the
        rest on a later event-loop turn."""
        start = time.perf_counter()
        while len(self._cells) < len(self._specs):
            self._cells.append(self._make_cell(*self._specs[len(self._cells)]))
            if budget_s is not None and time.perf_counter() - start > budget_s:
                break
        if len(self._cells) < len(self._specs):
            self._build_timer.start()

    def _build_more(self, budget_s: float | None) -> None:
        """Build more of a grid begun gradually (all of it: None) and show the current content in the new cells."""
        first = len(self._cells)
        if first >= len(self._specs):
            return
        self._build_cells(budget_s)
        rows, cols = self._rows, len(self._shown_source)
        extent = max(rows, self._cells[0].y_extent) if self._streaming and first else rows
        for i in range(first, len(self._cells)):
            cell = self._cells[i]
            cell.set_extent(extent, cols)
            cell.set_image(self._D[i, :rows], self._levels_for(i))
            cell.set_highlight(*self._highlight, rows, cols)

    def _make_cell(self, row: int, col: int, title: str, layer: int, head: int) -> HeatmapCell:
        return HeatmapCell(self.grid.ci, row, col, title, lambda: self._cell_clicked(layer, head), self._cell_hover)

    def _update_kind_items(self) -> None:
        available = self.available_kinds()
        model = self.kind_combo.model()
        self.kind_combo.blockSignals(True)
        for i, kind in enumerate(KINDS):
            model.item(i).setEnabled(kind in available)
        self.kind_combo.setCurrentIndex(KINDS.index(self._kind))
        self.kind_combo.blockSignals(False)

    # --- export -----------------------------------------------------------------------------------

    def export_grid(self, path: str) -> None:
        """The whole grid as .png or .svg (by suffix)."""
        self._build_more(None)
        export.ensure_laid_out(self.grid)
        shown = self._look
        self._restyle(paper_theme())  # light figure, the chosen colour map
        try:
            export.save_scene_image(path, self.grid.ci)
        finally:
            self._restyle(shown)

    def export_focus(self, path: str) -> None:
        """The focus view as .png/.svg, or its matrix as .csv (header: source tokens; first column: target)."""
        self._refresh_focus()
        if Path(path).suffix.lower() == ".csv":
            source, target = self.focus_view.tokens()
            export.save_csv(path, self.focus_view.matrix(), source, target, title=self.focus_title)
            return
        export._suffix(path, export.IMAGE_SUFFIXES)
        export.ensure_laid_out(self.focus_view.graphics)
        self.focus_view.fit_ticks()  # labels fitted to the size it is exported at
        export.ensure_laid_out(self.focus_view.graphics)
        with self.focus_view.paper():
            export.save_scene_image(path, self.focus_view.graphics.ci)

    def export_tensors(self, path: str) -> None:
        """What is shown (kind, merge applied) as .npz (weights, source_tokens, target_tokens, kind; no
        pickled objects) or .json ({"kind", "source_tokens", "target_tokens", "weights"})."""
        export.save_tensors(path, self.data())

    def _ask_export(self, which: str, suffix: str) -> None:
        filters = {".png": "PNG image (*.png)", ".svg": "SVG image (*.svg)", ".csv": "CSV table (*.csv)",
                   ".npz": "NumPy arrays (*.npz)", ".json": "JSON (*.json)"}
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export attention", f"attention-{which}{suffix}",
                                                        filters[suffix])
        if not path:
            return
        if not path.lower().endswith(suffix):
            path += suffix
        try:
            {"grid": self.export_grid, "focus": self.export_focus, "tensors": self.export_tensors}[which](path)
        except (OSError, ValueError) as exc:
            QtWidgets.QMessageBox.warning(self, "Export failed", str(exc))


def _grown(arr: np.ndarray, axis: int, capacity: int) -> np.ndarray:
    """A copy of `arr` with `axis` enlarged to `capacity` (zeros after the old content)."""
    if arr.shape[axis] >= capacity:
        return arr
    shape = list(arr.shape)
    shape[axis] = capacity
    out = np.zeros(shape, dtype=arr.dtype)
    index = [slice(None)] * arr.ndim
    index[axis] = slice(0, arr.shape[axis])
    out[tuple(index)] = arr
    return out
