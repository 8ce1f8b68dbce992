"""Forced prefix: re-decode with an alternative token forced at one step (prefix = the best tokens before it,
then the alternative) and show the new translation and the attention difference (new - old)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget

from nmt_desktop.core.analysis.words import display_piece
from nmt_desktop.core.config import DecodeConfig

from ..attention.focus import FocusView
from ..empty_state import EmptyMessage
from ..job_view import JobView
from .analysis_view import AnalysisView
from .layer_combo import layer_choice, layer_items
from .tokens import token_diff, tokens_html

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation


class ForcedPrefixView(JobView, AnalysisView):
    """Force an alternative at step t: re-decode with prefix = best tokens[:t] + [alternative], then show
    the new translation and the attention difference (new - old) over the shared target positions."""

    forcedDone = Signal(object)  # the new Translation
    failure = "Forced re-decoding failed"

    def __init__(self, parent: QWidget | None = None):
        super().__init__("forced-prefix-worker", parent)
        self.translator: Translator | None = None
        self.old: Translation | None = None
        self.new: Translation | None = None
        self.prefix: list[int] = []
        self.cfg: DecodeConfig | None = None
        self.info = QLabel("Right-click an alternative on the Translate tab (Alternatives) and choose "
                           "“Force this token” to re-decode from there.")
        self.info.setObjectName("hint")
        self.info.setWordWrap(True)
        self.texts = QTextBrowser()
        self.texts.setMaximumHeight(130)
        self.layer = QComboBox()
        self.layer.setToolTip("Attention compared: a layer's heads averaged, or all layers")
        self.layer.currentIndexChanged.connect(self.refresh)
        self.diff = FocusView(diverging=True)  # blue < 0 < red
        row = QHBoxLayout()
        row.addWidget(QLabel("Attention difference (new − old) of"))
        row.addWidget(self.layer, 1)
        row.addStretch(1)
        result = QWidget()  # the texts and the difference map, once a forced re-decoding has run
        rl = QVBoxLayout(result)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.texts)
        rl.addLayout(row)
        rl.addWidget(self.diff, 1)
        # before that: what is missing and how to get it, never blank axes
        self.empty = EmptyMessage("No forced re-decoding yet",
                                  "On the Translate tab, right-click a token's alternative (Alternatives) and "
                                  "choose “Force this token”: the new translation and how its attention differs "
                                  "from the original's appear here.")
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(result)
        layout = QVBoxLayout(self)
        layout.addWidget(self.info)
        layout.addWidget(self.pages, 1)

    def status_label(self) -> QLabel:
        return self.info

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        self.translator, self.old, self.new = translator, None, None
        self.forget_job()
        self.pages.setCurrentWidget(self.empty)  # a new model: the last result is not of it
        if translator is not None:
            self.layer.blockSignals(True)
            self.layer.clear()
            self.layer.addItems(layer_items(translator.config.decoder_layers))
            self.layer.blockSignals(False)

    def force(self, translation: Translation, step: int, token_id: int, cfg: DecodeConfig | None = None) -> int:
        """Re-decode `translation`'s input with its best tokens[:step] + [token_id] forced; returns the id."""
        if self.translator is None:
            return 0
        self.old, self.new, self.cfg = translation, None, cfg
        self.prefix = [int(t) for t in translation.target_ids[:step]] + [int(token_id)]
        translator, text, prefix = self.translator, translation.source, list(self.prefix)
        cfg = cfg or DecodeConfig(attention=True, alternatives=5)
        piece = display_piece(translator.target_pieces([token_id])[0])
        return self.run_job(lambda: translator.translate(text, cfg, prefix=prefix), self._show_forced,
                            f"Forcing “{piece}” at step {step + 1}: re-decoding…")

    def _show_forced(self, translation: Translation) -> None:
        assert self.old is not None
        self.new = translation
        old, new = self.old.target_tokens, translation.target_tokens
        changed_old, changed_new = token_diff(old, new)
        self.info.setText(f"Forced prefix of {len(self.prefix)} token(s); changed tokens highlighted.")
        self.texts.setHtml("<p><b>Original</b></p>" + tokens_html(old, changed_old)
                           + "<p><b>Forced</b></p>" + tokens_html(new, changed_new))
        self.refresh()
        self.pages.setCurrentIndex(1)
        self.forcedDone.emit(translation)

    def layer_choice(self) -> int | None:
        return layer_choice(self.layer.currentIndex())

    def difference(self) -> np.ndarray:
        """new - old attention (heads averaged, per the layer choice) over the shared rows (T_shared, S)."""
        if self.old is None or self.new is None or self.old.attention is None or self.new.attention is None:
            return np.zeros((0, 0), np.float32)
        layer = self.layer_choice()

        def avg(attn: np.ndarray) -> np.ndarray:  # (L, H, T, S) -> (T, S)
            a = attn if layer is None else attn[layer]
            return a.reshape(-1, *attn.shape[2:]).mean(0) if layer is None else a.mean(0)

        rows = min(self.old.attention.shape[2], self.new.attention.shape[2])
        return (avg(self.new.attention)[:rows] - avg(self.old.attention)[:rows]).astype(np.float32)

    def refresh(self) -> None:
        diff = self.difference()
        if diff.size == 0 or self.old is None or self.new is None:
            return
        top = max(float(np.abs(diff).max()), 1e-6)
        old, new = self.old.target_tokens, self.new.target_tokens
        labels = [display_piece(n) if n == o else f"{display_piece(o)}→{display_piece(n)}" for o, n in zip(old, new)]
        self.diff.set_matrix(diff, self.new.source_tokens, labels[: diff.shape[0]],
                             title=f"new − old ({self.layer.currentText()})", levels=(-top, top))
