"""The Analysis tab: head statistics, ablation, alignments, coverage, forced prefix, beam tree and model
comparison of the current translation (the Translate tab's shown sentence), one view a page.

Everything shown is computed by `nmt_desktop.core.analysis` and the decoder; the views only lay it out.
The pages are the registry's entries (`registry.VIEWS`), built and fanned out to in its order: the panel
names no view. Views that run work (re-translation, re-decoding, beam search, loading a model) do it on
their own worker thread through `job_view.JobView`, which drops the results of superseded requests.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from nmt_desktop.core.config import DecodeConfig

from ..labels import fit_width, set_fitting_text
from ..workers import one_line
from . import registry
from .analysis_view import AnalysisView

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

    from ..translate import TranslatePanel
    from ..models.loader import ModelInfo
    from .alignment import AlignmentView
    from .forced_prefix import ForcedPrefixView

log = logging.getLogger("nmt_desktop.gui.analysis")
TITLE_CHARS = 120  # each quoted text in the title, at most


class AnalysisPanel(QWidget):
    """The Analysis tab: one page per registry entry (`registry.VIEWS`), each also `self.<its attribute>`
    and `self.views[its key]`, fed the loaded model and the current translation."""

    alignment: AlignmentView  # typed for the calls made to them by name (the registry sets every attribute)
    forced: ForcedPrefixView

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translator: Translator | None = None
        self.translation: Translation | None = None
        self.title = QLabel("No translation yet: translate something on the Translate tab.")
        self.title.setObjectName("paneTitle")
        fit_width(self.title)  # it quotes the translation: never wider than the window
        self.tabs = QTabWidget()
        self.views: dict[str, AnalysisView] = {}  # --analysis-view key -> its view, in tab order
        for entry in registry.VIEWS:
            if hasattr(self, entry.attribute):
                raise ValueError(f"Analysis view {entry.key!r}: the panel already has an attribute "
                                 f"{entry.attribute!r}")
            view = entry.build()
            self.views[entry.key] = view
            setattr(self, entry.attribute, view)
            self.tabs.addTab(view, entry.title)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.tabs, 1)

    def set_translator(self, translator: Translator | None, _info: ModelInfo | None = None) -> None:
        self.translator = translator
        self.translation = None
        card: dict[str, Any] = (_info.card if _info is not None else {}) or getattr(translator, "card", {})
        for view in self.views.values():
            view.set_translator(translator, card)

    def set_translation(self, translation: Translation | None, cfg: DecodeConfig | None = None,
                        who: str = "") -> None:
        """Analyse one finished sentence (a core Translation decoded with attention); `who` names a scored one
        ("your translation (inspected)", "the model's translation (scored)")."""
        if translation is None or translation.attention is None or translation.attention.shape[2] == 0:
            self.title.setText("This translation has no attention to analyse.")
            return
        self.translation = translation
        if translation.best.forced and not who:
            who = "your translation (inspected)"  # scored, not decoded
        said = f"{who[:1].upper()}{who[1:]}: " if who else ""
        whole = f"{said}“{translation.source}”  →  “{translation.text}”"
        short = f"{said}“{_short(translation.source)}”  →  “{_short(translation.text)}”"
        set_fitting_text(self.title, short)
        self.title.setToolTip(whole if short != whole else "")
        for view in self.views.values():
            view.set_translation(translation, cfg)

    def force_alternative(self, translation: Translation, step: int, token_id: int,
                          cfg: DecodeConfig | None = None) -> int:
        """Show the Forced prefix page and re-decode with the alternative `token_id` forced at `step`."""
        self.tabs.setCurrentWidget(self.forced)
        return self.forced.force(translation, step, token_id, cfg)

    def shutdown(self) -> None:
        for view in self.views.values():
            view.shutdown()


def _short(text: str, limit: int = TITLE_CHARS) -> str:
    """A quoted text cut to `limit` characters: the title stays one or two lines (the whole on hover)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def connect_to_translate_panel(panel: AnalysisPanel, translate_panel: TranslatePanel,
                               on_error: Callable[[str], None] | None = None) -> None:
    """Feed `panel` the Translate tab's finished translation (the sentence shown there, and the one selected
    later in its Sentences list), its forced alternatives and an inspected translation of one's own."""

    def finished(translations: list[Translation], cfg: DecodeConfig | None) -> None:
        if not translations:
            return
        index = translate_panel.shown_sentence
        try:
            panel.set_translation(translations[index if 0 <= index < len(translations) else 0], cfg)
        except Exception as exc:  # noqa: BLE001
            log.exception("analysis failed")
            if on_error is not None:
                on_error(one_line(exc))

    def sentence_selected(index: int) -> None:
        sentences = translate_panel.sentences
        if 0 <= index < len(sentences) and sentences[index].translation is not None \
                and sentences[index].translation is not panel.translation:
            panel.set_translation(sentences[index].translation, getattr(translate_panel, "last_config", None))

    translate_panel.translationDone.connect(finished)
    translate_panel.sentence_list.currentRowChanged.connect(sentence_selected)
    translate_panel.alternativeForced.connect(panel.force_alternative)
    def linked(highlight) -> None:  # linked views: the Translate tab's word, lit up in the alignment links too
        unit = translate_panel.document.current()
        panel.alignment.show_highlight(unit.translation if unit is not None else None, highlight.row, highlight.col)

    translate_panel.links.tokens.changed.connect(linked)
    translate_panel.inspect_box.showTranslation.connect(  # "Inspect this translation": yours, or the model's
        lambda translation, which: panel.set_translation(translation, getattr(translate_panel, "last_config", None),
                                                         which))
