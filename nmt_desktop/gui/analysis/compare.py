"""Comparing two models: the current input translated by the loaded model (A) and a second model (B), their
attention at one layer and head side by side, and B - A where the token sequences match.

Model B is picked from the list the Translate tab's model picker offers (recent, bundled and installed models:
`ModelsPanel.picker_models`, handed in by the window through `set_models`) or from any folder (Browse…). Until
a comparison of the current input exists the view says what is missing instead of showing empty axes, and
B - A has a diverging colour bar symmetric around 0 (white: no difference)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPushButton, QSpinBox, QSplitter, QStackedWidget, QTextBrowser,
                               QVBoxLayout, QWidget)

from nmt_desktop.core.analysis.head_names import head_name
from nmt_desktop.core.config import DecodeConfig

from ..empty_state import EmptyMessage
from ..attention.focus import FocusView
from ..job_view import JobView
from ..models.picker import ModelPicker
from .analysis_view import AnalysisView
from .second_model import ask_model_path, load_second_model

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

DIFF_LABEL = "B − A (attention weight)"
_MIN_SPAN = 1e-3  # the colour bar of identical attentions still spans a readable -0.001..+0.001


def diff_levels(diff: np.ndarray) -> tuple[float, float]:
    """(-m, +m), m the largest |B - A|: a scale symmetric around 0, so white is "no difference"."""
    top = float(np.abs(diff).max()) if diff.size else 0.0
    top = top if np.isfinite(top) else 0.0
    return -max(top, _MIN_SPAN), max(top, _MIN_SPAN)


class CompareView(JobView, AnalysisView):
    """The current input translated by the loaded model (A) and a second model (B): both translations, their
    attention at a chosen layer and head side by side, and B - A where the token sequences match."""

    compared = Signal(object, object)  # Translation A, Translation B
    otherLoaded = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("compare-worker", parent)
        self.translator: Translator | None = None
        self.other: Translator | None = None
        self.other_name = ""
        self.other_path = ""  # where model B was loaded from ("" for one handed in by set_other)
        self.models: list[tuple[str, str]] = []  # what the picker offers: (label, path)
        self.source_text = ""
        self.a: Translation | None = None
        self.b: Translation | None = None
        self.picker = ModelPicker()
        self.picker.setToolTip("Model B: an installed or bundled model to compare with the loaded one "
                               "(Browse… for any other model folder)")
        self.picker.setPlaceholderText("Choose model B…")
        self.picker.modelChosen.connect(self.load_other)
        self._shown: tuple[object, ...] = ()  # what the picker was last filled with, and its index then
        self._shown_index = -1
        self.open_button = QPushButton("Browse…")
        self.open_button.setToolTip("Choose model B from a folder (or .zip) that is not in the list")
        self.open_button.clicked.connect(self._ask_model)
        self.run_button = QPushButton("Compare")
        self.run_button.setObjectName("primaryButton")
        self.run_button.setToolTip("Translate the sentence with both models and show their attention side by side")
        self.run_button.clicked.connect(lambda: self.compare())
        self.layer = QSpinBox()
        self.head = QSpinBox()
        for w, prefix, tip in ((self.layer, "L", "Decoder layer compared, counted from 1"),
                               (self.head, "H", "Cross-attention head compared, counted from 1")):
            w.setPrefix(prefix)  # reads L3 and H2, the spelling of every view (core/analysis/head_names.py)
            w.setRange(1, 1)
            w.setToolTip(tip)
            w.valueChanged.connect(lambda _v: self.refresh())
        self.texts = QTextBrowser()
        self.texts.setMaximumHeight(110)
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.view_a, self.view_b, self.view_diff = FocusView(), FocusView(), FocusView(diverging=True)
        bar_axis = self.view_diff.colorbar.getAxis("right")
        bar_axis.enableAutoSIPrefix(False)  # ticks in attention weight (-0.1 … 0.1), not "-100 … 100 (x0.001)"
        bar_axis.setLabel(DIFF_LABEL)
        self.no_diff = EmptyMessage("No B − A map")  # in the third place while the token sequences differ
        self.diff_stack = QStackedWidget()
        self.diff_stack.addWidget(self.view_diff)
        self.diff_stack.addWidget(self.no_diff)
        row = QHBoxLayout()
        row.addWidget(QLabel("Model B"))
        row.addWidget(self.picker, 1)
        row.addWidget(self.open_button)
        row.addWidget(QLabel("Layer"))
        row.addWidget(self.layer)
        row.addWidget(QLabel("Head"))
        row.addWidget(self.head)
        row.addWidget(self.run_button)
        views = QSplitter(Qt.Horizontal)
        for v in (self.view_a, self.view_b, self.diff_stack):
            views.addWidget(v)
        self.result_page = QWidget()
        result = QVBoxLayout(self.result_page)
        result.setContentsMargins(0, 0, 0, 0)
        result.addWidget(self.texts)
        result.addWidget(views, 1)
        self.empty = EmptyMessage()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.result_page)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.pages, 1)
        self._update_enabled()

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        self.translator, self.a, self.b = translator, None, None
        self.forget_job()
        self._update_ranges()

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
        """Only its source: both models translate it afresh on Compare."""
        self.set_source(translation.source)

    def set_source(self, text: str) -> None:
        if text != self.source_text:
            self.a = self.b = None  # a comparison of another input no longer belongs on screen
        self.source_text = text
        self._update_enabled()

    def set_models(self, models: list[tuple[str, str]]) -> None:
        """The models to offer for B, (label, path) as the Translate tab's picker lists them."""
        self.models = list(models)
        self._show_other()

    def set_other(self, translator: Translator, name: str = "", path: str = "") -> None:
        """Use `translator` as model B (`path`: where it was loaded from, shown selected in the picker)."""
        self.other, self.other_name = translator, name or getattr(translator, "name", "") or "model B"
        self.other_path = path
        self.b = None
        self._update_ranges()
        self.otherLoaded.emit(translator)

    def load_other(self, path: str) -> int:
        """Load model B from a folder, zip or installed model's name on the worker thread."""
        def done(loaded: tuple[Translator, str]) -> None:
            self.status.setText("")
            self.set_other(*loaded, path=path)

        return self.run_job(lambda: load_second_model(path), done, f"Loading {Path(path).name}…")

    def _ask_model(self) -> None:
        path = ask_model_path(self, "Open model B (a model folder)")
        if path:
            self.load_other(path)

    def _show_other(self) -> None:
        """The picker shows model B as loaded (a pick that failed or is still loading is put back)."""
        shown = (tuple(self.models), self.other_path, self.other_name if self.other is not None else None)
        if shown != self._shown or self.picker.currentIndex() != self._shown_index:  # else leave an open list be
            self.picker.set_models(self.models, self.other_path or None)
            if self.other is not None and not self.other_path:  # handed in, not loaded from a path
                self.picker.insertItem(0, self.other_name, "")
                self.picker.setCurrentIndex(0)
            self._shown, self._shown_index = shown, self.picker.currentIndex()
        self.picker.setEnabled(self.picker.count() > 0 and not self.running)

    def _update_ranges(self) -> None:
        models = [t for t in (self.translator, self.other) if t is not None]
        if models:
            self.layer.setMaximum(min(t.config.decoder_layers for t in models))
            self.head.setMaximum(min(t.config.n_heads for t in models))
        self._update_enabled()

    def _update_enabled(self) -> None:
        self.run_button.setEnabled(self.translator is not None and self.other is not None
                                   and bool(self.source_text.strip()) and not self.running)
        self.open_button.setEnabled(not self.running)
        if not self.running:
            self._show_other()
        else:
            self.picker.setEnabled(False)
        self._show_page()

    def _show_page(self) -> None:
        """The comparison when there is one for the current input and models, else what is missing."""
        if self.a is not None and self.b is not None:
            self.pages.setCurrentWidget(self.result_page)
            return
        if self.other is None:
            title = "Choose model B"
            hint = ("Pick a second model in the list above (installed or bundled models), or Browse… for a model "
                    "folder, to see its attention beside the loaded model's on the current input.")
        elif self.translator is None:
            title, hint = "No model loaded", "Load model A (the one that translates) on the Models tab."
        elif not self.source_text.strip():
            title, hint = "Nothing to compare yet", "Translate a sentence on the Translate tab, then click Compare."
        else:
            title = f"Model B: {self.other_name}"
            hint = ("Click Compare: both models translate the current input, and their attention at the chosen "
                    "layer and head is shown side by side, with B − A where their tokens match.")
        self.empty.set_message(title, hint)
        self.pages.setCurrentWidget(self.empty)

    def compare(self) -> int:
        """Translate the current input with both models (greedy, with attention) on the worker thread."""
        if not (self.translator is not None and self.other is not None and self.source_text.strip()):
            return 0
        a, b, text = self.translator, self.other, self.source_text
        cfg = DecodeConfig(attention=True, alternatives=0)
        return self.run_job(lambda: (a.translate(text, cfg), b.translate(text, cfg)), self._show_pair,
                            "Translating with both…")

    def _show_pair(self, pair: tuple[Translation, Translation]) -> None:
        self.a, self.b = pair
        self.texts.setHtml(f"<p><b>A</b> ({html.escape(getattr(self.translator, 'name', '') or 'loaded model')}): "
                           f"{html.escape(self.a.text)}</p><p><b>B</b> ({html.escape(self.other_name)}): "
                           f"{html.escape(self.b.text)}</p>")
        self._show_page()
        self.refresh()
        self.compared.emit(self.a, self.b)

    def same_tokens(self) -> bool:
        return (self.a is not None and self.b is not None and self.a.source_tokens == self.b.source_tokens
                and self.a.target_tokens == self.b.target_tokens)

    def refresh(self) -> None:
        if self.a is None or self.b is None or self.a.attention is None or self.b.attention is None:
            return
        layer, head = self.layer.value() - 1, self.head.value() - 1  # the spin boxes count from 1
        ma, mb = self.a.attention[layer, head], self.b.attention[layer, head]  # (T, S) each
        title = head_name(layer, head)
        self.view_a.set_matrix(ma, self.a.source_tokens, self.a.target_tokens, title=f"A · {title}")
        self.view_b.set_matrix(mb, self.b.source_tokens, self.b.target_tokens, title=f"B · {title}")
        if self.same_tokens():
            diff = (mb - ma).astype(np.float32)
            self.view_diff.set_matrix(diff, self.a.source_tokens, self.a.target_tokens, title=f"B − A · {title}",
                                      levels=diff_levels(diff))
            self.diff_stack.setCurrentWidget(self.view_diff)
            self.status.setText("Same tokens: the right view is B − A (blue: B attends less, red: more).")
        else:
            self.view_diff.set_matrix(np.zeros((0, 0), np.float32), [], [], title="B − A: token sequences differ")
            what = ("translations" if self.a.source_tokens == self.b.source_tokens
                    else "source tokenizations (different vocabularies)")
            self.no_diff.set_message("No B − A map", f"The two {what} differ: B − A needs the same tokens in "
                                     "both, so only A's and B's attention are shown.")
            self.diff_stack.setCurrentWidget(self.no_diff)
            self.status.setText(f"The two {what} differ: both attentions are shown; B − A is only computed "
                                "where the token sequences match.")
