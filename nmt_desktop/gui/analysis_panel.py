"""The Analysis tab: head statistics, head ablation, word alignments and coverage warnings for the
current translation (the Translate tab's finished sentence).

Everything shown is computed by `nmt_desktop.core.analysis.heads`; this module only lays it out.
Re-translation with heads switched off runs on a `CallWorker` in its own QThread; every result carries
a request id and stale ones are ignored.
"""

from __future__ import annotations

import difflib
import html
import logging
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QRectF, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPainter, QPen
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog,
                               QGraphicsRectItem, QGraphicsScene, QGraphicsView, QGridLayout, QHBoxLayout, QHeaderView,
                               QLabel, QListWidget, QPlainTextEdit, QPushButton, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem, QTabWidget,
                               QTextBrowser, QVBoxLayout, QWidget)

from nmt_desktop.core.analysis import heads as analysis
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.translator import split_sentences

from .heatmap import colormap, top_level
from .workers import WorkerThread, _one_line

log = logging.getLogger("nmt_desktop.gui.analysis")

STAT_FIELDS = ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage")
STAT_TITLES = {"entropy": "Entropy", "eos_share": "</s> share", "punct_share": "Punct. share",
               "diagonality": "Diagonality", "monotonicity": "Monotonicity", "coverage": "Coverage"}
ABLATION_MODES = ("Zero", "Probe mean")
ALIGN_LAYERS = ("Last layer (avg heads)", "All layers (avg)")  # then "Layer N (avg heads)"


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


class CallWorker(QObject):
    """Runs `fn()` calls in its worker thread: `finished(id, result)` or `failed(id, message)`."""

    finished = Signal(int, object)
    failed = Signal(int, str)

    @Slot(int, object)
    def run(self, request_id: int, fn: Any) -> None:
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 - reported to the UI as one line
            log.exception("analysis job %d failed", request_id)
            self.failed.emit(request_id, _one_line(exc))
            return
        self.finished.emit(request_id, result)


# --- head statistics --------------------------------------------------------------------------------


class _JobView(QWidget):
    """A view that runs one background job at a time on its own thread; results of superseded
    requests (an older request id) are ignored by the subclass's _on_finished/_on_failed."""

    _job = Signal(int, object)

    def _start_worker(self, name: str) -> None:
        self.worker = CallWorker()
        self._thread = WorkerThread(self.worker, name)
        self._job.connect(self.worker.run)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)

    def shutdown(self) -> None:
        self.request_id = 0
        self._thread.stop()


class HeadStatsView(QWidget):
    """A sortable table of every head's statistics and a grid of small heatmaps ordered by a statistic."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.rows: list[analysis.HeadStats] = []
        self.attention: np.ndarray | None = None  # (L, H, T, S)
        self.table = QTableWidget(0, 2 + len(STAT_FIELDS))
        self.table.setHorizontalHeaderLabels(["Layer", "Head"] + [STAT_TITLES[f] for f in STAT_FIELDS])
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
        self.graphics.setBackground("w")
        self.grid_order: list[tuple[int, int]] = []
        self._grid_images: list[pg.ImageItem] = []
        self._grid_dirty = False  # the grid is rebuilt when shown: ~100 ms of pyqtgraph set-up per fill
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

    def set_translation(self, translation: Any) -> None:
        self.attention = translation.attention
        self.rows = analysis.head_stats(translation)
        self.hint.setText(f"{len(self.rows)} cross-attention heads · {translation.attention.shape[2]} target × "
                          f"{translation.attention.shape[3]} source tokens")
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self.rows))
        for r, s in enumerate(self.rows):
            self.table.setItem(r, 0, NumericItem(s.layer * 10000 + s.head, str(s.layer)))  # ties: head order
            self.table.setItem(r, 1, NumericItem(s.head, str(s.head)))
            for c, name in enumerate(STAT_FIELDS):
                value = getattr(s, name)
                self.table.setItem(r, 2 + c, NumericItem(value, f"{value:.3f}"))
        self.table.setSortingEnabled(True)
        self._fill_grid()

    def clear(self) -> None:
        self.rows, self.attention = [], None
        self.table.setRowCount(0)
        self._fill_grid()

    def column_values(self, column: int) -> list[float]:
        """The table's values in `column`, top to bottom, as shown (sorted or not)."""
        return [float(self.table.item(r, column).data(Qt.UserRole)) for r in range(self.table.rowCount())]

    def sort_by(self, field_name: str, descending: bool = True) -> None:
        column = 2 + STAT_FIELDS.index(field_name)
        self.table.sortItems(column, Qt.DescendingOrder if descending else Qt.AscendingOrder)

    def set_grid_statistic(self, field_name: str) -> None:
        self.sort_combo.setCurrentIndex(STAT_FIELDS.index(field_name))

    @property
    def grid_images(self) -> list[pg.ImageItem]:
        """The grid's images in `grid_order` (built now if the grid is waiting to be shown)."""
        if self._grid_dirty:
            self._build_grid()
        return self._grid_images

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        if self._grid_dirty:
            self._build_grid()

    def _fill_grid(self) -> None:
        """Order the grid; build its cells now if visible, else when first shown (a translation
        finished on the Translate tab must not stall the event loop for an unseen grid)."""
        field_name = STAT_FIELDS[max(0, self.sort_combo.currentIndex())]
        ordered = sorted(self.rows, key=lambda s: -getattr(s, field_name))  # stable: ties in (layer, head) order
        self.grid_order = [(s.layer, s.head) for s in ordered]
        self._grid_dirty = True
        if self.isVisible():
            self._build_grid()

    def _build_grid(self) -> None:
        self._grid_dirty = False
        self.graphics.clear()
        self._grid_images = []
        field_name = STAT_FIELDS[max(0, self.sort_combo.currentIndex())]
        ordered = sorted(self.rows, key=lambda s: -getattr(s, field_name))
        if self.attention is None or not ordered:
            return
        columns = max(1, min(self.attention.shape[1], 6))
        for i, s in enumerate(ordered):
            r, c = divmod(i, columns)
            sub = self.graphics.addLayout(row=r, col=c)
            sub.addLabel(f"L{s.layer} H{s.head} · {getattr(s, field_name):.3f}", row=0, col=0, size="8pt",
                         color="#333")
            box = sub.addViewBox(row=1, col=0, lockAspect=False, enableMouse=False, invertY=True)
            box.setMenuEnabled(False)
            matrix = self.attention[s.layer, s.head].astype(np.float32)
            image = pg.ImageItem(matrix, axisOrder="row-major", levels=(0.0, top_level(matrix)))
            image.setColorMap(colormap())
            box.addItem(image)
            self._grid_images.append(image)


# --- head ablation ----------------------------------------------------------------------------------


class AblationView(_JobView):
    """Switch heads off (zeroed or replaced by their probe mean), re-translate, compare with the original."""

    retranslated = Signal(object)  # the ablated Translation

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translator: Any = None
        self.translation: Any = None
        self.cfg: DecodeConfig | None = None
        self.ablated: Any = None
        self.request_id = 0
        self._next_id = 1
        self.boxes: dict[tuple[int, int], QCheckBox] = {}
        self.grid = QGridLayout()
        self.mode = QComboBox()
        self.mode.addItems(ABLATION_MODES)
        self.mode.setToolTip("Zero: the head's output is 0. Probe mean: its mean output over the probe sentences.")
        self.mode.currentIndexChanged.connect(lambda i: self.probe.setEnabled(i == 1))
        self.probe = QPlainTextEdit()
        self.probe.setPlaceholderText("Probe sentences for the mean, one a line (empty: the current input's sentences)")
        self.probe.setMaximumHeight(80)
        self.probe.setEnabled(False)
        self.all_button = QPushButton("All")
        self.all_button.clicked.connect(lambda: self.set_all(True))
        self.none_button = QPushButton("None")
        self.none_button.clicked.connect(lambda: self.set_all(False))
        self.run_button = QPushButton("Re-translate")
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(lambda: self.retranslate())
        self.original = QTextBrowser()
        self.result = QTextBrowser()
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)

        controls = QWidget()
        cl = QVBoxLayout(controls)
        cl.addWidget(QLabel("Heads to switch off (rows: layers, columns: heads)"))
        cl.addLayout(self.grid)
        sel = QHBoxLayout()
        sel.addWidget(self.all_button)
        sel.addWidget(self.none_button)
        sel.addStretch(1)
        cl.addLayout(sel)
        mode_row = QHBoxLayout()
        mode_row.addWidget(QLabel("Mode"))
        mode_row.addWidget(self.mode, 1)
        cl.addLayout(mode_row)
        cl.addWidget(self.probe)
        cl.addWidget(self.run_button)
        cl.addStretch(1)
        texts = QWidget()
        tl = QVBoxLayout(texts)
        tl.addWidget(QLabel("Original"))
        tl.addWidget(self.original, 1)
        tl.addWidget(QLabel("With the heads switched off (changes highlighted)"))
        tl.addWidget(self.result, 1)
        tl.addWidget(self.status)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(controls)
        split.addWidget(texts)
        split.setSizes([330, 700])
        QVBoxLayout(self).addWidget(split)

        self._start_worker("analysis-worker")
        self._update_enabled()

    @property
    def running(self) -> bool:
        return self.request_id != 0

    def set_translator(self, translator: Any) -> None:
        self.translator = translator
        self.request_id = 0
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.boxes = {}
        if translator is not None:
            for layer, head in analysis.all_heads(translator):
                box = QCheckBox(f"{layer}:{head}")
                box.setToolTip(f"decoder layer {layer}, cross-attention head {head}")
                self.grid.addWidget(box, layer, head)
                self.boxes[(layer, head)] = box
        self._update_enabled()

    def set_translation(self, translation: Any, cfg: DecodeConfig | None = None) -> None:
        self.translation, self.cfg, self.ablated = translation, cfg, None
        self.original.setHtml(_tokens_html(translation.target_tokens, set()))
        self.result.clear()
        self.status.setText("")
        self._update_enabled()

    def set_all(self, on: bool) -> None:
        for box in self.boxes.values():
            box.setChecked(on)

    def selected_heads(self) -> list[tuple[int, int]]:
        return [key for key, box in self.boxes.items() if box.isChecked()]

    def set_heads(self, heads: list[tuple[int, int]]) -> None:
        for key, box in self.boxes.items():
            box.setChecked(key in set(heads))

    def _update_enabled(self) -> None:
        self.run_button.setEnabled(self.translator is not None and self.translation is not None
                                   and not self.running)

    def retranslate(self) -> int:
        """Re-translate the current input with the selected heads off, on the worker thread; returns the id."""
        if self.translator is None or self.translation is None:
            return 0
        translator, text, heads = self.translator, self.translation.source, self.selected_heads()
        cfg = self.cfg or DecodeConfig(attention=True, alternatives=5)
        mean_mode = self.mode.currentIndex() == 1
        probe = [line for line in self.probe.toPlainText().splitlines() if line.strip()] or split_sentences(text) \
            or [text]

        def job() -> Any:
            if not heads:
                return translator.translate(text, cfg)
            if mean_mode:
                override = analysis.mean_override(analysis.head_means(translator, probe), heads)
                return translator.translate(text, cfg, head_override=override)
            return translator.translate(text, cfg, head_mask=analysis.ablation_mask(translator, heads))

        self.request_id = self._next_id
        self._next_id += 1
        self.status.setText(f"Re-translating with {len(heads)} head(s) "
                            f"{'replaced by their probe mean' if mean_mode else 'zeroed'}…")
        self._update_enabled()
        self._job.emit(self.request_id, job)
        return self.request_id

    def _on_finished(self, request_id: int, translation: Any) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.ablated = translation
        old, new = self.translation.target_tokens, translation.target_tokens
        changed_old, changed_new = token_diff(old, new)
        self.original.setHtml(_tokens_html(old, changed_old))
        self.result.setHtml(_tokens_html(new, changed_new))
        self.status.setText("Same translation as the original." if old == new else
                            f"{len(changed_new)} of {len(new)} tokens changed (highlighted).")
        self._update_enabled()
        self.retranslated.emit(translation)

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.status.setText(f"Re-translation failed: {message}")
        self._update_enabled()


def token_diff(old: list[str], new: list[str]) -> tuple[set[int], set[int]]:
    """Indices of the tokens of `old` and of `new` that are not part of their longest matching blocks."""
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    same_old, same_new = set(), set()
    for block in matcher.get_matching_blocks():
        same_old.update(range(block.a, block.a + block.size))
        same_new.update(range(block.b, block.b + block.size))
    return set(range(len(old))) - same_old, set(range(len(new))) - same_new


def _tokens_html(tokens: list[str], marked: set[int], color: str = "#fde68a") -> str:
    parts = []
    for i, piece in enumerate(tokens):
        text = html.escape(piece) or "&nbsp;"
        style = f"background-color:{color}; font-weight:600;" if i in marked else "background-color:#eef2ff;"
        parts.append(f'<span style="{style}">{text}</span>')
    return f'<div style="font-size:13pt; line-height:160%;">{" ".join(parts)}</div>'


# --- alignments ---------------------------------------------------------------------------------------


def words_of(pieces: list[str]) -> list[str]:
    """The words (pieces joined, word-start marker removed) in core.analysis.word_ids order."""
    ids = analysis.word_ids(pieces)
    words: list[str] = []
    for piece, w in zip(pieces, ids):
        if w is None:
            continue
        if w >= len(words):
            words.append("")
        words[w] += piece
    return [w.replace(analysis.WORD_START, " ").strip() or w for w in words]


class AlignmentView(QWidget):
    """Source words (top) linked to target words (bottom) by word alignments from attention."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translation: Any = None
        self.links: list[tuple[int, int]] = []
        self.lines: list[Any] = []
        self.layer = QComboBox()
        self.layer.setToolTip("Which attention the alignment reads (heads averaged)")
        self.method = QComboBox()
        self.method.addItems(["argmax", "threshold"])
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.01, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setValue(0.3)
        self.threshold.setEnabled(False)
        self.copy_button = QPushButton("Copy Pharaoh")
        self.copy_button.clicked.connect(self.copy_pharaoh)
        self.export_button = QPushButton("Export .txt…")
        self.export_button.clicked.connect(self._ask_export)
        self.pharaoh_label = QLabel("")
        self.pharaoh_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.pharaoh_label.setWordWrap(True)
        self.scene = QGraphicsScene(self)
        self.graphics = QGraphicsView(self.scene)
        self.graphics.setRenderHint(QPainter.Antialiasing)
        self.graphics.setBackgroundBrush(QBrush(QColor("#ffffff")))
        row = QHBoxLayout()
        row.addWidget(QLabel("Attention"))
        row.addWidget(self.layer, 1)
        row.addWidget(QLabel("Method"))
        row.addWidget(self.method)
        row.addWidget(self.threshold)
        row.addStretch(1)
        row.addWidget(self.copy_button)
        row.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.pharaoh_label)
        self.layer.currentIndexChanged.connect(self.refresh)
        self.method.currentIndexChanged.connect(self._method_changed)
        self.threshold.valueChanged.connect(self.refresh)

    def set_layers(self, layers: int) -> None:
        self.layer.blockSignals(True)
        self.layer.clear()
        self.layer.addItems(list(ALIGN_LAYERS) + [f"Layer {i} (avg heads)" for i in range(layers)])
        self.layer.blockSignals(False)

    def layer_choice(self) -> int | None:
        """The `layer` argument of core.analysis.align_words for the combo's choice."""
        index = self.layer.currentIndex()
        return -1 if index <= 0 else (None if index == 1 else index - 2)

    def _method_changed(self) -> None:
        self.threshold.setEnabled(self.method.currentText() == "threshold")
        self.refresh()

    def set_translation(self, translation: Any) -> None:
        if self.layer.count() == 0:
            self.set_layers(translation.attention.shape[0])
        self.translation = translation
        self.refresh()

    def current_links(self) -> list[tuple[int, int]]:
        if self.translation is None or self.translation.attention is None:
            return []
        return analysis.align_words(self.translation, layer=self.layer_choice(), method=self.method.currentText(),
                                    threshold=self.threshold.value())

    def pharaoh(self) -> str:
        return analysis.to_pharaoh(self.links)

    def copy_pharaoh(self) -> None:
        QGuiApplication.clipboard().setText(self.pharaoh())

    def export(self, path: str | Path) -> None:
        Path(path).write_text(self.pharaoh() + "\n", encoding="utf-8")

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export alignment", "alignment.txt", "Text (*.txt)")
        if path:
            self.export(path)

    def refresh(self) -> None:
        self.scene.clear()
        self.lines = []
        self.links = self.current_links()
        self.pharaoh_label.setText(f"Pharaoh: {self.pharaoh()}" if self.translation is not None else "")
        if self.translation is None:
            return
        src, tgt = words_of(self.translation.source_tokens), words_of(self.translation.target_tokens)
        font = QFont()
        font.setPointSize(11)
        top = self._word_boxes(src, 0.0, font, QColor("#e0e7ff"))
        bottom = self._word_boxes(tgt, 140.0, font, QColor("#dcfce7"))
        pen = QPen(QColor(79, 70, 229, 200), 2)
        for i, j in self.links:
            if i < len(top) and j < len(bottom):
                a, b = top[i], bottom[j]
                self.lines.append(self.scene.addLine(a.center().x(), a.bottom(), b.center().x(), b.top(), pen))
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-10, -10, 10, 10))

    def _word_boxes(self, words: list[str], y: float, font: QFont, fill: QColor) -> list[QRectF]:
        rects, x = [], 0.0
        for word in words:
            text = self.scene.addSimpleText(word, font)
            w = text.boundingRect().width() + 14
            h = text.boundingRect().height() + 8
            rect = QRectF(x, y, w, h)
            self.scene.addRect(rect, QPen(QColor("#9ca3af")), QBrush(fill))
            text.setZValue(1)
            text.setPos(x + 7, y + 4)
            rects.append(rect)
            x += w + 12
        return rects


# --- coverage -------------------------------------------------------------------------------------------


class CoverageView(QWidget):
    """Possible omissions (source words with little attention) and diffuse target tokens."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.warnings: list[analysis.CoverageWarning] = []
        self.low = QDoubleSpinBox()
        self.low.setRange(0.0, 5.0)
        self.low.setSingleStep(0.05)
        self.low.setValue(0.3)
        self.low.setToolTip("Flag source words receiving less total attention than this")
        self.low.valueChanged.connect(self.refresh)
        self.list = QListWidget()
        self.tokens = QTextBrowser()
        self.translation: Any = None
        row = QHBoxLayout()
        row.addWidget(QLabel("Omission threshold"))
        row.addWidget(self.low)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.tokens)
        layout.addWidget(self.list, 1)

    def set_translation(self, translation: Any) -> None:
        self.translation = translation
        self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        self.warnings = [] if self.translation is None else analysis.coverage_warnings(self.translation,
                                                                                      low=self.low.value())
        if self.translation is None:
            self.tokens.clear()
            return
        for w in self.warnings:
            what = ("possible omission: source word" if w.kind == "omission" else "diffuse attention: target token")
            unit = "total attention" if w.kind == "omission" else "sharpest head's entropy"
            self.list.addItem(f"{what} {w.index} “{w.token}” ({unit} {w.value:.3f})")
        if not self.warnings:
            self.list.addItem("No coverage warnings.")
        omitted = {w.index for w in self.warnings if w.kind == "omission"}
        diffuse = {w.index for w in self.warnings if w.kind == "diffuse"}
        src_ids = analysis.word_ids(self.translation.source_tokens)
        src_marked = {j for j, w in enumerate(src_ids) if w in omitted}
        self.tokens.setHtml("<p><b>Source</b></p>" + _tokens_html(self.translation.source_tokens, src_marked,
                                                                  "#fecaca")
                            + "<p><b>Translation</b></p>" + _tokens_html(self.translation.target_tokens, diffuse,
                                                                         "#fed7aa"))


# --- forced prefix ----------------------------------------------------------------------------------------


class ForcedPrefixView(_JobView):
    """Force an alternative at step t: re-decode with prefix = best tokens[:t] + [alternative], then show
    the new translation and the attention difference (new - old) over the shared target positions."""

    forcedDone = Signal(object)  # the new Translation

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        from .attention_view import FocusView

        self.translator: Any = None
        self.old: Any = None
        self.new: Any = None
        self.prefix: list[int] = []
        self.cfg: DecodeConfig | None = None
        self.request_id = 0
        self._next_id = 1
        self.info = QLabel("Right-click an alternative on the Translate tab (Alternatives) and choose "
                           "“Force this token” to re-decode from there.")
        self.info.setObjectName("hint")
        self.info.setWordWrap(True)
        self.texts = QTextBrowser()
        self.texts.setMaximumHeight(130)
        self.layer = QComboBox()
        self.layer.setToolTip("Attention compared: a layer's heads averaged, or all layers")
        self.layer.currentIndexChanged.connect(self.refresh)
        self.diff = FocusView()
        self.diff.colorbar.setColorMap(pg.colormap.get("CET-D1"))  # diverging: blue < 0 < red
        row = QHBoxLayout()
        row.addWidget(QLabel("Attention difference (new − old) of"))
        row.addWidget(self.layer, 1)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.info)
        layout.addWidget(self.texts)
        layout.addLayout(row)
        layout.addWidget(self.diff, 1)
        self._start_worker("forced-prefix-worker")

    def set_translator(self, translator: Any) -> None:
        self.translator, self.old, self.new, self.request_id = translator, None, None, 0
        if translator is not None:
            self.layer.blockSignals(True)
            self.layer.clear()
            self.layer.addItems(["Last layer (avg heads)", "All layers (avg)"]
                                + [f"Layer {i} (avg heads)" for i in range(translator.config.decoder_layers)])
            self.layer.blockSignals(False)

    def force(self, translation: Any, step: int, token_id: int, cfg: DecodeConfig | None = None) -> int:
        """Re-decode `translation`'s input with its best tokens[:step] + [token_id] forced; returns the id."""
        if self.translator is None:
            return 0
        self.old, self.new, self.cfg = translation, None, cfg
        self.prefix = [int(t) for t in translation.target_ids[:step]] + [int(token_id)]
        translator, text, prefix = self.translator, translation.source, list(self.prefix)
        cfg = cfg or DecodeConfig(attention=True, alternatives=5)
        self.request_id = self._next_id
        self._next_id += 1
        piece = translator.target_pieces([token_id])[0]
        self.info.setText(f"Forcing “{piece}” at step {step + 1}: re-decoding…")
        self._job.emit(self.request_id, lambda: translator.translate(text, cfg, prefix=prefix))
        return self.request_id

    def _on_finished(self, request_id: int, translation: Any) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.new = translation
        old, new = self.old.target_tokens, translation.target_tokens
        changed_old, changed_new = token_diff(old, new)
        self.info.setText(f"Forced prefix of {len(self.prefix)} token(s); changed tokens highlighted.")
        self.texts.setHtml("<p><b>Original</b></p>" + _tokens_html(old, changed_old)
                           + "<p><b>Forced</b></p>" + _tokens_html(new, changed_new))
        self.refresh()
        self.forcedDone.emit(translation)

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.info.setText(f"Forced re-decoding failed: {message}")

    def layer_choice(self) -> int | None:
        index = self.layer.currentIndex()
        return -1 if index <= 0 else (None if index == 1 else index - 2)

    def difference(self) -> np.ndarray:
        """new - old attention (heads averaged, per the layer choice) over the shared rows (T_shared, S)."""
        if self.old is None or self.new is None or self.old.attention is None or self.new.attention is None:
            return np.zeros((0, 0), np.float32)
        layer = self.layer_choice()

        def avg(attn: np.ndarray) -> np.ndarray:
            a = attn if layer is None else attn[layer]
            return a.reshape(-1, *attn.shape[2:]).mean(0) if layer is None else a.mean(0)

        rows = min(self.old.attention.shape[2], self.new.attention.shape[2])
        return (avg(self.new.attention)[:rows] - avg(self.old.attention)[:rows]).astype(np.float32)

    def refresh(self) -> None:
        diff = self.difference()
        if diff.size == 0:
            return
        top = max(float(np.abs(diff).max()), 1e-6)
        old, new = self.old.target_tokens, self.new.target_tokens
        labels = [n if n == o else f"{o}→{n}" for o, n in zip(old, new)]
        self.diff.set_matrix(diff, self.new.source_tokens, labels[: diff.shape[0]],
                             title=f"new − old ({self.layer.currentText()})", levels=(-top, top))


# --- beam tree ------------------------------------------------------------------------------------------------

NODE_W, NODE_H, STEP_DX, ROW_DY = 92.0, 38.0, 120.0, 48.0
NODE_COLORS = {"kept": "#e0e7ff", "forced": "#fef3c7", "finished": "#dcfce7", "pruned": "#f3f4f6"}


class BeamNodeItem(QGraphicsRectItem):
    """A beam tree node; a click selects it."""

    def __init__(self, node: Any, rect: QRectF, on_click: Callable[[int], None]):
        super().__init__(rect)
        self.node, self._on_click = node, on_click
        self.setCursor(Qt.PointingHandCursor)

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802 - Qt name
        self._on_click(self.node.id)
        event.accept()


class BeamTreeView(_JobView):
    """Beam search's recorded expansions as a tree (x: step, nodes: token and cumulative log-prob).

    Pruned candidates are grey, finished ones green with a bold border, forced ones amber. A click on
    a node shows its partial hypothesis and its cross-attention (FocusView)."""

    decoded = Signal(object)  # the BeamState
    nodeSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        from .attention_view import FocusView

        self.translator: Any = None
        self.source_text = ""
        self.state: Any = None
        self.result: Any = None
        self.items: dict[int, BeamNodeItem] = {}
        self.selected = -1
        self.request_id = 0
        self._next_id = 1
        self.beam = QSpinBox()
        self.beam.setRange(2, 16)
        self.beam.setValue(4)
        self.beam.setToolTip("Beam size of the search drawn")
        self.run_button = QPushButton("Decode with beam search")
        self.run_button.clicked.connect(lambda: self.decode())
        self.head = QComboBox()
        self.head.setToolTip("Attention shown for the selected node")
        self.head.currentIndexChanged.connect(lambda _i: self._show_node())
        self.status = QLabel("Decode the current input with beam search to draw its tree.")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.scene = QGraphicsScene(self)
        self.graphics = QGraphicsView(self.scene)
        self.graphics.setRenderHint(QPainter.Antialiasing)
        self.graphics.setBackgroundBrush(QBrush(QColor("#ffffff")))
        self.node_label = QLabel("")
        self.node_label.setWordWrap(True)
        self.focus = FocusView()
        row = QHBoxLayout()
        row.addWidget(QLabel("Beam"))
        row.addWidget(self.beam)
        row.addWidget(self.run_button)
        row.addWidget(QLabel("Attention of the node"))
        row.addWidget(self.head, 1)
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.node_label)
        bl.addWidget(self.focus, 1)
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.graphics)
        split.addWidget(bottom)
        split.setSizes([380, 300])
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)
        self._start_worker("beam-tree-worker")
        self._update_enabled()

    def set_translator(self, translator: Any) -> None:
        self.translator, self.state, self.request_id = translator, None, 0
        self.head.blockSignals(True)
        self.head.clear()
        if translator is not None:
            L, H = translator.config.decoder_layers, translator.config.n_heads
            self.head.addItems([f"Layer {l} (avg heads)" for l in reversed(range(L))]
                               + [f"Layer {l} head {h}" for l in range(L) for h in range(H)])
        self.head.blockSignals(False)
        self._draw()
        self._update_enabled()

    def set_source(self, text: str) -> None:
        self.source_text = text
        self._update_enabled()

    def head_choice(self) -> tuple[int, int | None]:
        """(layer, head or None for the heads' average) chosen in the combo."""
        L = self.translator.config.decoder_layers
        index = max(0, self.head.currentIndex())
        if index < L:
            return L - 1 - index, None
        return divmod(index - L, self.translator.config.n_heads)

    def _update_enabled(self) -> None:
        self.run_button.setEnabled(self.translator is not None and bool(self.source_text.strip())
                                   and self.request_id == 0)

    def decode(self) -> int:
        """Beam-search the current input on the worker thread, recording the tree; returns the request id."""
        if self.translator is None or not self.source_text.strip():
            return 0
        translator, text = self.translator, self.source_text
        cfg = DecodeConfig(beam_size=self.beam.value(), nbest=1, attention=True, alternatives=0)

        def job() -> Any:
            stream = translator.stream(text, cfg)
            try:
                for _ in stream:
                    pass
            finally:
                stream.close()
            return stream.result, stream.beam_state

        self.request_id = self._next_id
        self._next_id += 1
        self.status.setText(f"Beam search (beam {cfg.beam_size})…")
        self._update_enabled()
        self._job.emit(self.request_id, job)
        return self.request_id

    def _on_finished(self, request_id: int, result: Any) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.result, self.state = result
        counts = {k: sum(n.status == k for n in self.state.tree) for k in NODE_COLORS}
        summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        self.status.setText(f"{len(self.state.tree)} expansions: {summary}"
                            + f" · best: “{self.result.text}”. Click a node to see its attention.")
        self._draw()
        self._update_enabled()
        self.decoded.emit(self.state)

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.status.setText(f"Beam search failed: {message}")
        self._update_enabled()

    def _draw(self) -> None:
        self.scene.clear()
        self.items = {}
        self.selected = -1
        if self.state is None or not self.state.tree:
            return
        y_of: dict[int, float] = {}
        by_step: dict[int, list[Any]] = {}
        for node in self.state.tree:
            by_step.setdefault(node.step, []).append(node)
        font = QFont()
        font.setPointSize(8)
        for step in sorted(by_step):
            nodes = sorted(by_step[step], key=lambda n: (y_of.get(n.parent, -1.0) if n.parent is not None else 0.0,
                                                         -n.score))
            for i, node in enumerate(nodes):
                y_of[node.id] = float(i)
                rect = QRectF(step * STEP_DX, i * ROW_DY, NODE_W, NODE_H)
                item = BeamNodeItem(node, rect, self.select_node)
                pruned = node.status == "pruned"
                item.setBrush(QBrush(QColor(NODE_COLORS.get(node.status, "#ffffff"))))
                item.setPen(QPen(QColor("#15803d" if node.status == "finished" else
                                        "#d1d5db" if pruned else "#6366f1"), 2.5 if node.status == "finished" else 1))
                item.setToolTip(f"step {node.step} · {node.status} · score {node.score:.3f}")
                self.scene.addItem(item)
                piece = self.translator.target_pieces([node.token])[0]
                text = self.scene.addSimpleText(f"{piece}\n{node.score:.2f}", font)
                text.setBrush(QBrush(QColor("#9ca3af" if pruned else "#111827")))
                text.setPos(rect.x() + 5, rect.y() + 3)
                text.setAcceptedMouseButtons(Qt.NoButton)
                text.setZValue(2)
                item.setZValue(1)
                self.items[node.id] = item
                if node.parent is not None and node.parent in self.items:
                    parent = self.items[node.parent].rect()
                    pen = QPen(QColor("#d1d5db" if pruned else "#6b7280"), 1)
                    self.scene.addLine(parent.right(), parent.center().y(), rect.left(), rect.center().y(), pen)
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-10, -10, 10, 10))

    def select_node(self, node_id: int) -> None:
        if self.state is None or not 0 <= node_id < len(self.state.tree):
            return
        if self.selected in self.items:
            self.items[self.selected].setPen(self._pen_for(self.state.tree[self.selected]))
        self.selected = node_id
        self.items[node_id].setPen(QPen(QColor("#dc2626"), 3))
        self._show_node()
        self.nodeSelected.emit(node_id)

    def _pen_for(self, node: Any) -> QPen:
        if node.status == "finished":
            return QPen(QColor("#15803d"), 2.5)
        return QPen(QColor("#d1d5db" if node.status == "pruned" else "#6366f1"), 1)

    def node_matrix(self, node_id: int) -> np.ndarray | None:
        """The attention (t, S) shown for a node: node_attention at the chosen layer, head or heads' mean."""
        attn = self.state.node_attention(node_id)
        if attn is None:
            return None
        layer, head = self.head_choice()
        return attn[layer].mean(0) if head is None else attn[layer, head]

    def _show_node(self) -> None:
        if self.state is None or self.selected < 0:
            return
        node = self.state.tree[self.selected]
        pieces = self.translator.target_pieces(self.state.node_tokens(node.id))
        self.node_label.setText(f"Node {node.id} ({node.status}, step {node.step}, score {node.score:.3f}): "
                                + " ".join(pieces))
        matrix = self.node_matrix(node.id)
        if matrix is not None:
            self.focus.set_matrix(matrix, self.result.source_tokens, pieces, title=self.head.currentText())


# --- comparing two models -------------------------------------------------------------------------------------


class CompareView(_JobView):
    """The current input translated by the loaded model (A) and a second model (B): both translations, their
    attention at a chosen layer and head side by side, and B - A where the token sequences match."""

    compared = Signal(object, object)  # Translation A, Translation B
    otherLoaded = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        from .attention_view import FocusView

        self.translator: Any = None
        self.other: Any = None
        self.other_name = ""
        self.source_text = ""
        self.a: Any = None
        self.b: Any = None
        self.request_id = 0
        self._next_id = 1
        self.open_button = QPushButton("Open model B…")
        self.open_button.clicked.connect(self._ask_model)
        self.other_label = QLabel("Model B: none")
        self.run_button = QPushButton("Compare")
        self.run_button.setObjectName("primaryButton")
        self.run_button.clicked.connect(lambda: self.compare())
        self.layer = QSpinBox()
        self.head = QSpinBox()
        for w in (self.layer, self.head):
            w.valueChanged.connect(lambda _v: self.refresh())
        self.texts = QTextBrowser()
        self.texts.setMaximumHeight(110)
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.view_a, self.view_b, self.view_diff = FocusView(), FocusView(), FocusView()
        self.view_diff.colorbar.setColorMap(pg.colormap.get("CET-D1"))
        row = QHBoxLayout()
        row.addWidget(self.open_button)
        row.addWidget(self.other_label, 1)
        row.addWidget(QLabel("Layer"))
        row.addWidget(self.layer)
        row.addWidget(QLabel("Head"))
        row.addWidget(self.head)
        row.addWidget(self.run_button)
        views = QSplitter(Qt.Horizontal)
        for v in (self.view_a, self.view_b, self.view_diff):
            views.addWidget(v)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.texts)
        layout.addWidget(self.status)
        layout.addWidget(views, 1)
        self._start_worker("compare-worker")
        self._update_enabled()

    def set_translator(self, translator: Any) -> None:
        self.translator, self.a, self.b, self.request_id = translator, None, None, 0
        self._update_ranges()

    def set_source(self, text: str) -> None:
        self.source_text = text
        self._update_enabled()

    def set_other(self, translator: Any, name: str = "") -> None:
        """Use `translator` as model B."""
        self.other, self.other_name = translator, name or getattr(translator, "name", "") or "model B"
        self.other_label.setText(f"Model B: {self.other_name}")
        self.b = None
        self._update_ranges()
        self.otherLoaded.emit(translator)

    def load_other(self, path: str) -> int:
        """Load model B from a folder or zip on the worker thread."""
        def job() -> Any:
            from nmt_desktop.core.formats.model_dir import load_model
            from nmt_desktop.core.decoding.translator import Translator

            loaded = load_model(path)
            return "model", Translator(loaded.model, loaded.tokenizers, loaded.name), loaded.name

        return self._start(job, f"Loading {Path(path).name}…")

    def _ask_model(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open model B (a model folder)")
        if path:
            self.load_other(path)

    def _update_ranges(self) -> None:
        models = [t for t in (self.translator, self.other) if t is not None]
        if models:
            self.layer.setMaximum(min(t.config.decoder_layers for t in models) - 1)
            self.head.setMaximum(min(t.config.n_heads for t in models) - 1)
        self._update_enabled()

    def _update_enabled(self) -> None:
        self.run_button.setEnabled(self.translator is not None and self.other is not None
                                   and bool(self.source_text.strip()) and self.request_id == 0)
        self.open_button.setEnabled(self.request_id == 0)

    def _start(self, job: Callable[[], Any], message: str) -> int:
        self.request_id = self._next_id
        self._next_id += 1
        self.status.setText(message)
        self._update_enabled()
        self._job.emit(self.request_id, job)
        return self.request_id

    def compare(self) -> int:
        """Translate the current input with both models (greedy, with attention) on the worker thread."""
        if not (self.translator is not None and self.other is not None and self.source_text.strip()):
            return 0
        a, b, text = self.translator, self.other, self.source_text
        cfg = DecodeConfig(attention=True, alternatives=0)
        return self._start(lambda: ("pair", a.translate(text, cfg), b.translate(text, cfg)), "Translating with both…")

    def _on_finished(self, request_id: int, result: Any) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        if result[0] == "model":
            self.status.setText("")
            self.set_other(result[1], result[2])
            return
        self.a, self.b = result[1], result[2]
        self.texts.setHtml(f"<p><b>A</b> ({html.escape(getattr(self.translator, 'name', '') or 'loaded model')}): "
                           f"{html.escape(self.a.text)}</p><p><b>B</b> ({html.escape(self.other_name)}): "
                           f"{html.escape(self.b.text)}</p>")
        self.refresh()
        self._update_enabled()
        self.compared.emit(self.a, self.b)

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.status.setText(f"Failed: {message}")
        self._update_enabled()

    def same_tokens(self) -> bool:
        return (self.a is not None and self.b is not None and self.a.source_tokens == self.b.source_tokens
                and self.a.target_tokens == self.b.target_tokens)

    def refresh(self) -> None:
        if self.a is None or self.b is None:
            return
        layer, head = self.layer.value(), self.head.value()
        ma, mb = self.a.attention[layer, head], self.b.attention[layer, head]
        title = f"layer {layer} head {head}"
        self.view_a.set_matrix(ma, self.a.source_tokens, self.a.target_tokens, title=f"A · {title}")
        self.view_b.set_matrix(mb, self.b.source_tokens, self.b.target_tokens, title=f"B · {title}")
        if self.same_tokens():
            diff = (mb - ma).astype(np.float32)
            top = max(float(np.abs(diff).max()), 1e-6)
            self.view_diff.set_matrix(diff, self.a.source_tokens, self.a.target_tokens, title=f"B − A · {title}",
                                      levels=(-top, top))
            self.status.setText("Same tokens: the right view is B − A.")
        else:
            self.view_diff.set_matrix(np.zeros((0, 0), np.float32), [], [], title="B − A: token sequences differ")
            what = ("translations" if self.a.source_tokens == self.b.source_tokens
                    else "source tokenizations (different vocabularies)")
            self.status.setText(f"The two {what} differ: both attentions are shown; B − A is only computed "
                                "where the token sequences match.")


# --- the tab --------------------------------------------------------------------------------------------


class AnalysisPanel(QWidget):
    """The Analysis tab: head statistics, ablation, alignments and coverage of the current translation."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translator: Any = None
        self.translation: Any = None
        self.title = QLabel("No translation yet: translate something on the Translate tab.")
        self.title.setObjectName("paneTitle")
        self.title.setWordWrap(True)
        self.stats = HeadStatsView()
        self.ablation = AblationView()
        self.alignment = AlignmentView()
        self.coverage = CoverageView()
        self.forced = ForcedPrefixView()
        self.beam_tree = BeamTreeView()
        self.compare = CompareView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.stats, "Head statistics")
        self.tabs.addTab(self.ablation, "Head ablation")
        self.tabs.addTab(self.alignment, "Alignments")
        self.tabs.addTab(self.coverage, "Coverage")
        self.tabs.addTab(self.forced, "Forced prefix")
        self.tabs.addTab(self.beam_tree, "Beam tree")
        self.tabs.addTab(self.compare, "Compare models")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.tabs, 1)

    def set_translator(self, translator: Any, _info: Any = None) -> None:
        self.translator = translator
        self.translation = None
        self.ablation.set_translator(translator)
        self.forced.set_translator(translator)
        self.beam_tree.set_translator(translator)
        self.compare.set_translator(translator)
        if translator is not None:
            self.alignment.set_layers(translator.config.decoder_layers)

    def set_translation(self, translation: Any, cfg: DecodeConfig | None = None) -> None:
        """Analyse one finished sentence (a core Translation decoded with attention)."""
        if translation is None or translation.attention is None or translation.attention.shape[2] == 0:
            self.title.setText("This translation has no attention to analyse.")
            return
        self.translation = translation
        self.title.setText(f"“{translation.source}”  →  “{translation.text}”")
        self.stats.set_translation(translation)
        self.ablation.set_translation(translation, cfg)
        self.alignment.set_translation(translation)
        self.coverage.set_translation(translation)
        self.beam_tree.set_source(translation.source)
        self.compare.set_source(translation.source)

    def force_alternative(self, translation: Any, step: int, token_id: int, cfg: DecodeConfig | None = None) -> int:
        """Show the Forced prefix page and re-decode with the alternative `token_id` forced at `step`."""
        self.tabs.setCurrentWidget(self.forced)
        return self.forced.force(translation, step, token_id, cfg)

    def shutdown(self) -> None:
        self.ablation.shutdown()
        self.forced.shutdown()
        self.beam_tree.shutdown()
        self.compare.shutdown()


def connect_to_translate_panel(panel: AnalysisPanel, translate_panel: Any,
                               on_error: Callable[[str], None] | None = None) -> None:
    """Feed `panel` the Translate tab's finished translation (the sentence shown there, and the one selected
    later in its Sentences list) and its forced alternatives."""

    def finished(translations: list, cfg: Any) -> None:
        if not translations:
            return
        index = translate_panel.shown_sentence
        try:
            panel.set_translation(translations[index if 0 <= index < len(translations) else 0], cfg)
        except Exception as exc:  # noqa: BLE001
            log.exception("analysis failed")
            if on_error is not None:
                on_error(_one_line(exc))

    def sentence_selected(index: int) -> None:
        sentences = translate_panel.sentences
        if 0 <= index < len(sentences) and sentences[index].translation is not None \
                and sentences[index].translation is not panel.translation:
            panel.set_translation(sentences[index].translation, getattr(translate_panel, "last_config", None))

    translate_panel.translationDone.connect(finished)
    translate_panel.sentence_list.currentRowChanged.connect(sentence_selected)
    translate_panel.alternativeForced.connect(panel.force_alternative)
