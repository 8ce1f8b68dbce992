"""The Translate tab's output pane: the model's translation as clickable tokens, the target-language box and
the notes under the translation (score, coverage warnings, quality hint).

A function, not a class: the panel and the tests read these widgets as the panel's own attributes
(`panel.output`, `panel.score_label`, ...), which this sets; it lives apart so panel.py keeps room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QTextBrowser, QVBoxLayout

from ..labels import fit_width
from .output_html import FONT_PT, LINE_HEIGHT, OUTPUT_LINES
from .quality_hint import QualityHint
from .target_language import TargetLanguageBox

if TYPE_CHECKING:
    from .panel import TranslatePanel


def build_output_pane(panel: TranslatePanel) -> QFrame:
    """The pane under `panel.target_lang` (its title); sets panel.output, .target_language_box,
    .target_language_label, .score_label, .error_label, .coverage_label and .quality_hint."""
    panel.output = output = QTextBrowser()
    output.setOpenLinks(False)
    output.setOpenExternalLinks(False)
    output.setPlaceholderText("The translation appears here, token by token.")
    font = QFont(output.font().family(), FONT_PT)  # room for OUTPUT_LINES lines before it scrolls
    output.setMinimumHeight(int(OUTPUT_LINES * LINE_HEIGHT * QFontMetricsF(font).lineSpacing() + 24))
    panel.target_language_box = TargetLanguageBox()
    panel.target_language_label = panel.target_language_box.label
    out_box = QFrame()
    out_box.setObjectName("pane")
    ol = QVBoxLayout(out_box)
    header = QHBoxLayout()
    header.addWidget(panel.target_lang)
    header.addStretch(1)
    header.addWidget(panel.target_language_label)
    header.addWidget(panel.target_language_box)
    ol.addLayout(header)
    ol.addWidget(output, 1)
    panel.score_label = QLabel("")
    panel.score_label.setObjectName("hint")
    ol.addWidget(panel.score_label)
    panel.error_label = QLabel("")  # a refusal or failure, inline like the other refusals (never a modal box)
    panel.error_label.setObjectName("error")  # the theme's error colour (gui/theme.py)
    fit_width(panel.error_label)
    panel.error_label.hide()
    ol.addWidget(panel.error_label)
    panel.coverage_label = QLabel("")
    panel.coverage_label.setObjectName("warning")  # the theme's stylesheet colours it (gui/theme.py)
    panel.coverage_label.setWordWrap(True)
    panel.coverage_label.hide()
    ol.addWidget(panel.coverage_label)
    panel.quality_hint = QualityHint(panel)  # "Long input: …" under the translation (quality_hint.py)
    ol.addWidget(panel.quality_hint)
    return out_box
