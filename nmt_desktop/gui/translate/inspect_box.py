"""The Translate tab's "Your translation" pane: type, paste or edit a translation of one's own, then
"Inspect this translation" scores it with the model (`Translator.score_batch`, teacher forcing) on a worker
thread, sentence pair by sentence pair as the Translate tab translates the source (inspect_pairs.py), with
the quality estimate of each pair (trust.py: flagged words marked, words that look left out named).

Why a pane of its own: a reference, a draft or a student's answer is read the way the model reads it:
how probable each token is, where the model would have said something else, which source words each
token attends to. The result is an ordinary `Translation`, so the Translate tab's attention grid and
focus view and the Analysis tab show it through the code path a finished translation takes
(`showTranslation`); the "Show" button beside each sentence score switches them between yours and the
model's own translation, scored the same way. A refused or failed scoring is one sentence in the pane's
status line (and `failed` for the window's error box); the GUI thread never waits for the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..job_view import JobView
from .inspect_pairs import SCORE_CONFIG, InspectResult, ModelUnit, score_text
from .inspect_view import GIVEN, InspectView
from .source_edit import SourceEdit
from .trust import estimate_pairs

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

    from .tab_api import TranslateTab

__all__ = ["SCORE_CONFIG", "InspectBox", "TranslationEdit"]


class TranslationEdit(SourceEdit):
    """"Your translation": Ctrl+Enter inspects here, before the window's Translate shortcut can take it."""

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.ShortcutOverride and isinstance(event, QKeyEvent) \
                and event.key() in (Qt.Key_Return, Qt.Key_Enter) and event.modifiers() & Qt.ControlModifier:
            event.accept()  # delivered to keyPressEvent as a key press: `submitted`
            return True
        return super().event(event)


class InspectBox(JobView):
    """The pane: `editor`, `use_model_button`, `inspect_button`, `status` and `view` (InspectView: the
    result, its legend and the "Show" buttons). `bind(panel)` connects it to the Translate panel it reads
    the source and the model's translation from."""

    failure = "Cannot inspect"
    inspected = Signal(object)  # InspectResult, once shown
    showTranslation = Signal(object, str)  # the Translation the attention views should show, and what it is
    failed = Signal(str)  # a scoring that failed: one sentence

    def __init__(self, parent: QWidget | None = None):
        super().__init__("inspect-worker", parent)
        self.translator: Translator | None = None
        self.panel: TranslateTab | None = None
        self.result: InspectResult | None = None
        self.shown = ""  # GIVEN or MODEL once a result is shown
        self.estimates: list = []  # the quality estimate of each pair's given translation (trust.py), once scored
        self.title = QLabel("Your translation")
        self.title.setObjectName("paneTitle")
        self.editor = TranslationEdit()  # Ctrl+Enter inspects
        self.editor.setPlaceholderText("Type or paste a translation of your own (a reference, a draft), or use "
                                       "the model's and edit it…")
        self.editor.setMinimumHeight(44)
        self.editor.setMaximumHeight(72)
        self.use_model_button = QPushButton("Use model's translation")
        self.use_model_button.setToolTip("Copy the model's translation into this box, to edit it")
        self.inspect_button = QPushButton("Inspect this translation")
        self.inspect_button.setToolTip("Score this translation of the source with the model (Ctrl+I, or Ctrl+Enter in "
                                       "the box): each token's probability, where the model would choose otherwise, "
                                       "and its attention")
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.status.hide()
        self.view = InspectView()

        frame = QFrame()
        frame.setObjectName("pane")
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addStretch(1)
        header.addWidget(self.view.legend)
        buttons = QHBoxLayout()
        buttons.addWidget(self.use_model_button)
        buttons.addStretch(1)
        buttons.addWidget(self.inspect_button)
        inner = QVBoxLayout(frame)
        inner.addLayout(header)
        inner.addWidget(self.editor)
        inner.addWidget(self.view, 1)
        inner.addWidget(self.status)
        inner.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(frame)

        self.editor.submitted.connect(self.inspect)
        self.inspect_button.clicked.connect(lambda: self.inspect())
        self.use_model_button.clicked.connect(lambda: self.use_model_translation())
        self.view.showRequested.connect(self.show_translation)
        self._update_enabled()

    # -- wiring ---------------------------------------------------------------------------------------

    def bind(self, panel: TranslateTab) -> None:
        """Read the source and the model's translation from `panel`; show results in its attention view and
        alternatives; a new translation there returns its view to the model's tokens."""
        self.panel = panel
        self.showTranslation.connect(self._show_in_panel)
        self.view.tokenHovered.connect(self._show_step)
        self.view.tokenClicked.connect(self._show_step)
        panel.translationStarted.connect(self._panel_translating)

    def set_translator(self, translator: Translator | None) -> None:
        """A new model: a scoring under way for the old one is dropped, its result cleared."""
        self.forget_job()
        self.translator = translator
        self.result, self.shown = None, ""
        self.view.clear()
        self.show_status("")
        self._update_enabled()

    def show_status(self, text: str) -> None:
        """One line under the result: progress, or a refusal or failure (in the theme's error colour)."""
        error = text.startswith(self.failure)
        if self.status.objectName() != ("error" if error else "hint"):
            self.status.setObjectName("error" if error else "hint")
            self.status.style().polish(self.status)
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def _update_enabled(self) -> None:
        self.inspect_button.setEnabled(not self.running)
        self.use_model_button.setEnabled(not self.running)

    # -- actions --------------------------------------------------------------------------------------

    def use_model_translation(self) -> bool:
        """Copy the Translate tab's translation into the editor (one line per line, as shown)."""
        text = self.panel.output_text().strip() if self.panel is not None else ""
        if not text or (self.panel is not None and self.panel.running):
            self.show_status("Translate the source first: there is no finished translation of the model to copy.")
            return False
        self.editor.setPlainText(text)
        self.editor.setFocus()
        self.show_status("")
        return True

    def inspect(self) -> int:
        """Score the editor's translation of the Translate tab's source; returns the request id (0: refused,
        the reason in the status line)."""
        source = self.panel.source.toPlainText() if self.panel is not None else ""
        target = self.editor.toPlainText()
        problem = ("no model is loaded: open a model first" if self.translator is None
                   else "the source is empty: type the sentence your translation translates" if not source.strip()
                   else "your translation is empty: type or paste one, or use the model's translation"
                   if not target.strip() else "")
        if problem:
            self.show_status(f"{self.failure}: {problem}.")
            return 0
        translator, model_units = self.translator, self._model_units()
        estimates: list = []  # filled on the worker thread before the result is handed back

        def job() -> InspectResult:
            result = score_text(translator, source, target, model_units)
            estimates.extend(estimate_pairs(translator, [pair.given for pair in result.pairs]))
            return result

        def done(result: InspectResult) -> None:
            self.estimates = estimates
            self._on_scored(result)

        return self.run_job(job, done, "Scoring your translation…")

    def _model_units(self) -> list[ModelUnit]:
        """The Translate tab's finished units (their source text, translation and token ids): the model's own
        translation of every unit whose source is still the same."""
        units = self.panel.sentences if self.panel is not None and not self.panel.running else []
        return [ModelUnit(u.unit.line, u.text, u.translation.text, tuple(u.translation.best.token_ids))
                for u in units if u.translation is not None]

    def _on_scored(self, result: InspectResult) -> None:
        self.result = result
        self.view.show_result(result, self.estimates)
        self.show_status("")
        marks = result.disagreements  # the Alternatives tab: the first disagreement, else the least probable token
        if marks:
            pair, index = marks[0][0], marks[0][1].index
        else:
            pair = 0
            logprobs = result.pairs[0].given.best.token_logprobs
            index = min(range(len(logprobs)), key=logprobs.__getitem__)
        result.shown = pair
        self.show_translation(GIVEN)
        self._show_step(pair, index)
        self.inspected.emit(result)

    def _on_failed(self, request_id: int, message: str) -> None:
        current = request_id == self.request_id
        super()._on_failed(request_id, message)
        if current:
            self.failed.emit(message)

    def show_translation(self, which: str) -> None:
        """Show `which` translation of the result in the attention views (GIVEN: yours, MODEL: the model's)."""
        if self.result is None:
            return
        self.shown = which
        self.view.mark_shown(which)
        self.showTranslation.emit(self.result.given if which == GIVEN else self.result.model, which)

    # -- the panel's views ----------------------------------------------------------------------------

    def _show_in_panel(self, translation: Translation, which: str) -> None:
        if self.panel is None or translation.best.attention is None:
            return
        self.panel.view.set_translation(translation)
        several = self.result is not None and len(self.result.pairs) > 1
        where = f", sentence {self.result.shown + 1} of {len(self.result.pairs)}" if several else ""
        self.panel.view.status_label.setText(f"Showing {which}{where}")

    def _show_step(self, pair: int, index: int) -> None:
        """A token of pair `pair` hovered or clicked: the views show that pair, the Alternatives tab the token."""
        if self.panel is None or self.result is None or self.translator is None \
                or not 0 <= pair < len(self.result.pairs):
            return
        if pair != self.result.shown:
            self.result.shown = pair
            if self.shown:
                self.show_translation(self.shown)
        steps = self.result.given.best.steps(self.translator.config.eos_id)
        if 0 <= index < len(steps):
            self.panel.show_alternatives(steps[index])

    def _panel_translating(self, *_: object) -> None:
        """The Translate tab decodes anew: its attention view streams the model's tokens again."""
        self.panel.view.status_label.setText("")
        self.shown = ""
        self.view.mark_shown("")
