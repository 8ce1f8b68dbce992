"""The attention grid: a (layer x head) grid of small heatmaps, layer and overall averages, and a focus view.

`AttentionView` only paints. What it shows is held by the Qt-free `AttentionRows`
(core/analysis/attention_rows.py): one stacked buffer of every cell's rows, which the cells, the focus view
and `data()` (an `AttentionData`, core/analysis/attention_data.py) read as views. One kind of attention is
shown at a time (decoder cross-attention, encoder self-attention, decoder self-attention) as one
`pyqtgraph.GraphicsLayoutWidget`: one ViewBox + ImageItem per cell, rows = target tokens (top to bottom),
columns = source tokens. While decoding streams, `append_step` adds one row to the buffer and points every
cell at its rows (`setImage(..., autoLevels=False, levels=...)`, no re-layout). The finished translation
extends what streamed (its last rows, or nothing: `AttentionRows.extend`); only other content (another
translation or hypothesis, kind, merge toggle, colour scale) re-images every cell, counted in
`full_repaints`. A click on a cell opens `FocusView` (focus_view.py): the large matrix with token ticks, a
colour bar, the value under the cursor and linked highlighting (the hovered row/column lights up in every
cell).

Colour scales: see `heatmap` ("cell", "shared", "log": log10 of the weights with fixed levels (-4, 0)). The
log transform and merged words are applied as the cells paint, never stored.

Limits: streaming keeps at most `max_rows` target rows (`begin(..., max_rows=1024)`); later steps are
counted in `dropped_steps` and not drawn.

A new grid shape met while streaming (the first translation of a model, e.g. 55 cells for 6 layers x 8
heads: ~0.1 s of pyqtgraph set-up, several times that while the decoder competes for the CPU) is built
a slice of cells per event-loop turn (`GRID_BUILD_SLICE_S`), so the event loop is never blocked that
long; `cell_item`, exports and a finished translation complete it at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets
from PySide6.QtCore import Signal

from nmt_desktop.core.analysis.attention_data import KIND_TITLES, KINDS, AttentionData
from nmt_desktop.core.analysis.attention_rows import AttentionRows
from nmt_desktop.core.analysis.words import word_ids

from .. import theme
from . import export
from .focus import FocusView
from .heatmap import COLOR_SCALES, LOG_LEVELS, CellGrid, HeatmapCell, paper_theme, top_level
from ..flow_layout import flow_widget, labelled
from ..labels import fit_width

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation

SCALE_TITLES = {"cell": "per cell", "shared": "shared", "log": "log"}
DEFAULT_MAX_ROWS = 1024
GRID_BUILD_SLICE_S = 0.02  # streaming into a new grid shape: build cells for about this long per event-loop turn


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
        bar = QtWidgets.QHBoxLayout()  # the choices wrap under each other in a narrow window (flow_layout.py)
        bar.addWidget(flow_widget(labelled("Show:", self.kind_combo), self.merge_check,
                                  labelled("Colour scale:", self.scale_combo)))
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
        self.rows = AttentionRows()  # what is shown: every cell's rows, the one buffer the cells paint from
        self._translation: Translation | None = None  # the finished content (None: streaming or nothing)
        self._hypothesis = 0
        self._kind = "cross"
        self._merge = False
        self._scale = "cell"
        self._streaming = False
        self.full_repaints = 0  # times every cell was re-imaged whole: new content, kind, merge or scale
        self.row_paints = 0  # times rows were added to the cells shown: a streamed step, a finish's last rows
        self.heatmaps = CellGrid(self.grid, self._cell_clicked, self._cell_hover, self._cells_built,
                                 lambda: GRID_BUILD_SLICE_S)
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
        self._translation = None
        self.rows.begin(source_tokens, layers, heads, max_rows)
        self._kind = "cross"
        self._highlight = (-1, -1)
        self._update_kind_items()
        self._rebuild()

    def append_step(self, piece: str, cross_attention: np.ndarray) -> None:
        """Add one target row (cross_attention (layers, heads, source_len)) to every cell, in place."""
        if not self._streaming:
            raise RuntimeError("append_step() called without begin()")
        if not self.rows.append(piece, cross_attention):
            self.status_label.setText(f"showing the first {self.rows.max_rows} target tokens")
            return
        self._paint_rows()

    @property
    def streaming(self) -> bool:
        """True between `begin` and the next `set_translation` or `clear`: `append_step` adds rows."""
        return self._streaming

    @property
    def dropped_steps(self) -> int:
        """Streamed steps past `max_rows`: counted, not drawn."""
        return self.rows.dropped

    def clear(self, message: str = "") -> None:
        """Show nothing, and say why in the toolbar (a failed translation, another model): never the attention
        of a text or model the pane no longer names."""
        self._streaming = False
        self._translation = None
        self.rows.clear(self._kind)
        self._rebuild()
        self.status_label.setText(message)

    def set_translation(self, translation: Translation, hypothesis: int = 0) -> None:
        """Show a finished Translation (cross + encoder/decoder self-attention where present); keeps the
        selected kind if the translation has it. The rows that streamed are kept and extended
        (`AttentionRows.extend`: the last rows, or nothing); other content is shown from scratch."""
        self._streaming = False
        self.status_label.setText("")
        self._translation, self._hypothesis = translation, hypothesis
        kinds = self.available_kinds()
        if self._kind not in kinds:
            self._kind = kinds[0] if kinds else "cross"
        self._update_kind_items()
        data = self._finished_data()
        added = self.rows.extend(data) if data is not None else None
        if added is None:
            self._show_finished()
            return
        self.heatmaps.complete()  # a grid still being built: finish it now
        rows, cols = self._shape()
        for cell in self._cells:  # streaming left room below the rows: fit the final ones
            cell.set_extent(rows, cols)
        if added:
            self._paint_rows()

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
        self._show_finished()

    def set_merge_words(self, on: bool) -> None:
        on = bool(on)
        if self.merge_check.isChecked() != on:
            self.merge_check.blockSignals(True)
            self.merge_check.setChecked(on)
            self.merge_check.blockSignals(False)
        if on != self._merge:
            self._merge = on
            self._highlight = (-1, -1)
            self._repaint()

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
            self._repaint(fit=False)

    def available_kinds(self) -> list[str]:
        if self._translation is None:
            return ["cross"] if self._streaming else []
        return AttentionData.kinds_of(self._translation, self._hypothesis)

    def kind(self) -> str:
        return self._kind

    def color_scale(self) -> str:
        return self._scale

    def merge_words(self) -> bool:
        return self._merge

    def _finished_data(self) -> AttentionData | None:
        """The shown kind of the finished translation (views of its arrays); None when there is none."""
        if self._translation is None or self._kind not in self.available_kinds():
            return None
        return AttentionData.from_translation(self._translation, self._kind, self._hypothesis)

    def _show_finished(self) -> None:
        """The finished translation's shown kind into the rows, from scratch."""
        data = self._finished_data()
        if data is None:
            self.rows.clear(self._kind)
        else:
            self.rows.show(data)
        self._rebuild()

    # --- focus & highlight ------------------------------------------------------------------------

    def focus(self, layer: int, head: int) -> None:
        """Open/refresh the focus view on a cell (head -1: layer average; (-1, -1): overall average)."""
        self.rows.cell_index(layer, head)  # validates
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
        if layer >= self.heatmaps.layers or head >= self.heatmaps.heads:
            layer, head = self._focus_key = (-1, -1)
        source, target = self.rows.tokens(self._merge)
        title, levels = KIND_TITLES[self.rows.kind], None
        matrix = np.zeros((0, len(source)), dtype=np.float32)
        if self.heatmaps.size:
            i = self.rows.cell_index(layer, head)
            matrices, top = self.rows.shown(self._merge)
            matrix, levels = matrices[i], self._levels(i, top)
            title = f"{title} · {self.heatmaps.title(i)}"
        self.focus_title = title  # also the CSV export's corner cell
        self.focus_view.set_matrix(matrix, source, target, title, self._scale, levels,
                                   ("target", "source") if self.rows.kind == "cross" else ("query", "key"))

    def _set_highlight(self, row: int, col: int) -> None:
        self._highlight = (row, col)
        rows, cols = self._shape()
        for cell in self._cells:
            cell.set_highlight(row, col, rows, cols)

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
        if not self._merge:
            return None
        return word_ids(self.rows.target_tokens), word_ids(self.rows.source_tokens)

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

    def data(self) -> AttentionData:
        """What is currently shown (after merge): weights (layers, heads, rows, cols), a read-only view of the
        rows held (merged words: computed now)."""
        rows = self.rows
        data = AttentionData(rows.kind, rows.source_tokens, rows.target_tokens, rows.weights())
        return data.merged() if self._merge else data

    def painted_rows(self) -> int:
        """Target rows currently drawn in the grid cells."""
        if not self._cells or self._cells[0].image.image is None:
            return 0
        return int(self._cells[0].image.image.shape[0])

    def cell_item(self, layer: int, head: int) -> HeatmapCell:
        """The grid cell (its `.image` ImageItem, `.box` ViewBox, `.row_mark`/`.col_mark` highlights)."""
        self.heatmaps.complete()  # a grid still being built: finish it now
        return self._cells[self.rows.cell_index(layer, head)]

    @property
    def _cells(self) -> list[HeatmapCell]:
        """The cells built (tests and benchmarks/gui_latency.py look at them)."""
        return self.heatmaps.cells

    @property
    def _layers(self) -> int:
        return self.heatmaps.layers

    @property
    def _heads(self) -> int:
        return self.heatmaps.heads

    def _shape(self) -> tuple[int, int]:
        """(rows, cols) the cells show: pieces, or words when merged."""
        if not self._merge:
            return self.rows.rows, self.rows.cols
        source, target = self.rows.word_groups()
        return len(target), len(source)

    def _rebuild(self) -> None:
        """A grid for the rows' shape (built gradually while streaming), every cell repainted."""
        self.heatmaps.build(self.rows.layers, self.rows.heads, GRID_BUILD_SLICE_S if self._streaming else None)
        self._repaint()

    def _repaint(self, fit: bool = True) -> None:
        """Every cell re-imaged from the rows (new content, kind, merge toggle, colour scale): a full repaint.
        `fit`: the view ranges fitted anew (the rows' count or the columns may have changed)."""
        self.full_repaints += 1
        rows, cols = self._shape()
        if fit and not self._streaming:
            for cell in self._cells:
                cell.set_extent(rows, cols)
        self._paint(0, fit)
        row, col = self._highlight
        self._set_highlight(row if row < rows else -1, col if col < cols else -1)
        if not self.focus_view.isHidden():
            self._refresh_focus()

    def _paint_rows(self) -> None:
        """The cells with the rows added (pyqtgraph re-images a cell whole; the rows held are not recomputed)."""
        self.row_paints += 1
        self._paint()
        if self._highlight[1] >= 0:  # the column bar follows the growing rows
            self._set_highlight(*self._highlight)
        if not self.focus_view.isHidden():
            self._refresh_focus()

    def _paint(self, first: int = 0, fit: bool = False) -> None:
        """Point the cells from `first` on at their rows (the log scale applied per cell as it paints). While
        streaming the view ranges leave room below, so they do not rescale at every step; `fit`: guessed anew."""
        matrices, top = self.rows.shown(self._merge)
        rows, cols = self._shape()
        for i in range(first, len(self._cells)):
            cell = self._cells[i]
            if self._streaming and (fit or rows > cell.y_extent):
                guess = max(rows, int(1.3 * cols) + 2) if fit else max(rows, int(1.5 * cell.y_extent))
                cell.set_extent(guess, cols)
            cell.set_matrix(matrices[i], self._scale, self._levels(i, top))

    def _levels(self, i: int, top: np.ndarray) -> tuple[float, float]:
        """Colour levels of cell `i`; `top`: each cell's largest weight."""
        if self._scale == "log":
            return LOG_LEVELS
        return 0.0, top_level(top if self._scale == "shared" else top[i])

    def _cells_built(self, first: int) -> None:
        """Cells built after the others (a grid built gradually): the current content in them."""
        rows, cols = self._shape()
        extent = max(rows, self._cells[0].y_extent) if self._streaming and first else rows
        for cell in self._cells[first:]:
            cell.set_extent(extent, cols)
            cell.set_highlight(*self._highlight, rows, cols)
        self._paint(first)

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
        self.heatmaps.complete()
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


