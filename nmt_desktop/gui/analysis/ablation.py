"""Head ablation: switch heads off (zeroed, or replaced by their mean over probe sentences), re-translate on
the view's worker thread, and show which tokens changed against the original translation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton,
                               QSplitter, QTextBrowser, QVBoxLayout, QWidget)

from nmt_desktop.core.analysis import ablation as analysis
from nmt_desktop.core.analysis.head_names import head_description, head_name
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.document import split_sentences

from ..job_view import JobView
from .analysis_view import AnalysisView
from .tokens import token_diff, tokens_html

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

ABLATION_MODES = ("Zero", "Probe mean")


class AblationView(JobView, AnalysisView):
    """Switch heads off (zeroed or replaced by their probe mean), re-translate, compare with the original."""

    retranslated = Signal(object)  # the ablated Translation
    failure = "Re-translation failed"

    def __init__(self, parent: QWidget | None = None):
        super().__init__("analysis-worker", parent)
        self.translator: Translator | None = None
        self.translation: Translation | None = None
        self.cfg: DecodeConfig | None = None
        self.ablated: Translation | None = None
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
        self.all_button.setToolTip("Tick every head (all switched off)")
        self.all_button.clicked.connect(lambda: self.set_all(True))
        self.none_button = QPushButton("None")
        self.none_button.setToolTip("Untick every head")
        self.none_button.clicked.connect(lambda: self.set_all(False))
        self.run_button = QPushButton("Re-translate")
        self.run_button.setObjectName("primaryButton")
        self.run_button.setToolTip("Translate the sentence again with the ticked heads switched off")
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
        self._update_enabled()

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        self.translator = translator
        self.forget_job()
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.boxes = {}
        if translator is not None:
            for layer, head in analysis.all_heads(translator):
                box = QCheckBox(head_name(layer, head))
                box.setToolTip(head_description(layer, head))
                self.grid.addWidget(box, layer, head)
                self.boxes[(layer, head)] = box
        self._update_enabled()

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
        self.translation, self.cfg, self.ablated = translation, cfg, None
        self.original.setHtml(tokens_html(translation.target_tokens, set()))
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

        def job() -> Translation:
            if not heads:
                return translator.translate(text, cfg)
            if mean_mode:
                override = analysis.mean_override(analysis.head_means(translator, probe), heads)
                return translator.translate(text, cfg, head_override=override)
            return translator.translate(text, cfg, head_mask=analysis.ablation_mask(translator, heads))

        return self.run_job(job, self._show_ablated, f"Re-translating with {len(heads)} head(s) "
                            f"{'replaced by their probe mean' if mean_mode else 'zeroed'}…")

    def _show_ablated(self, translation: Translation) -> None:
        assert self.translation is not None
        self.ablated = translation
        old, new = self.translation.target_tokens, translation.target_tokens
        changed_old, changed_new = token_diff(old, new)
        self.original.setHtml(tokens_html(old, changed_old))
        self.result.setHtml(tokens_html(new, changed_new))
        self.status.setText("Same translation as the original." if old == new else
                            f"{len(changed_new)} of {len(new)} tokens changed (highlighted).")
        self.retranslated.emit(translation)
