"""The Translate tab's output pane: the model's translation as clickable tokens, the target-language box and
the notes under the translation (score, a refusal, what a Stop left, the source-language warning, coverage
warnings, quality hint, the trust line of the quality estimate).

`OutputPane` owns these widgets; the panel names them as its own attributes too (`panel.output`,
`panel.score_label`, ...), which the tests and the linked views read.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget

from ..labels import fit_width
from .output_html import FONT_PT, LINE_HEIGHT, OUTPUT_LINES
from .quality_hint import QualityHint
from .source_language_note import SourceLanguageNote
from .target_language import TargetLanguageBox
from .trust import TrustLine


class OutputBrowser(QTextBrowser):
    """The translation: asks for OUTPUT_LINES lines (`preferred_height`), makes do with fewer and scrolls."""

    preferred_height = 0

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        hint = super().sizeHint()
        return QSize(hint.width(), max(hint.height(), self.preferred_height))


def title_row(title: QLabel, *right: QWidget) -> QHBoxLayout:
    """A pane's header: its title on the left, `right` on the right (the model picker, the target language)."""
    row = QHBoxLayout()
    row.addWidget(title)
    row.addStretch(1)
    for widget in right:
        row.addWidget(widget)
    return row


class OutputPane(QFrame):
    """The pane under `title` (the target language's name): the translation, the target-language box and the
    notes under it. `panel`: the Translate tab, whose new requests clear the quality hint."""

    def __init__(self, title: QLabel, panel: QWidget):
        super().__init__()
        self.setObjectName("pane")
        self.output = output = OutputBrowser()
        output.setOpenLinks(False)
        output.setOpenExternalLinks(False)
        output.setPlaceholderText("The translation appears here, token by token.")
        font = QFont(output.font().family(), FONT_PT)
        line = LINE_HEIGHT * QFontMetricsF(font).lineSpacing()
        # OUTPUT_LINES lines before it scrolls where the window has the room (the stretch gives it the rest of
        # the pane), and never fewer than two: a minimum the pane could not honour made Qt draw the notes under
        # the translation over it
        output.setMinimumHeight(int(2 * line + 24))
        output.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        output.preferred_height = int(OUTPUT_LINES * line + 24)
        self.target_language_box = TargetLanguageBox()
        self.target_language_label = self.target_language_box.label
        ol = QVBoxLayout(self)
        ol.addLayout(title_row(title, self.target_language_label, self.target_language_box))
        ol.addWidget(output, 1)
        self.score_label = fit_width(QLabel(""))  # wraps: a long score line never widens the pane
        self.score_label.setObjectName("hint")
        ol.addWidget(self.score_label)
        self.error_label = QLabel("")  # a refusal or failure, inline like the other refusals (never a modal box)
        self.error_label.setObjectName("error")  # the theme's error colour (gui/theme.py)
        fit_width(self.error_label)
        self.error_label.hide()
        ol.addWidget(self.error_label)
        self.stop_note = QLabel("")  # "Stopped: 37 of 90 sentences translated; sentence 38 was cut and is not shown"
        self.stop_note.setObjectName("warning")
        fit_width(self.stop_note)
        self.stop_note.hide()
        ol.addWidget(self.stop_note)
        self.language_note = SourceLanguageNote()  # "This looks like Chinese (zh), not English (en): …"
        ol.addWidget(self.language_note)
        self.coverage_label = QLabel("")
        self.coverage_label.setObjectName("warning")  # the theme's stylesheet colours it (gui/theme.py)
        fit_width(self.coverage_label)  # one short line (output_html.coverage_summary), the list on hover
        self.coverage_label.hide()
        ol.addWidget(self.coverage_label)
        self.quality_hint = QualityHint(panel)  # "Long input: …" under the translation (quality_hint.py)
        ol.addWidget(self.quality_hint)
        self.trust_line = TrustLine()  # "Trust: medium (qe 48) · …", after the translation finished (trust.py)
        ol.addWidget(self.trust_line)
