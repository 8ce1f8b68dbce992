"""Beam tree: beam search's recorded expansions (`core.decoding.search.BeamState.tree`) drawn as a tree;
a click on a node shows its partial hypothesis and that hypothesis's cross-attention.

The view is never blank axes: before a search it says what to do, and a finished search selects the node
that ends the best hypothesis (`best_node`), so its attention is on screen at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (QComboBox, QGraphicsRectItem, QGraphicsScene, QGraphicsSceneMouseEvent, QGraphicsView,
                               QHBoxLayout, QLabel, QPushButton, QSpinBox, QSplitter, QStackedWidget, QVBoxLayout,
                               QWidget)

from nmt_desktop.core.analysis.head_names import HeadRef
from nmt_desktop.core.analysis.words import display_piece, join_pieces
from nmt_desktop.core.config import DecodeConfig

from .. import theme
from ..empty_state import EmptyMessage
from ..attention.focus import FocusView
from ..job_view import JobView
from .analysis_view import AnalysisView

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.search import BeamNode, BeamState
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

NODE_W, NODE_H, STEP_DX, ROW_DY = 92.0, 38.0, 120.0, 48.0
NODE_COLORS = {"kept": "#e0e7ff", "forced": "#fef3c7", "finished": "#dcfce7", "pruned": "#f3f4f6"}


class BeamNodeItem(QGraphicsRectItem):
    """A beam tree node; a click selects it."""

    def __init__(self, node: BeamNode, rect: QRectF, on_click: Callable[[int], None]):
        super().__init__(rect)
        self.node, self._on_click = node, on_click
        self.setCursor(Qt.PointingHandCursor)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802 - Qt name
        self._on_click(self.node.id)
        event.accept()


def best_node(state: BeamState, target_ids: list[int]) -> int | None:
    """The finished tree node spelling the best hypothesis (else the best-scoring finished node, else the
    best-scoring node of the last step); None for an empty tree."""
    finished = [n for n in state.tree if n.status == "finished"]
    best = list(target_ids)
    for node in finished:
        tokens = list(state.node_tokens(node.id))
        short, long = sorted((tokens, best), key=len)
        if len(long) - len(short) <= 1 and long[: len(short)] == short:  # with or without </s>
            return node.id
    if finished:
        return max(finished, key=lambda n: n.score).id
    return max(state.tree, key=lambda n: (n.step, n.score)).id if state.tree else None


def _pen_for(node: BeamNode) -> QPen:
    if node.status == "finished":
        return QPen(QColor("#15803d"), 2.5)
    return QPen(QColor("#d1d5db" if node.status == "pruned" else "#6366f1"), 1)


class BeamTreeView(JobView, AnalysisView):
    """Beam search's recorded expansions as a tree (x: step, nodes: token and cumulative log-prob).

    Pruned candidates are grey, finished ones green with a bold border, forced ones amber. A click on
    a node shows its partial hypothesis and its cross-attention (FocusView)."""

    decoded = Signal(object)  # the BeamState
    nodeSelected = Signal(int)
    failure = "Beam search failed"

    def __init__(self, parent: QWidget | None = None):
        super().__init__("beam-tree-worker", parent)
        self.translator: Translator | None = None
        self.source_text = ""
        self.state: BeamState | None = None
        self.result: Translation | None = None
        self.items: dict[int, BeamNodeItem] = {}
        self.selected = -1
        self.beam = QSpinBox()
        self.beam.setRange(2, 16)
        self.beam.setValue(4)
        self.beam.setToolTip("Beam size of the search drawn")
        self.run_button = QPushButton("Decode with beam search")
        self.run_button.setToolTip("Decode the sentence with beam search and draw every hypothesis it kept or pruned")
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
        self.node_label = QLabel("")
        self.node_label.setWordWrap(True)
        self.focus = FocusView()
        self.empty = EmptyMessage("No beam tree yet", "Decode with beam search to draw every hypothesis the search "
                                  "kept, pruned or finished. The best hypothesis's last node is then selected; "
                                  "click a node to see its attention.")
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
        self.pages = QStackedWidget()  # the empty message until a node is selected, then the tree and its node
        self.pages.addWidget(self.empty)
        self.pages.addWidget(split)
        self.tree_page = split
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.pages, 1)
        self._update_enabled()
        theme.follow(self, lambda look: self.graphics.setBackgroundBrush(QBrush(QColor(look.plot_background))))

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        self.translator, self.state = translator, None
        self.forget_job()
        self.head.blockSignals(True)
        self.head.clear()
        if translator is not None:
            L, H = translator.config.decoder_layers, translator.config.n_heads
            refs = [HeadRef(l) for l in reversed(range(L))] + [HeadRef(l, h) for l in range(L) for h in range(H)]
            for ref in refs:
                self.head.addItem(ref.name if ref.head is not None else f"{ref.name} (avg heads)")
                self.head.setItemData(self.head.count() - 1, ref.description, Qt.ToolTipRole)
        self.head.blockSignals(False)
        self._draw()
        self._update_enabled()

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
        """Only its source: the tree is a beam search of its own, started by Decode."""
        self.set_source(translation.source)

    def set_source(self, text: str) -> None:
        self.source_text = text
        self._update_enabled()

    def head_choice(self) -> tuple[int, int | None]:
        """(layer, head or None for the heads' average) chosen in the combo."""
        assert self.translator is not None
        L = self.translator.config.decoder_layers
        index = max(0, self.head.currentIndex())
        if index < L:
            return L - 1 - index, None
        return divmod(index - L, self.translator.config.n_heads)

    def _update_enabled(self) -> None:
        self.run_button.setEnabled(self.translator is not None and bool(self.source_text.strip())
                                   and not self.running)

    def decode(self) -> int:
        """Beam-search the current input on the worker thread, recording the tree; returns the request id."""
        if self.translator is None or not self.source_text.strip():
            return 0
        translator, text = self.translator, self.source_text
        cfg = DecodeConfig(beam_size=self.beam.value(), nbest=1, attention=True, alternatives=0)

        def job() -> tuple[Translation, BeamState]:
            stream = translator.stream(text, cfg)
            try:
                for _ in stream:
                    pass
            finally:
                stream.close()
            return stream.result, stream.beam_state

        return self.run_job(job, self._show_tree, f"Beam search (beam {cfg.beam_size})…")

    def _show_tree(self, result: tuple[Translation, BeamState]) -> None:
        self.result, self.state = result
        counts = {k: sum(n.status == k for n in self.state.tree) for k in NODE_COLORS}
        summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        self.status.setText(f"{len(self.state.tree)} expansions: {summary}"
                            + f" · best: “{self.result.text}”, its last node selected. Click a node to see its "
                            "attention.")
        self._draw()
        best = best_node(self.state, self.result.target_ids)
        if best is not None:
            self.select_node(best)
            self.graphics.centerOn(self.items[best])
        self.decoded.emit(self.state)

    def _draw(self) -> None:
        self.scene.clear()
        self.items = {}
        self.selected = -1
        self.pages.setCurrentWidget(self.empty)
        if self.state is None or not self.state.tree or self.translator is None:
            return
        y_of: dict[int, float] = {}
        by_step: dict[int, list[BeamNode]] = {}
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
                item.setPen(_pen_for(node))
                item.setToolTip(f"step {node.step} · {node.status} · score {node.score:.3f}")
                self.scene.addItem(item)
                piece = display_piece(self.translator.target_pieces([node.token])[0])
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
            self.items[self.selected].setPen(_pen_for(self.state.tree[self.selected]))
        self.selected = node_id
        self.items[node_id].setPen(QPen(QColor("#dc2626"), 3))
        self.pages.setCurrentWidget(self.tree_page)
        self._show_node()
        self.nodeSelected.emit(node_id)

    def node_matrix(self, node_id: int) -> np.ndarray | None:
        """The attention (t, S) shown for a node: node_attention at the chosen layer, head or heads' mean."""
        assert self.state is not None
        attn = self.state.node_attention(node_id)  # (L, H, t, S)
        if attn is None:
            return None
        layer, head = self.head_choice()
        return attn[layer].mean(0) if head is None else attn[layer, head]

    def _show_node(self) -> None:
        if self.state is None or self.selected < 0 or self.translator is None or self.result is None:
            return
        node = self.state.tree[self.selected]
        pieces = self.translator.target_pieces(self.state.node_tokens(node.id))
        self.node_label.setText(f"Node {node.id} ({node.status}, step {node.step}, score {node.score:.3f}): "
                                + join_pieces(pieces))
        matrix = self.node_matrix(node.id)
        if matrix is not None:
            self.focus.set_matrix(matrix, self.result.source_tokens, pieces, title=self.head.currentText())
