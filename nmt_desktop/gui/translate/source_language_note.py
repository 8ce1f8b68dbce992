"""The one-line warning under the translation when the text is not in the language the model reads.

The core decides (`core/decoding/source_language.language_warning`: an offline identifier, silent on short
inputs); this label only shows its sentence, in the theme's warning colour, inline with the other notes and
never as a dialog: the text is still translated, since the user may know better.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from nmt_desktop.core.decoding.source_language import language_warning

from ..labels import fit_width, set_fitting_text


class SourceLanguageNote(QLabel):
    """Hidden unless the last text sent to the model looked like another language than the model's."""

    def __init__(self) -> None:
        super().__init__("")
        self.setObjectName("warning")  # the theme's warning colour (gui/theme.py)
        fit_width(self)  # wraps to the pane's width, never widens it
        self.hide()

    def show_for(self, text: str, source_language: str) -> None:
        """Check `text` for a model reading `source_language`: show the warning, or hide."""
        warning = language_warning(text, source_language)
        set_fitting_text(self, f"⚠ {warning}" if warning else "")
        self.setVisible(bool(warning))

    def clear_note(self) -> None:
        self.setText("")
        self.hide()
