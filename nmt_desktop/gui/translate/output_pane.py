"""The Translate tab's output pane: the model's translation as clickable tokens, the target-language box and
the notes under the translation (score, a refusal, the source-language warning, coverage warnings, quality hint).

A function, not a class: the panel and the tests read these widgets as the panel's own attributes
(`panel.output`, `panel.score_label`, ...), which this sets; it lives apart so panel.py keeps room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QTextBrowser, QVBoxLayout

from ..labels import fit_width
from .output_html import FONT_PT, LINE_HEIGHT, OUTPUT_LINES
from .quality_hint import QualityHint
from .source_language_note import SourceLanguageNote
from .target_language import TargetLanguageBox

if TYPE_CHECKING:
    from .panel import TranslatePanel


class OutputBrowser(QTextBrowser):
    """The translation: asks for OUTPUT_LINES lines (`preferred_height`), makes do with fewer and scrolls."""

    preferred_height = 0

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        hint = super().sizeHint()
        return QSize(hint.width(), max(hint.height(), self.preferred_height))


def build_output_pane(panel: TranslatePanel) -> QFrame:
    """The pane under `panel.target_lang` (its title); sets panel.output, .target_language_box,
    .target_language_label, .score_label, .error_label, .language_note, .coverage_label and .quality_hint."""
    panel.output = output = OutputBrowser()
    output.setOpenLinks(False)
    output.setOpenExternalLinks(False)
    output.setPlaceholderText("The translation appears here, token by token.")
    font = QFont(output.font().family(), FONT_PT)
    line = LINE_HEIGHT * QFontMetricsF(font).lineSpacing()
    # OUTPUT_LINES lines before it scrolls where the window has the room (the stretch gives it the rest of the
    # pane), and never fewer than two: a minimum the pane could not honour made Qt draw the notes under the
    # translation over it
    output.setMinimumHeight(int(2 * line + 24))
    output.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
    output.preferred_height = int(OUTPUT_LINES * line + 24)
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
    panel.score_label = fit_width(QLabel(""))  # wraps: a long score line never widens the pane
    panel.score_label.setObjectName("hint")
    ol.addWidget(panel.score_label)
    panel.error_label = QLabel("")  # a refusal or failure, inline like the other refusals (never a modal box)
    panel.error_label.setObjectName("error")  # the theme's error colour (gui/theme.py)
    fit_width(panel.error_label)
    panel.error_label.hide()
    ol.addWidget(panel.error_label)
    panel.language_note = SourceLanguageNote()  # "This looks like Chinese (zh), not English (en): …"
    ol.addWidget(panel.language_note)
    panel.coverage_label = QLabel("")
    panel.coverage_label.setObjectName("warning")  # the theme's stylesheet colours it (gui/theme.py)
    fit_width(panel.coverage_label)  # one short line (output_html.coverage_summary), the list on hover
    panel.coverage_label.hide()
    ol.addWidget(panel.coverage_label)
    panel.quality_hint = QualityHint(panel)  # "Long input: …" under the translation (quality_hint.py)
    ol.addWidget(panel.quality_hint)
    return out_box
