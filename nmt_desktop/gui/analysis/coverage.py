"""Coverage warnings: possible omissions (source words with little attention) and diffuse target tokens
(`core.analysis.heads.coverage_warnings`), listed and highlighted in the tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QListWidget, QTextBrowser, QVBoxLayout, QWidget

from nmt_desktop.core.analysis import coverage as analysis
from nmt_desktop.core.analysis.words import display_piece, word_ids

from .analysis_view import AnalysisView
from .tokens import tokens_html

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.results import Translation


class CoverageView(QWidget, AnalysisView):
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
        self.translation: Translation | None = None
        row = QHBoxLayout()
        row.addWidget(QLabel("Omission threshold"))
        row.addWidget(self.low)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.tokens)
        layout.addWidget(self.list, 1)

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
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
            self.list.addItem(f"{what} {w.index} “{display_piece(w.token)}” ({unit} {w.value:.3f})")
        if not self.warnings:
            self.list.addItem("No coverage warnings.")
        omitted = {w.index for w in self.warnings if w.kind == "omission"}
        diffuse = {w.index for w in self.warnings if w.kind == "diffuse"}
        src_ids = word_ids(self.translation.source_tokens)
        src_marked = {j for j, w in enumerate(src_ids) if w in omitted}
        self.tokens.setHtml("<p><b>Source</b></p>" + tokens_html(self.translation.source_tokens, src_marked, "#fecaca")
                            + "<p><b>Translation</b></p>" + tokens_html(self.translation.target_tokens, diffuse,
                                                                        "#fed7aa"))
