"""Word alignments: source words (top) linked to target words (bottom) by `core.analysis.alignment`
under the reading the model recommends or one a person picks (`align_method_picker`), copied or exported in
Pharaoh format. A scored (teacher-forced) translation is aligned the same way: its tokens are the given ones.
With a model of the reverse direction (`reverse_model`), the links shown are both directions' symmetrised.

The evidence of a reading (`word_evidence`) is kept per translation, so changing only the decision is
instant; an attention reading is computed here, the masking reading (one model pass per source word) on
the view's worker thread, and only while the view is shown; so are the reverse model's links, after them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPainter, QPen, QShowEvent
from PySide6.QtWidgets import (QFileDialog, QGraphicsLineItem, QGraphicsRectItem, QGraphicsScene, QGraphicsView,
                               QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget)

from nmt_desktop.core.analysis.alignment import AlignMethod, decide, symmetrise, word_evidence
from nmt_desktop.core.analysis.pharaoh import to_pharaoh
from nmt_desktop.core.analysis.words import display_piece, word_ids, words_of

from .. import theme
from ..job_view import JobView
from .align_method_picker import AlignMethodPicker
from .analysis_view import AnalysisView
from .reverse_model import Backward, ReverseModelBox, backward_links

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation


REVERSE = "reverse"  # what the view waits for while the reverse model aligns


def evidence_key(method: AlignMethod) -> AlignMethod:
    """What a method's evidence depends on: all of it but the decision."""
    return replace(method, decision="argmax", threshold=0.3)


LIT_LINK = {False: "#b45309", True: "#fbbf24"}  # linked views: lit words and links, light / dark theme (3:1 or more)


class AlignmentView(JobView, AnalysisView):
    """Source words (top) linked to target words (bottom) by word alignments read from the model."""

    failure = "No alignment"

    def __init__(self, parent: QWidget | None = None):
        super().__init__("alignment-worker", parent)
        self.translator: Translator | None = None
        self.translation: Translation | None = None
        self.links: list[tuple[int, int]] = []
        self.lines: list[QGraphicsLineItem] = []
        self._evidence: dict[AlignMethod, np.ndarray] = {}  # evidence_key -> (Wt, Ws) for self.translation
        self._waiting: AlignMethod | str | None = None  # the evidence_key of the job under way, or REVERSE
        self._backward: Backward | None = None  # the reverse model's links for self.translation
        self._pending = False  # evidence to compute once the view is shown
        self._boxes: tuple[list[QRectF], list[QRectF]] = ([], [])
        self._word_items: list[QGraphicsRectItem] = []  # source words' boxes, then the target words'
        self._lit = (-1, -1)  # linked views: (target word, source word) lit up; -1 none
        self.picker = AlignMethodPicker()
        self.reverse = ReverseModelBox()
        self.copy_button = QPushButton("Copy Pharaoh")
        self.copy_button.setToolTip("Copy the alignment as Pharaoh pairs (0-1 2-3 …) to the clipboard")
        self.copy_button.clicked.connect(self.copy_pharaoh)
        self.export_button = QPushButton("Export .txt…")
        self.export_button.setToolTip("Save the alignment as a Pharaoh .txt file")
        self.export_button.clicked.connect(self._ask_export)
        self.pharaoh_label = QLabel("")
        self.pharaoh_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.pharaoh_label.setWordWrap(True)
        self.scene = QGraphicsScene(self)
        self.graphics = QGraphicsView(self.scene)
        self.graphics.setRenderHint(QPainter.Antialiasing)
        theme.follow(self, self._restyle)
        # the buttons beside the reverse model, not the picker: on one row the two were wider than a 1024 px screen
        row = QHBoxLayout()
        row.addWidget(self.reverse, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.picker)
        layout.addLayout(row)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.pharaoh_label)
        self.picker.changed.connect(self.refresh)
        self.reverse.changed.connect(self._reverse_changed)

    def status_label(self) -> QLabel:
        return self.pharaoh_label

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        """The loaded model (the masking reading runs it) and its card (its recommended alignment reading)."""
        self.translator, self.translation = translator, None
        self._evidence, self._backward = {}, None
        self.forget_job()  # a job of the previous model's
        if translator is not None:
            self.picker.set_model(translator.config.decoder_layers, card)
            self.reverse.set_forward(translator)  # drops a reverse model that no longer fits
        self.refresh()

    def set_model(self, layers: int, card: dict[str, Any] | None = None) -> None:
        """The decoder's layers and the card, for a translation without a translator (attention readings)."""
        self.picker.set_model(layers, card)

    def method(self) -> AlignMethod:
        """The alignment reading in use."""
        return self.picker.method()

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
        attention = translation.attention
        if attention is not None and attention.shape[0] != self.picker.layers:  # no model told, or another's
            self.set_model(attention.shape[0], self.picker.card)
        self.translation = translation
        self._evidence, self._backward, self._lit = {}, None, (-1, -1)
        self.forget_job()  # a job of the previous translation's
        self.refresh()

    def _reverse_changed(self) -> None:
        self._backward = None
        if self._waiting == REVERSE:
            self.forget_job()
        self.refresh()

    def pharaoh(self) -> str:
        return to_pharaoh(self.links)

    def copy_pharaoh(self) -> None:
        QGuiApplication.clipboard().setText(self.pharaoh())

    def export(self, path: str | Path) -> None:
        Path(path).write_text(self.pharaoh() + "\n", encoding="utf-8")

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export alignment", "alignment.txt", "Text (*.txt)")
        if path:
            self.export(path)

    def _update_enabled(self) -> None:
        for button in (self.copy_button, self.export_button):
            button.setEnabled(self.translation is not None and not self.running)

    def refresh(self) -> None:
        """Draw the words, then the links: at once when the evidence is known or cheap, else after a job."""
        self._pending = False
        self.links, self.lines = [], []
        self._draw_words()
        self._update_enabled()
        self.picker.set_note(self.reverse.describe(), self.reverse.method_note())
        if self.translation is None:
            self.forget_job()
            self.pharaoh_label.setText("")
            return
        method = self.method()
        key = evidence_key(method)
        if key not in self._evidence and method.uses_attention:
            try:
                self._evidence[key] = word_evidence(self.translation, method)
            except ValueError as exc:  # a reading this translation cannot give (e.g. heads it lacks): say so
                self.forget_job()
                self.pharaoh_label.setText(f"No alignment: {exc}.")
                return
        if key not in self._evidence:
            if not (self.running and self._waiting == key):
                self._start_evidence(key)
            return
        links, how = decide(self._evidence[key], method), self.reverse.symmetrisation()
        if how is not None and self._backward is None:  # the reverse model aligns after the forward evidence
            if not (self.running and self._waiting == REVERSE):
                self._start_backward()
            return
        self.forget_job()
        if how is None or self._backward is None:
            self._show_links(links)
        elif self._backward.problem:
            self._show_links(links, f"  (not symmetrised: {self._backward.problem})")
        else:
            self._show_links(symmetrise(links, self._backward.links, how))

    def _start(self, waiting: AlignMethod | str, job: Callable[[], Any], done: Callable[[Any], None],
               message: str) -> None:
        """Run `job` (the model's passes) on the worker thread if the view is shown, else when it is."""
        self.forget_job()
        if not self.isVisible():
            self._pending = True
            self.pharaoh_label.setText("The alignment is computed when this view is shown.")
            return
        self._waiting = waiting
        self.run_job(job, done, message)

    def _start_evidence(self, key: AlignMethod) -> None:
        translation, translator = self.translation, self.translator

        def done(evidence: np.ndarray) -> None:
            self._evidence[key] = evidence
            self.refresh()

        self._start(key, lambda: word_evidence(translation, key, translator=translator), done,
                    "Reading the alignment from the model (one pass per source word)…")

    def _start_backward(self) -> None:
        translation, reverse = self.translation, self.reverse.reverse

        def done(backward: Backward) -> None:
            if translation is self.translation and reverse is self.reverse.reverse:
                self._backward = backward
                self.refresh()

        self._start(REVERSE, lambda: backward_links(translation, reverse), done,
                    f"Aligning the other way with {self.reverse.name}…")

    def shutdown(self) -> None:
        super().shutdown()
        self.reverse.shutdown()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._pending:
            self.refresh()

    def _draw_words(self) -> None:
        self.scene.clear()
        self._boxes, self._word_items = ([], []), []
        if self.translation is None:
            return
        src, tgt = words_of(self.translation.source_tokens), words_of(self.translation.target_tokens)
        font = QFont()
        font.setPointSize(11)
        self._boxes = (self._word_boxes(src, 0.0, font, QColor("#e0e7ff")),
                       self._word_boxes(tgt, 140.0, font, QColor("#dcfce7")))
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-10, -10, 10, 10))
        self._paint_lit()

    def show_highlight(self, translation: Translation | None, row: int, col: int) -> None:
        """Linked views: light up the words of target token `row` and source token `col` of `translation` (the
        one the Translate tab shows) and their links, when this view shows that translation."""
        if translation is None or translation is not self.translation:
            return
        targets, sources = word_ids(translation.target_tokens), word_ids(translation.source_tokens)
        word = [ids[i] if 0 <= i < len(ids) and ids[i] is not None else -1 for ids, i in ((targets, row), (sources, col))]
        self._lit = (word[0], word[1])
        self._paint_lit()

    def lit_links(self) -> list[tuple[int, int]]:
        """The (source word, target word) links lit up now."""
        target, source = self._lit
        return [(i, j) for i, j in self.links if i == source or j == target]

    def _paint_lit(self) -> None:
        """Lit words get a thick ring, their links a thick line, in the linked-views colour of the theme."""
        look = theme.current()
        lit = QColor(LIT_LINK[look.dark])
        target, source = self._lit
        n_source = len(self._boxes[0])
        for k, item in enumerate(self._word_items):
            on = k == source if k < n_source else k - n_source == target
            item.setPen(QPen(lit, 3) if on else QPen(QColor("#9ca3af")))
        lit_now = set(self.lit_links())
        top, bottom = self._boxes
        drawn = [(i, j) for i, j in self.links if i < len(top) and j < len(bottom)]  # one per line, in order
        for (i, j), line in zip(drawn, self.lines):
            line.setPen(QPen(lit, 4) if (i, j) in lit_now else self.link_pen(look))

    @staticmethod
    def link_pen(look: theme.Theme | None = None) -> QPen:
        """The links' pen: the theme's plot_line, readable (3:1 or more) on the plot background."""
        return QPen(QColor((look or theme.current()).plot_line), 2)

    def _restyle(self, look: theme.Theme) -> None:
        self.graphics.setBackgroundBrush(QBrush(QColor(look.plot_background)))
        self._paint_lit()  # the words' rings and every link's pen in the new theme's colours

    def _show_links(self, links: list[tuple[int, int]], note: str = "") -> None:
        self.links = links
        self.pharaoh_label.setText(f"Pharaoh: {self.pharaoh()}{note}")
        top, bottom = self._boxes
        pen = self.link_pen()
        for i, j in links:
            if i < len(top) and j < len(bottom):
                a, b = top[i], bottom[j]
                self.lines.append(self.scene.addLine(a.center().x(), a.bottom(), b.center().x(), b.top(), pen))
        self._paint_lit()

    def _word_boxes(self, words: list[str], y: float, font: QFont, fill: QColor) -> list[QRectF]:
        rects, x = [], 0.0
        for word in words:
            text = self.scene.addSimpleText(display_piece(word), font)
            text.setBrush(QBrush(QColor("#111827")))  # dark on the light word boxes in either theme
            w = text.boundingRect().width() + 14
            h = text.boundingRect().height() + 8
            rect = QRectF(x, y, w, h)
            self._word_items.append(self.scene.addRect(rect, QPen(QColor("#9ca3af")), QBrush(fill)))
            text.setZValue(1)
            text.setPos(x + 7, y + 4)
            rects.append(rect)
            x += w + 12
        return rects
