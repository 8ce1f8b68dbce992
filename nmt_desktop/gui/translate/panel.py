"""The Translate tab: source editor, decode options, streaming output, alternatives, n-best list,
the list of units (the sentences of each line) and the attention view.

The text is cut into units by the core's one policy (core/decoding/document.py), as the CLI cuts it.
The panel owns a `TranslateWorker` on a QThread. Each request gets an id; signals from any other id
(a stopped or superseded request) are ignored. What is shown lives in a Qt-free
`TranslationDocument`; the widgets draw from it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Sequence

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, QUrl, Signal
from PySide6.QtWidgets import (QCheckBox, QFrame, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QPushButton, QSplitter, QTabWidget, QVBoxLayout, QWidget)

from nmt_desktop.core.config import ConfigError, DecodeConfig

from ..attention.grid import AttentionView
from ..workers import TranslateWorker, WorkerThread
from .alternatives import AlternativesView
from .decode_options import DecodeOptions
from .document_model import StopReport, UnitProgress, TranslationDocument
from .inspect_box import InspectBox
from .memory_view import MemoryView
from .output_html import follow_theme, output_html, parse_token_link
from ..labels import set_fitting_text
from ..models.picker import ModelPicker
from .nbest_list import NBestList
from .output_pane import OutputPane, title_row
from .quality_hint import show_coverage
from .source_edit import SourceEdit
from .target_language import language_label
from .score_line import TOOLTIP as SCORE_TOOLTIP, score_line
from .trust import clear_source_marks, mark_source
from .word_links import TranslateLinks

if TYPE_CHECKING:
    from nmt_desktop.core.analysis.coverage import CoverageWarning
    from nmt_desktop.core.decoding.results import Unit
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Step, Translation

    from ..models.loader import ModelInfo

log = logging.getLogger("nmt_desktop.gui.translate")

TYPE_DELAY_MS = 400


class TranslatePanel(QWidget):
    """Input, streaming output and inspection of one translation request at a time."""

    translationStarted = Signal(int)
    translationFinished = Signal(int)  # request id, after the view shows the result
    translationFailed = Signal(int, str)
    alternativeForced = Signal(object, int, int, object)  # Translation, step, token id, DecodeConfig (best hyp.)
    translationDone = Signal(object, object)  # the finished core Translations (one per unit), their DecodeConfig
    busyChanged = Signal(bool)
    statusMessage = Signal(str)
    _request = Signal(int, object, object, object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translator: Translator | None = None
        self.model_info: ModelInfo | None = None
        self.last_config: DecodeConfig | None = None
        self.request_id = 0  # the request whose signals are shown; 0 = none running
        self._next_id = 1
        self.document = TranslationDocument()
        self._follow_stream = True  # the view follows the unit being decoded

        self._build_ui()
        self.worker = TranslateWorker()
        self._worker_thread = WorkerThread(self.worker, "translate-worker")
        self._request.connect(self.worker.run)
        self.worker.started.connect(self._on_started)
        self.worker.step.connect(self._on_step)
        self.worker.unitFinished.connect(self._on_unit_finished)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)

        self._type_timer = QTimer(self, singleShot=True, interval=TYPE_DELAY_MS)
        self._type_timer.timeout.connect(self._typed)
        self._render_timer = QTimer(self, singleShot=True, interval=30)
        self._render_timer.timeout.connect(self._render_output)
        follow_theme(self, self._render_output)  # the output's colours come from View > Theme
        self._set_running(False)

    # -- the document, as the rest of the app reads it ------------------------------------------------

    @property
    def sentences(self) -> list[UnitProgress]:
        """The units of the request shown (each: .text, .steps, .translation once finished)."""
        return self.document.units

    @property
    def shown_sentence(self) -> int:
        """Index of the unit shown in the attention view (-1: none)."""
        return self.document.shown

    @property
    def coverage(self) -> list[list[CoverageWarning]]:
        """core.analysis CoverageWarnings per finished unit (best hypothesis)."""
        return self.document.coverage

    @coverage.setter
    def coverage(self, value: list[list[CoverageWarning]]) -> None:
        self.document.coverage = value

    # -- construction ----------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.source = SourceEdit()
        self.source.setPlaceholderText("Type or paste text to translate…  (Ctrl+Enter translates)")
        self.source.submitted.connect(self.translate)
        self.source.textChanged.connect(self._source_changed)
        self.source_lang = QLabel("Source")
        self.target_lang = QLabel("Translation")
        for label in (self.source_lang, self.target_lang):
            label.setObjectName("paneTitle")

        self.translate_button = QPushButton("Translate")
        self.translate_button.setToolTip("Translate (Ctrl+Enter)")
        self.translate_button.setDefault(True)
        self.translate_button.setObjectName("primaryButton")
        self.translate_button.clicked.connect(lambda: self.translate())  # not the 'checked' bool
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop decoding")
        self.stop_button.clicked.connect(self.stop)
        self.as_you_type = QCheckBox("Translate as you type")
        self.as_you_type.setToolTip(f"Translate {TYPE_DELAY_MS} ms after you stop typing")

        self.options = DecodeOptions()

        src_box = QFrame()
        src_box.setObjectName("pane")
        sl = QVBoxLayout(src_box)
        self.model_picker = ModelPicker()  # filled by the window from the Models tab (model_picker.py)
        sl.addLayout(title_row(self.source_lang, self.model_picker))
        sl.addWidget(self.source, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.as_you_type)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.translate_button)
        sl.addLayout(buttons)

        out_box = OutputPane(self.target_lang, self)  # the output, target-language box and notes (output_pane.py)
        self.output, self.score_label, self.error_label = out_box.output, out_box.score_label, out_box.error_label
        self.stop_note = out_box.stop_note  # what a Stop left: finished sentences only, which one was cut
        self.target_language_box, self.target_language_label = out_box.target_language_box, out_box.target_language_label
        self.language_note, self.coverage_label, self.quality_hint = (out_box.language_note, out_box.coverage_label,
                                                                      out_box.quality_hint)
        self.trust_line = out_box.trust_line  # the quality estimate's line; its marks in the output and source
        self.trust_line.estimated.connect(self._show_trust)
        self.source.textChanged.connect(lambda: clear_source_marks(self.source))
        self.output.anchorClicked.connect(self._token_clicked)
        self.output.highlighted.connect(self._token_hovered)

        top = QSplitter(Qt.Horizontal)
        top.addWidget(src_box)
        top.addWidget(out_box)
        self.inspect_box = InspectBox()  # "Your translation": inspect a translation of one's own (inspect_box.py)
        self.inspect_box.bind(self)
        self.inspect_box.inspected.connect(self._mark_inspected)  # its left-out source words, in the source box
        top.addWidget(self.inspect_box)
        top.setChildrenCollapsible(False)

        self.sentence_list = QListWidget()
        self.sentence_list.setToolTip("Select a sentence to show its attention")
        self.sentence_list.currentRowChanged.connect(self._sentence_selected)
        self.nbest_list = NBestList()  # rows wrap: no horizontal scrolling (nbest_list.py)
        self.nbest_list.setToolTip("Select a hypothesis to show its own attention")
        self.nbest_list.currentRowChanged.connect(self._hypothesis_selected)
        self.alternatives_view = AlternativesView()
        self.alternatives_view.forceRequested.connect(self.force_alternative)
        self.alternatives, self.alternatives_title = self.alternatives_view.table, self.alternatives_view.title
        self.force_action = self.alternatives_view.force_action

        self.inspect_tabs = QTabWidget()
        self.inspect_tabs.addTab(self.alternatives_view, "Alternatives")
        self.inspect_tabs.addTab(self.nbest_list, "N-best")
        self.inspect_tabs.addTab(self.sentence_list, "Sentences")
        self.memory_view = MemoryView()  # "Adapt to my memory" and the sentence's memory matches (issue 45)
        self.memory_view.changed.connect(lambda: self.translate() if self.source.toPlainText().strip() else None)
        self.inspect_tabs.addTab(self.memory_view, "Memory")
        self.inspect_tabs.setMinimumWidth(220)

        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.options)
        ll.addWidget(self.inspect_tabs, 1)

        self.view = AttentionView(self)
        self.links = TranslateLinks(self)  # linked views: one token pair lit up everywhere (word_links.py)
        bottom = QSplitter(Qt.Horizontal)
        bottom.addWidget(left)
        bottom.addWidget(self.view)
        bottom.setStretchFactor(0, 0)
        bottom.setStretchFactor(1, 1)
        bottom.setSizes([330, 900])
        bottom.setChildrenCollapsible(False)

        main = QSplitter(Qt.Vertical)
        main.addWidget(top)
        main.addWidget(bottom)
        main.setStretchFactor(0, 2)
        main.setStretchFactor(1, 5)
        main.setSizes([top.sizeHint().height(), 520])  # the panes' own wish: OUTPUT_LINES lines of translation
        main.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(main)
        self.splitter = main

    # -- model ------------------------------------------------------------------------------------

    def set_translator(self, translator: Translator, info: ModelInfo | None = None) -> None:
        """Use a newly loaded model; a running translation of the old one is stopped."""
        self.stop()
        self.translator, self.model_info = translator, info
        self.inspect_box.set_translator(translator)
        self.memory_view.set_translator(translator, info)
        src = getattr(info, "src_lang", "") or ""
        tgt = getattr(info, "tgt_lang", "") or ""
        self.source_lang.setText(language_label(src) if src else "Source")
        self.target_lang.setText(language_label(tgt) if tgt else "Translation")
        self.target_language_box.show_languages(list(getattr(translator, "target_languages", None) or []), tgt)
        self._apply_target_language()
        self._set_running(False)
        # Nothing of the previous model may stay on screen under the new model's name: translate the text again
        # with this model, or, with no text, show nothing.
        self._reset_results()
        self.view.clear()
        if self.source.toPlainText().strip():
            self.translate()

    def chosen_target_language(self) -> str | None:
        """The `>>code<<` token chosen in the box; None for a model that is not multilingual."""
        return self.target_language_box.chosen()

    def _apply_target_language(self) -> None:
        """Give the chosen language to the translator (the worker's and the Analysis tab's decoding read it);
        the output pane's title names it."""
        if self.target_language_box.count() and self.translator is not None:
            self.translator.target_language = self.chosen_target_language()
            self.target_lang.setText(self.target_language_box.currentText())

    # -- requests ---------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.request_id != 0

    def translate(self, text: str | None = None, cfg: DecodeConfig | None = None) -> int:
        """Start translating the editor's text (or `text`); returns the request id (0 if nothing started)."""
        if self.translator is None:
            self.statusMessage.emit("No model loaded — open a model first")
            return 0
        text = self.source.toPlainText() if text is None else text
        try:
            cfg = cfg or self.options.config()
        except ConfigError as exc:  # bad options: say so, leave any running request alone
            self.statusMessage.emit(f"Invalid decoding options: {exc}")
            set_fitting_text(self.error_label, f"⚠ Cannot translate: invalid decoding options: {exc}")
            self.error_label.show()
            self.translationFailed.emit(0, str(exc))
            return 0
        self._type_timer.stop()
        request_id = self._next_id
        self._next_id += 1
        self.worker.cancel_all_before(request_id)  # a newer request supersedes older ones
        self.request_id = request_id
        self.last_config = cfg
        self._reset_results()
        source_language = getattr(self.model_info, "src_lang", "") or self.translator.config.src_lang
        self.language_note.show_for(text, source_language)  # said, and translated all the same
        self._set_running(True)
        self.translationStarted.emit(request_id)
        if not text.strip():
            self._on_finished(request_id, [])
            return request_id
        log.info("request %d: %d characters, %s", request_id, len(text), cfg)
        self._apply_target_language()
        self._request.emit(request_id, self.translator, text, cfg)
        return request_id

    def stop(self) -> None:
        """Stop decoding: the finished sentences stay; the one being decoded is dropped and named."""
        if self.request_id:
            self.worker.cancel(self.request_id)
            self.request_id = 0
            self._show_stopped(self.document.stop())
        self.request_id = 0
        self._set_running(False)
        self._render_output()

    def _show_stopped(self, report: StopReport) -> None:
        """Say what a Stop left (status bar and output pane); the views move off the cut sentence to the last
        finished one, so the attention and alternatives shown belong to a translation the pane shows."""
        message = report.message()
        self.statusMessage.emit(message)
        set_fitting_text(self.stop_note, f"{message}.")
        self.stop_note.show()
        if report.cut is not None and (item := self.sentence_list.item(report.cut)) is not None:
            item.setText(f"{report.cut + 1}. (cut by Stop, not translated) {self.document.units[report.cut].text}")
        current = self.document.current()
        if current is not None and current.translation is not None:
            return
        finished = [i for i, u in enumerate(self.document.units) if u.translation is not None]
        if finished:
            with QSignalBlocker(self.sentence_list):
                self.sentence_list.setCurrentRow(finished[-1])
            self._show_sentence(finished[-1])
        else:
            self._show_untranslated(self.document.shown)

    def _show_untranslated(self, index: int) -> None:
        """A unit a Stop left untranslated: no attention, alternatives or n-best, and the view says why."""
        self.document.shown = index
        self.alternatives_view.clear()
        with QSignalBlocker(self.nbest_list):
            self.nbest_list.clear()
        self.score_label.setText("")
        self.view.clear(f"sentence {index + 1} was not translated: Stop came first" if index >= 0
                        else "no sentence was translated: Stop came first")

    def shutdown(self) -> None:
        """Stop decoding and join the worker thread (call before the window goes away)."""
        self._type_timer.stop()
        self.request_id = 0
        self._worker_thread.stop()
        self.inspect_box.shutdown()
        self.trust_line.shutdown()

    def _source_changed(self) -> None:
        if self.as_you_type.isChecked() and self.translator is not None:
            self._type_timer.start()

    def _typed(self) -> None:
        if self.source.toPlainText().strip():
            self.translate()

    def _set_running(self, running: bool) -> None:
        self.translate_button.setEnabled(self.translator is not None)
        self.stop_button.setEnabled(running)
        self.busyChanged.emit(running)

    def _reset_results(self) -> None:
        self.document.clear()
        self._follow_stream = True
        with QSignalBlocker(self.sentence_list):
            self.sentence_list.clear()
        with QSignalBlocker(self.nbest_list):
            self.nbest_list.clear()
        self.alternatives_view.clear()
        self.coverage_label.clear()
        self.coverage_label.hide()
        self.score_label.setText("")
        self.error_label.hide()
        self.stop_note.hide()
        self.language_note.clear_note()
        self.trust_line.clear_line()
        self.inspect_tabs.setTabText(1, "N-best")
        self.inspect_tabs.setTabText(2, "Sentences")
        self.memory_view.show_matches([])
        self.inspect_tabs.setTabText(3, "Memory")
        self.output.clear()

    # -- worker signals (stale request ids are ignored) -------------------------------------------

    def _on_started(self, request_id: int, units: Sequence[Unit]) -> None:
        if request_id != self.request_id:
            return
        self.document.begin(units, getattr(self.translator.config, "eos_id", None) if self.translator else None)
        for i, unit in enumerate(units):
            item = QListWidgetItem(f"{i + 1}. {unit.text}")
            item.setToolTip(unit.text)
            self.sentence_list.addItem(item)
        self.inspect_tabs.setTabText(2, f"Sentences ({len(units)})")

    def _on_step(self, request_id: int, index: int, step: Step) -> None:
        if request_id != self.request_id or not self.document.add_step(index, step):
            return
        if self._follow_stream and index != self.document.shown:
            with QSignalBlocker(self.sentence_list):
                self.sentence_list.setCurrentRow(index)
            self._show_streaming(index)  # replays the unit's steps so far, this one included
            total = len(self.document.units)
            self.statusMessage.emit(f"Translating sentence {index + 1} of {total}…" if total > 1
                                    else "Translating…")
        elif index == self.document.shown and step.cross_attention is not None:
            if self.view.streaming and step.earlier_steps is None:
                self.view.append_step(step.piece, step.cross_attention)
            else:  # beam search's best hypothesis changed (its own rows replace the others), or the view shows
                self._show_streaming(index)  # something else meanwhile (an inspected translation, a cleared grid)
        if not self._render_timer.isActive():
            self._render_timer.start()

    def _show_streaming(self, index: int) -> None:
        unit = self.document.units[index]
        self.document.shown = index
        config = self.translator.config
        self.view.begin(unit.source_tokens, config.decoder_layers, config.n_heads)
        for step in unit.steps:
            if step.cross_attention is not None:
                self.view.append_step(step.piece, step.cross_attention)

    def _on_unit_finished(self, request_id: int, index: int, translation: Translation) -> None:
        """A unit is decoded: the pane shows its final translation (not the hypothesis that streamed last), and
        the attention view too where it shows that unit."""
        if request_id != self.request_id or not self.document.finish_unit(index, translation):
            return
        self._label_finished(index)
        if index == self.document.shown:
            if self._follow_stream:
                self.view.set_translation(translation)  # until the next unit streams
            else:
                self._show_sentence(index)
        if not self._render_timer.isActive():
            self._render_timer.start()

    def _label_finished(self, index: int) -> None:
        unit, item = self.document.units[index], self.sentence_list.item(index)
        if item is not None and unit.translation is not None:
            item.setText(f"{index + 1}. {unit.text}  →  {unit.translation.text}")
            item.setToolTip(f"{unit.text}\n→ {unit.translation.text}")

    def _on_finished(self, request_id: int, translations: list[Translation]) -> None:
        if request_id != self.request_id:
            return
        self.document.finish(translations)
        for i in range(len(self.document.units)):
            self._label_finished(i)
        self._show_coverage(translations)
        self.request_id = 0
        self._set_running(False)
        self._render_output()
        if self.document.units:
            shown = self.document.shown
            index = shown if 0 <= shown < len(self.document.units) else 0
            with QSignalBlocker(self.sentence_list):
                self.sentence_list.setCurrentRow(index)
            self._show_sentence(index)
        total = sum(len(t.best.tokens) for t in translations)
        self.statusMessage.emit(f"Done: {len(translations)} sentence(s), {total} tokens")
        self.translationDone.emit(list(translations), self.last_config)
        self.translationFinished.emit(request_id)
        translator = self.translator
        shown = [u.translation for u in self.document.units]  # a new request or model drops the estimate
        self.trust_line.estimate(translator, translations, lambda: translator is self.translator and not self.running
                                 and len(shown) == len(self.document.units)
                                 and all(u.translation is t for u, t in zip(self.document.units, shown)))

    def _show_coverage(self, translations: list[Translation]) -> None:
        """Notes under the output: coverage warnings, and a hint when the model is out of its depth."""
        self.coverage = show_coverage(self.coverage_label, translations)
        self.quality_hint.show_for(translations, getattr(self.model_info, "card", None))

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self._set_running(False)
        self._render_output()
        self.view.clear("no attention: the translation failed")  # never the previous input's attention
        set_fitting_text(self.error_label, f"⚠ Cannot translate: {message}")
        self.error_label.show()
        self.statusMessage.emit(f"Translation failed: {message}")
        self.translationFailed.emit(request_id, message)

    # -- selection ---------------------------------------------------------------------------------

    def _sentence_selected(self, index: int) -> None:
        if not 0 <= index < len(self.document.units):
            return
        self._follow_stream = False
        if self.document.units[index].translation is None:
            if self.running:
                self._show_streaming(index)
            else:
                self._show_untranslated(index)
            return
        self._show_sentence(index)

    def _show_sentence(self, index: int) -> None:
        """Show a finished unit: its n-best list, the best hypothesis' attention and the
        alternatives of its least certain token."""
        unit = self.document.units[index]
        self.document.shown = index
        self.document.show_hypothesis(0)
        self.inspect_tabs.setTabText(1, f"N-best ({len(unit.translation.nbest)})")
        self.memory_view.show_matches(unit.translation.memory_matches)
        self.inspect_tabs.setTabText(3, f"Memory ({len(unit.translation.memory_matches)})")
        least = self.document.least_certain_step(index)
        if least is not None:
            self.show_alternatives(least)
        with QSignalBlocker(self.nbest_list):
            self.nbest_list.clear()
            for i, hyp in enumerate(unit.translation.nbest):
                item = QListWidgetItem(f"{i + 1}.  {hyp.score:+.3f}   {hyp.text}")
                item.setData(Qt.UserRole, hyp.score)
                item.setToolTip(f"score {hyp.score:.4f} (length-normalised log-probability)")
                self.nbest_list.addItem(item)
            self.nbest_list.setCurrentRow(0)
        self._show_hypothesis(0)

    def _hypothesis_selected(self, row: int) -> None:
        if row >= 0:
            self._show_hypothesis(row)

    def _show_hypothesis(self, row: int) -> None:
        if not self.document.show_hypothesis(row):
            return
        translation = self.document.current().translation
        hyp = translation.nbest[row]
        self._render_output()
        if hyp.attention is not None:
            self.view.set_translation(translation, hypothesis=row)
        self.score_label.setText(score_line(hyp, self.document.shown, len(self.document.units)))  # score_line.py
        self.score_label.setToolTip(SCORE_TOOLTIP)

    def select_sentence(self, index: int) -> None:
        self.sentence_list.setCurrentRow(index)

    def select_hypothesis(self, row: int) -> None:
        self.nbest_list.setCurrentRow(row)

    # -- output and alternatives -----------------------------------------------------------------

    def output_text(self) -> str:
        """The translation as plain text (finished units' text, else the streamed pieces), a line per line."""
        return self.document.output_text()

    def _render_output(self) -> None:
        self._render_timer.stop()
        self.output.setHtml(output_html(self.document, self.running, marks=self.trust_line.marks_for(self.document)))

    def _show_trust(self, estimates: list) -> None:
        """The quality estimate landed (or was cleared): flagged words in the output, left-out ones in the source."""
        self._render_output()
        clear_source_marks(self.source)
        if estimates:
            by_translation = {id(t): e for t, e in zip(self.trust_line.translations, estimates)}
            mark_source(self.source, [(u.unit.line, u.text, by_translation.get(id(u.translation)))
                                      for u in self.document.units])

    def _mark_inspected(self, result) -> None:
        """An inspected translation of one's own: the source words it may leave out, marked in the source box."""
        clear_source_marks(self.source)
        mark_source(self.source, [(pair.line, pair.given.source, est)
                                  for pair, est in zip(result.pairs, self.inspect_box.estimates)])

    def _step_for(self, url: QUrl) -> Step | None:
        where = parse_token_link(url.toString())
        if where is None or where[0] >= len(self.document.units):
            return None
        return self.document.units[where[0]].step(where[1])

    def _token_hovered(self, url: QUrl) -> None:
        step = self._step_for(url)
        if step is not None:
            self.show_alternatives(step)

    def _token_clicked(self, url: QUrl) -> None:
        step = self._step_for(url)
        if step is not None:
            self.show_alternatives(step)
            self.inspect_tabs.setCurrentIndex(0)

    def show_alternatives(self, step: Step) -> None:
        self.alternatives_view.show_step(step)

    def force_alternative(self, row: int) -> bool:
        """Ask for a re-decoding with alternative `row` of the shown step forced (finished best hypothesis only)."""
        step, unit = self.alternatives_view.step, self.document.current()
        if step is None or unit is None or unit.translation is None or self.document.hypothesis > 0:
            self.statusMessage.emit("Forcing works on the finished best hypothesis")
            return False
        alts = unit.translation.best.alternatives
        if not (0 <= step.index < len(alts) and 0 <= row < len(alts[step.index])):
            return False
        self.alternativeForced.emit(unit.translation, step.index, int(alts[step.index][row].token_id),
                                    self.last_config)
        return True

    # -- settings -----------------------------------------------------------------------------------

    def settings_dict(self) -> dict[str, Any]:
        return {"decode": self.options.to_dict(), "translate_as_you_type": self.as_you_type.isChecked(),
                "adaptation": self.memory_view.to_dict()}

    def restore_settings(self, data: dict[str, Any]) -> None:
        self.options.from_dict(data.get("decode", {}))
        self.as_you_type.setChecked(bool(data.get("translate_as_you_type", False)))
        self.memory_view.from_dict(data.get("adaptation"))

