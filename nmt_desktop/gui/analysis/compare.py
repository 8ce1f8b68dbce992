"""Comparing two models: the current input translated by the loaded model (A) and a second model (B), their
attention at one layer and head side by side, and B - A where the token sequences match."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSpinBox, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from nmt_desktop.core.analysis.head_names import head_name
from nmt_desktop.core.config import DecodeConfig

from ..focus_view import FocusView
from .job import JobView
from .second_model import ask_model_path, load_second_model

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translation, Translator


class CompareView(JobView):
    """The current input translated by the loaded model (A) and a second model (B): both translations, their
    attention at a chosen layer and head side by side, and B - A where the token sequences match."""

    compared = Signal(object, object)  # Translation A, Translation B
    otherLoaded = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("compare-worker", parent)
        self.translator: Translator | None = None
        self.other: Translator | None = None
        self.other_name = ""
        self.source_text = ""
        self.a: Translation | None = None
        self.b: Translation | None = None
        self.open_button = QPushButton("Open model B…")
        self.open_button.setToolTip("Choose the second model (a folder or .zip) to compare with the loaded one")
        self.open_button.clicked.connect(self._ask_model)
        self.other_label = QLabel("Model B: none")
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
        self._update_enabled()

    def set_translator(self, translator: Translator | None) -> None:
        self.translator, self.a, self.b = translator, None, None
        self.forget_job()
        self._update_ranges()

    def set_source(self, text: str) -> None:
        self.source_text = text
        self._update_enabled()

    def set_other(self, translator: Translator, name: str = "") -> None:
        """Use `translator` as model B."""
        self.other, self.other_name = translator, name or getattr(translator, "name", "") or "model B"
        self.other_label.setText(f"Model B: {self.other_name}")
        self.b = None
        self._update_ranges()
        self.otherLoaded.emit(translator)

    def load_other(self, path: str) -> int:
        """Load model B from a folder or zip on the worker thread."""
        return self.run_job(lambda: load_second_model(path), self._other_loaded, f"Loading {Path(path).name}…")

    def _other_loaded(self, loaded: tuple[Translator, str]) -> None:
        self.status.setText("")
        self.set_other(*loaded)

    def _ask_model(self) -> None:
        path = ask_model_path(self, "Open model B (a model folder)")
        if path:
            self.load_other(path)

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
