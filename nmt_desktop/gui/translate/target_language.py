"""The target-language box of a multilingual model (OPUS-MT's en-ROMANCE, ...): which `>>code<<` token starts
the source. Hidden for models with one target language."""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QComboBox, QLabel

from nmt_desktop.core.decoding.translator import language_code
from nmt_desktop.core.hub.catalogue import language_label  # "French (fr)"; panel.py takes it from here

TIP = ("This model is multilingual: it translates into the language whose token (e.g. >>fra<<) starts the "
       "source. The choice applies to the next translation; a text that starts with its own >>code<< keeps it.")


class TargetLanguageBox(QComboBox):
    """The model's target languages by name; `label` names the box and shows and hides with it."""

    def __init__(self) -> None:
        super().__init__()
        self.setToolTip(TIP)
        self.label = QLabel("Target language")
        self.label.setBuddy(self)
        self.show_languages([], "")

    def show_languages(self, tokens: list[str], tgt_lang: str) -> None:
        """Offer `tokens` (`>>code<<`); the default is the model's tgt_lang if it is one of them, else the
        first; reloading a model with the same languages (e.g. the int8 switch) keeps the user's choice."""
        kept = self.currentData() if [self.itemData(i) for i in range(self.count())] == tokens else None
        with QSignalBlocker(self):
            self.clear()
            for token in tokens:
                self.addItem(language_label(language_code(token)), token)
            if tokens:
                default = next((t for t in tokens if tgt_lang in (t, language_code(t))), tokens[0])
                self.setCurrentIndex(tokens.index(kept or default))
        self.setVisible(bool(tokens))
        self.label.setVisible(bool(tokens))

    def chosen(self) -> str | None:
        """The `>>code<<` token chosen; None for a model that is not multilingual."""
        return self.currentData() if self.count() else None
