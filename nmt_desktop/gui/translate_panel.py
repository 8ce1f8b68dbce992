"""The Translate tab: source editor, decode options, streaming output, alternatives, n-best list,
sentence list and the attention view.

The panel owns a `TranslateWorker` on a QThread. Each request gets an id; signals from any other
id (a stopped or superseded request) are ignored.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QFont, QKeyEvent
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDoubleSpinBox, QFrame,
                               QGridLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QListWidget,
                               QListWidgetItem, QPlainTextEdit, QPushButton, QSizePolicy, QSpinBox, QSplitter,
                               QStackedWidget, QTableWidget, QTableWidgetItem, QTabWidget, QTextBrowser,
                               QVBoxLayout, QWidget)

from nmt_desktop.core.hub.catalogue import language_name
from nmt_desktop.core.config import ConfigError, DecodeConfig
from nmt_desktop.core.decoding.translator import language_code, split_sentences

from .attention_view import AttentionView
from .workers import TranslateWorker, WorkerThread

log = logging.getLogger("nmt_desktop.gui.translate")

WORD_START = "▁"
TYPE_DELAY_MS = 400
MODES = ("Greedy", "Beam search", "Sampling")


class SourceEdit(QPlainTextEdit):
    """The source editor; Ctrl+Enter submits."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt name
        if event.key() in (Qt.Key_Return, Qt.Key_Enter) and event.modifiers() & Qt.ControlModifier:
            self.submitted.emit()
            return
        super().keyPressEvent(event)


@dataclass
class SentenceState:
    text: str
    source_tokens: list[str]
    layers: int
    heads: int
    steps: list[dict] = field(default_factory=list)  # step payloads as they arrive
    translation: Any = None  # core Translation once finished


class DecodeOptions(QGroupBox):
    """Greedy / beam / sampling options; `config()` builds a DecodeConfig."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Decoding", parent)
        d = DecodeConfig()
        self.mode = QComboBox()
        self.mode.addItems(MODES)
        self.beam = _spin(2, 64, 4, "Hypotheses kept at each step")
        self.nbest = _spin(1, 64, 3, "Hypotheses listed in the n-best list (≤ beam size)")
        self.length_penalty = _dspin(0.0, 5.0, d.length_penalty, 0.1, "GNMT length penalty α")
        self.temperature = _dspin(0.05, 5.0, d.temperature, 0.05, "Sampling temperature")
        self.top_k = _spin(0, 1000, d.top_k, "Sample from the k most likely tokens (0 = all)")
        self.top_p = _dspin(0.01, 1.0, d.top_p, 0.05, "Nucleus threshold (1 = off)")
        self.seed = _spin(-1, 2**31 - 1, -1, "Random seed (-1 = random each time)")
        self.seed.setSpecialValueText("random")
        self.max_len_a = _dspin(0.0, 10.0, d.max_len_a, 0.1, "Max target tokens = a × source tokens + b")
        self.max_len_b = _spin(0, 1000, d.max_len_b, "Max target tokens = a × source tokens + b")
        self.min_length = _spin(0, 1000, d.min_length, "Generate at least this many tokens")
        self.int8 = QCheckBox("int8 weights (faster)")
        self.int8.setToolTip("Decode with the linear layers quantised to int8 (CPU): about 1.5-2.5x faster, "
                             "translations almost always the same (bundled en-de: dev BLEU 44.28 float32, 44.32 int8). "
                             "Reloads the model.")

        grid = QGridLayout(self)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(6)
        grid.addWidget(QLabel("Mode"), 0, 0)
        grid.addWidget(self.mode, 0, 1)
        grid.addWidget(QLabel("Min length"), 0, 2)
        grid.addWidget(self.min_length, 0, 3)
        grid.addWidget(QLabel("Max length"), 1, 0)
        row = QHBoxLayout()
        row.setSpacing(4)
        row.addWidget(self.max_len_a)
        row.addWidget(QLabel("× n +"))
        row.addWidget(self.max_len_b)
        grid.addLayout(row, 1, 1, 1, 3)
        grid.addWidget(self.int8, 3, 0, 1, 4)
        self.beam_box = _pairs(("Beam", self.beam), ("N-best", self.nbest), ("Length penalty", self.length_penalty))
        self.sample_box = _pairs(("Temperature", self.temperature), ("Top-k", self.top_k), ("Top-p", self.top_p),
                                 ("Seed", self.seed))
        self.greedy_box = QLabel("Greedy search: the most probable token at each step.")
        self.greedy_box.setObjectName("hint")
        self.greedy_box.setWordWrap(True)
        self.stack = QStackedWidget()
        for box in (self.greedy_box, self.beam_box, self.sample_box):
            self.stack.addWidget(box)
        self.stack.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)
        grid.addWidget(self.stack, 2, 0, 1, 4)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self._mode_changed(0)
        self.beam.valueChanged.connect(lambda v: self.nbest.setMaximum(v))
        for w in (self.mode,):
            w.currentIndexChanged.connect(self.changed)
        for w in (self.beam, self.nbest, self.length_penalty, self.temperature, self.top_k, self.top_p, self.seed,
                  self.max_len_a, self.max_len_b, self.min_length):
            w.valueChanged.connect(self.changed)

    def _mode_changed(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        for i in range(self.stack.count()):  # size the stack to the page shown
            page = self.stack.widget(i)
            page.setSizePolicy(QSizePolicy.Preferred,
                               QSizePolicy.Preferred if i == index else QSizePolicy.Ignored)
        self.stack.adjustSize()

    def config(self) -> DecodeConfig:
        mode = self.mode.currentIndex()
        kw: dict[str, Any] = dict(max_len_a=self.max_len_a.value(), max_len_b=self.max_len_b.value(),
                                  min_length=self.min_length.value(), length_penalty=self.length_penalty.value(),
                                  alternatives=5, attention=True, self_attention=True)
        if mode == 1:
            kw.update(beam_size=self.beam.value(), nbest=min(self.nbest.value(), self.beam.value()))
        elif mode == 2:
            kw.update(sample=True, temperature=self.temperature.value(), top_k=self.top_k.value(),
                      top_p=self.top_p.value(), seed=None if self.seed.value() < 0 else self.seed.value())
        return DecodeConfig(**kw)

    def to_dict(self) -> dict[str, Any]:
        return {"mode": MODES[self.mode.currentIndex()].split()[0].lower(), "beam_size": self.beam.value(),
                "nbest": self.nbest.value(), "length_penalty": self.length_penalty.value(),
                "temperature": self.temperature.value(), "top_k": self.top_k.value(), "top_p": self.top_p.value(),
                "seed": self.seed.value(), "max_len_a": self.max_len_a.value(), "max_len_b": self.max_len_b.value(),
                "min_length": self.min_length.value(), "int8": self.int8.isChecked()}

    def from_dict(self, data: dict[str, Any]) -> None:
        if not isinstance(data, dict):
            return
        modes = [m.split()[0].lower() for m in MODES]
        if data.get("mode") in modes:
            self.mode.setCurrentIndex(modes.index(data["mode"]))
        for key, widget in (("beam_size", self.beam), ("nbest", self.nbest), ("length_penalty", self.length_penalty),
                            ("temperature", self.temperature), ("top_k", self.top_k), ("top_p", self.top_p),
                            ("seed", self.seed), ("max_len_a", self.max_len_a), ("max_len_b", self.max_len_b),
                            ("min_length", self.min_length)):
            value = data.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                widget.setValue(type(widget.value())(value))
        if isinstance(data.get("int8"), bool):
            self.int8.setChecked(data["int8"])

    def set_beam(self, size: int, nbest: int | None = None) -> None:
        """Greedy for size 1, else beam search of `size` (used by the CLI and tests)."""
        if size <= 1:
            self.mode.setCurrentIndex(0)
            return
        self.beam.setValue(size)
        self.nbest.setValue(min(nbest or self.nbest.value(), size))
        self.mode.setCurrentIndex(1)


class TranslatePanel(QWidget):
    """Input, streaming output and inspection of one translation request at a time."""

    translationStarted = Signal(int)
    translationFinished = Signal(int)  # request id, after the view shows the result
    translationFailed = Signal(int, str)
    alternativeForced = Signal(object, int, int, object)  # Translation, step, token id, DecodeConfig (best hyp.)
    translationDone = Signal(object, object)  # the finished core Translations (one per sentence), their DecodeConfig
    busyChanged = Signal(bool)
    statusMessage = Signal(str)
    _request = Signal(int, object, object, object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translator: Any = None
        self.model_info: Any = None
        self.request_id = 0  # the request whose signals are shown; 0 = none running
        self._next_id = 1
        self.sentences: list[SentenceState] = []
        self.shown_sentence = -1  # sentence shown in the attention view
        self._follow_stream = True  # the view follows the sentence being decoded

        self._build_ui()
        self.worker = TranslateWorker()
        self._worker_thread = WorkerThread(self.worker, "translate-worker")
        self._request.connect(self.worker.run)
        self.worker.started.connect(self._on_started)
        self.worker.step.connect(self._on_step)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)

        self._type_timer = QTimer(self, singleShot=True, interval=TYPE_DELAY_MS)
        self._type_timer.timeout.connect(self._typed)
        self._render_timer = QTimer(self, singleShot=True, interval=30)
        self._render_timer.timeout.connect(self._render_output)
        self._set_running(False)

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
        sl.addWidget(self.source_lang)
        sl.addWidget(self.source, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.as_you_type)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.translate_button)
        sl.addLayout(buttons)

        self.output = QTextBrowser()
        self.output.setOpenLinks(False)
        self.output.setOpenExternalLinks(False)
        self.output.setPlaceholderText("The translation appears here, token by token.")
        self.output.anchorClicked.connect(self._token_clicked)
        self.output.highlighted.connect(self._token_hovered)
        self.target_language_box = QComboBox()
        self.target_language_box.setToolTip(
            "This model is multilingual: it translates into the language whose token (e.g. >>fra<<) starts the "
            "source. The choice applies to the next translation; a text that starts with its own >>code<< keeps it.")
        self.target_language_label = QLabel("Target language")
        self.target_language_label.setBuddy(self.target_language_box)
        out_box = QFrame()
        out_box.setObjectName("pane")
        ol = QVBoxLayout(out_box)
        header = QHBoxLayout()
        header.addWidget(self.target_lang)
        header.addStretch(1)
        header.addWidget(self.target_language_label)
        header.addWidget(self.target_language_box)
        ol.addLayout(header)
        self._show_target_languages([], "")
        ol.addWidget(self.output, 1)
        self.score_label = QLabel("")
        self.score_label.setObjectName("hint")
        ol.addWidget(self.score_label)
        self.coverage_label = QLabel("")
        self.coverage_label.setObjectName("hint")
        self.coverage_label.setWordWrap(True)
        self.coverage_label.setStyleSheet("color: #b45309;")
        self.coverage_label.hide()
        ol.addWidget(self.coverage_label)
        self.coverage: list[list] = []  # core.analysis.CoverageWarning per finished sentence (best hypothesis)

        top = QSplitter(Qt.Horizontal)
        top.addWidget(src_box)
        top.addWidget(out_box)
        top.setChildrenCollapsible(False)

        self.sentence_list = QListWidget()
        self.sentence_list.setToolTip("Select a sentence to show its attention")
        self.sentence_list.currentRowChanged.connect(self._sentence_selected)
        self.nbest_list = QListWidget()
        self.nbest_list.setToolTip("Select a hypothesis to show its own attention")
        self.nbest_list.currentRowChanged.connect(self._hypothesis_selected)
        self.alternatives = QTableWidget(0, 2)
        self.alternatives.setHorizontalHeaderLabels(["Token", "Probability"])
        self.alternatives.verticalHeader().setVisible(False)
        self.alternatives.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.alternatives.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.alternatives.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.alternatives.setSelectionMode(QAbstractItemView.NoSelection)
        self.alternatives.setContextMenuPolicy(Qt.ActionsContextMenu)
        self.force_action = QAction("Force this token (re-decode from here)", self.alternatives)
        self.force_action.triggered.connect(lambda: self.force_alternative(self.alternatives.currentRow()))
        self.alternatives.addAction(self.force_action)
        self.alternatives.cellDoubleClicked.connect(lambda r, _c: self.force_alternative(r))
        self.alternatives_title = QLabel("Hover or click a target token to see its alternatives.")
        self.alternatives_title.setWordWrap(True)
        self.alternatives_title.setObjectName("hint")
        alt_box = QWidget()
        al = QVBoxLayout(alt_box)
        al.setContentsMargins(4, 4, 4, 4)
        al.addWidget(self.alternatives_title)
        al.addWidget(self.alternatives, 1)

        self.inspect_tabs = QTabWidget()
        self.inspect_tabs.addTab(alt_box, "Alternatives")
        self.inspect_tabs.addTab(self.nbest_list, "N-best")
        self.inspect_tabs.addTab(self.sentence_list, "Sentences")
        self.inspect_tabs.setMinimumWidth(220)

        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.options)
        ll.addWidget(self.inspect_tabs, 1)

        self.view = AttentionView(self)
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
        main.setSizes([230, 520])
        main.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(main)
        self.splitter = main

    # -- model ------------------------------------------------------------------------------------

    def set_translator(self, translator: Any, info: Any = None) -> None:
        """Use a newly loaded model; a running translation of the old one is stopped."""
        self.stop()
        self.translator, self.model_info = translator, info
        src = getattr(info, "src_lang", "") or ""
        tgt = getattr(info, "tgt_lang", "") or ""
        self.source_lang.setText(_language_name(src) if src else "Source")
        self.target_lang.setText(_language_name(tgt) if tgt else "Translation")
        self._show_target_languages(list(getattr(translator, "target_languages", None) or []), tgt)
        self._apply_target_language()
        self._set_running(False)

    def _show_target_languages(self, tokens: list[str], tgt_lang: str) -> None:
        """Offer a multilingual model's target languages (the box is hidden for other models).

        The default is the model's tgt_lang if it is one of them, else the first; reloading a model
        with the same languages (e.g. the int8 switch) keeps the user's choice.
        """
        box = self.target_language_box
        kept = box.currentData() if [box.itemData(i) for i in range(box.count())] == tokens else None
        with QSignalBlocker(box):
            box.clear()
            for token in tokens:
                box.addItem(_language_name(language_code(token)), token)
            if tokens:
                default = next((t for t in tokens if tgt_lang in (t, language_code(t))), tokens[0])
                box.setCurrentIndex(tokens.index(kept or default))
        box.setVisible(bool(tokens))
        self.target_language_label.setVisible(bool(tokens))

    def chosen_target_language(self) -> str | None:
        """The `>>code<<` token chosen in the box; None for a model that is not multilingual."""
        return self.target_language_box.currentData() if self.target_language_box.count() else None

    def _apply_target_language(self) -> None:
        """Give the chosen language to the translator (the worker's and the Analysis tab's decoding read it);
        the output pane's title names it."""
        if self.target_language_box.count():
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
            self.translationFailed.emit(0, str(exc))
            return 0
        sentences = split_sentences(text) or ([text] if text.strip() else [])
        self._type_timer.stop()
        request_id = self._next_id
        self._next_id += 1
        self.worker.cancel_all_before(request_id)  # a newer request supersedes older ones
        self.request_id = request_id
        self.last_config = cfg
        self._reset_results()
        self._set_running(True)
        self.translationStarted.emit(request_id)
        if not sentences:
            self._on_finished(request_id, [])
            return request_id
        log.info("request %d: %d sentence(s), %s", request_id, len(sentences), cfg)
        self._apply_target_language()
        self._request.emit(request_id, self.translator, sentences, cfg)
        return request_id

    def stop(self) -> None:
        if self.request_id:
            self.worker.cancel(self.request_id)
            self.statusMessage.emit("Stopped")
        self.request_id = 0
        self._set_running(False)
        self._render_output()

    def shutdown(self) -> None:
        """Stop decoding and join the worker thread (call before the window goes away)."""
        self._type_timer.stop()
        self.request_id = 0
        self._worker_thread.stop()

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
        self.sentences = []
        self.shown_sentence = -1
        self._follow_stream = True
        with QSignalBlocker(self.sentence_list):
            self.sentence_list.clear()
        with QSignalBlocker(self.nbest_list):
            self.nbest_list.clear()
        self.alternatives.setRowCount(0)
        self._alternatives_payload = None
        self.coverage = []
        self.coverage_label.clear()
        self.coverage_label.hide()
        self.alternatives_title.setText("Hover or click a target token to see its alternatives.")
        self.score_label.setText("")
        self.inspect_tabs.setTabText(1, "N-best")
        self.inspect_tabs.setTabText(2, "Sentences")
        self.output.clear()

    # -- worker signals (stale request ids are ignored) -------------------------------------------

    def _on_started(self, request_id: int, index: int, info: dict) -> None:
        if request_id != self.request_id:
            return
        self.sentences.append(SentenceState(info["text"], list(info["source_tokens"]), int(info["layers"]),
                                            int(info["heads"])))
        item = QListWidgetItem(f"{index + 1}. {info['text']}")
        item.setToolTip(info["text"])
        self.sentence_list.addItem(item)
        if self._follow_stream:
            with QSignalBlocker(self.sentence_list):
                self.sentence_list.setCurrentRow(index)
            self._show_streaming(index)
        total = info.get("sentences", 1)
        self.statusMessage.emit(f"Translating sentence {index + 1} of {total}…" if total > 1 else "Translating…")

    def _show_streaming(self, index: int) -> None:
        s = self.sentences[index]
        self.shown_sentence = index
        self.view.begin(s.source_tokens, s.layers, s.heads)
        for p in s.steps:
            if p["cross_attention"] is not None:
                self.view.append_step(p["piece"], p["cross_attention"])

    def _on_step(self, request_id: int, payload: dict) -> None:
        if request_id != self.request_id:
            return
        index = payload["sentence"]
        if index >= len(self.sentences):
            return
        self.sentences[index].steps.append(payload)
        if index == self.shown_sentence and payload["cross_attention"] is not None:
            self.view.append_step(payload["piece"], payload["cross_attention"])
        if not self._render_timer.isActive():
            self._render_timer.start()

    def _on_finished(self, request_id: int, translations: list) -> None:
        if request_id != self.request_id:
            return
        for i, (state, translation) in enumerate(zip(self.sentences, translations)):
            state.translation = translation
            state.steps = hypothesis_payloads(translation, 0, i, self._eos_id())  # beam search: the final best, not the live one
            item = self.sentence_list.item(i)
            if item is not None:
                item.setText(f"{i + 1}. {state.text}  →  {translation.text}")
                item.setToolTip(f"{state.text}\n→ {translation.text}")
        self._show_coverage(translations)
        self.request_id = 0
        self._set_running(False)
        self._render_output()
        if self.sentences:
            index = self.shown_sentence if 0 <= self.shown_sentence < len(self.sentences) else 0
            with QSignalBlocker(self.sentence_list):
                self.sentence_list.setCurrentRow(index)
            self._show_sentence(index)
        total = sum(len(t.best.tokens) for t in translations)
        self.statusMessage.emit(f"Done: {len(translations)} sentence(s), {total} tokens")
        self.translationDone.emit(list(translations), getattr(self, "last_config", None))
        self.translationFinished.emit(request_id)

    def _show_coverage(self, translations: list) -> None:
        """Flag possible omissions and diffuse target tokens (core.analysis.coverage_warnings, best hypothesis)."""
        from nmt_desktop.core.analysis.heads import coverage_warnings

        self.coverage = [coverage_warnings(t) for t in translations]
        lines = []
        for i, warnings in enumerate(self.coverage):
            where = f"sentence {i + 1}: " if len(self.coverage) > 1 else ""
            omitted = [f"“{w.token}”" for w in warnings if w.kind == "omission"]
            diffuse = [f"“{w.token.lstrip(WORD_START)}”" for w in warnings if w.kind == "diffuse"]
            if omitted:
                lines.append(f"⚠ {where}little attention on source {', '.join(omitted)} (possible omission)")
            if diffuse:
                lines.append(f"⚠ {where}diffuse attention for {', '.join(diffuse)} (highlighted)")
        self.coverage_label.setText("\n".join(lines))
        self.coverage_label.setVisible(bool(lines))

    def _diffuse_tokens(self) -> set[tuple[int, int]]:
        """(sentence, target index) of the best hypotheses' diffuse tokens, while those are shown."""
        if self.nbest_list.currentRow() > 0:
            return set()
        return {(si, w.index) for si, ws in enumerate(self.coverage) for w in ws if w.kind == "diffuse"}

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self._set_running(False)
        self._render_output()
        self.statusMessage.emit(f"Translation failed: {message}")
        self.translationFailed.emit(request_id, message)

    # -- selection ---------------------------------------------------------------------------------

    def _sentence_selected(self, index: int) -> None:
        if not 0 <= index < len(self.sentences):
            return
        self._follow_stream = False
        if self.sentences[index].translation is None:
            self._show_streaming(index)
            return
        self._show_sentence(index)

    def _show_sentence(self, index: int) -> None:
        """Show a finished sentence: its n-best list, the best hypothesis' attention and the
        alternatives of its least certain token."""
        s = self.sentences[index]
        self.shown_sentence = index
        self.inspect_tabs.setTabText(1, f"N-best ({len(s.translation.nbest)})")
        self.inspect_tabs.setTabText(2, f"Sentences ({len(self.sentences)})")
        candidates = [p for p in s.steps if p["alternatives"] and not p["is_eos"]]
        if candidates:
            self.show_alternatives(min(candidates, key=lambda p: p["logprob"]))
        with QSignalBlocker(self.nbest_list):
            self.nbest_list.clear()
            for i, hyp in enumerate(s.translation.nbest):
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
        s = self._current_state()
        if s is None or s.translation is None or not 0 <= row < len(s.translation.nbest):
            return
        hyp = s.translation.nbest[row]
        s.steps = hypothesis_payloads(s.translation, row, self.shown_sentence, self._eos_id())
        self._render_output()
        if hyp.attention is not None:
            self.view.set_translation(s.translation, hypothesis=row)
        self.score_label.setText(f"score {hyp.score:+.3f}  ·  {len(hyp.tokens)} tokens"
                                 + ("" if hyp.finished else "  ·  cut off at the maximum length"))

    def select_sentence(self, index: int) -> None:
        self.sentence_list.setCurrentRow(index)

    def select_hypothesis(self, row: int) -> None:
        self.nbest_list.setCurrentRow(row)

    def _eos_id(self) -> int | None:
        config = getattr(self.translator, "config", None)
        return getattr(config, "eos_id", None)

    def _current_state(self) -> SentenceState | None:
        i = self.shown_sentence
        return self.sentences[i] if 0 <= i < len(self.sentences) else None

    # -- output and alternatives -----------------------------------------------------------------

    def output_text(self) -> str:
        """The translation as plain text (finished sentences' text, else the streamed pieces)."""
        parts = []
        for s in self.sentences:
            if s.translation is not None:
                parts.append(s.translation.text)
            else:
                parts.append(_join_pieces([p["piece"] for p in s.steps if not p["is_eos"]]))
        return " ".join(p for p in parts if p)

    def _render_output(self) -> None:
        self._render_timer.stop()
        chunks = []
        diffuse = self._diffuse_tokens()
        for si, s in enumerate(self.sentences):
            words = []
            for p in s.steps:
                if p["is_eos"]:
                    continue
                piece = p["piece"]
                gap = piece.startswith(WORD_START) or not words
                text = html.escape(piece[1:] if piece.startswith(WORD_START) else piece) or "&nbsp;"
                prob = max(0.0, min(1.0, 2.718281828 ** p["logprob"]))
                color = "#1f2937" if prob > 0.5 else ("#92400e" if prob > 0.2 else "#b91c1c")
                tip = html.escape(f"p = {prob:.1%}" + ("   ·   " + ", ".join(
                    f"{a.lstrip(WORD_START)} {pr:.0%}" for a, pr in p["alternatives"][:5]) if p["alternatives"] else ""),
                    quote=True)
                words.append(("&nbsp;" if gap and words else "")
                             + f'<a href="tok:{si}:{p["index"]}" title="{tip}" style="color:{color};'
                               f' text-decoration:none; background-color:'
                               f'{"#fed7aa" if (si, p["index"]) in diffuse else "#eef2ff"};">{text}</a>')
            if self.request_id and s.translation is None and si == len(self.sentences) - 1:
                words.append('<span style="color:#6366f1;">&nbsp;▍</span>')
            chunks.append("".join(words))
        body = "&nbsp; ".join(c for c in chunks if c)
        self.output.setHtml(f'<div style="font-size:15pt; line-height:150%;">{body}</div>')

    def _payload_for(self, url: QUrl) -> dict | None:
        text = url.toString()
        if not text.startswith("tok:"):
            return None
        try:
            _, si, ti = text.split(":")
            s = self.sentences[int(si)]
        except (ValueError, IndexError):
            return None
        return next((p for p in s.steps if p["index"] == int(ti)), None)

    def _token_hovered(self, url: QUrl) -> None:
        payload = self._payload_for(url)
        if payload is not None:
            self.show_alternatives(payload)

    def _token_clicked(self, url: QUrl) -> None:
        payload = self._payload_for(url)
        if payload is not None:
            self.show_alternatives(payload)
            self.inspect_tabs.setCurrentIndex(0)

    def force_alternative(self, row: int) -> bool:
        """Ask for a re-decoding with alternative `row` of the shown step forced (finished best hypothesis only)."""
        payload, state = getattr(self, "_alternatives_payload", None), self._current_state()
        if payload is None or state is None or state.translation is None or self.nbest_list.currentRow() > 0:
            self.statusMessage.emit("Forcing works on the finished best hypothesis")
            return False
        step, alts = payload["index"], state.translation.best.alternatives
        if not (0 <= step < len(alts) and 0 <= row < len(alts[step])):
            return False
        self.alternativeForced.emit(state.translation, step, int(alts[step][row].token_id),
                                    getattr(self, "last_config", None))
        return True

    def show_alternatives(self, payload: dict) -> None:
        self._alternatives_payload = payload
        alts = payload["alternatives"]
        piece = payload["piece"].lstrip(WORD_START)
        self.alternatives_title.setText(f"Step {payload['index'] + 1}: “{piece}”  (p = "
                                        f"{2.718281828 ** payload['logprob']:.1%})")
        self.alternatives.setRowCount(len(alts))
        for r, (alt, prob) in enumerate(alts):
            tok = QTableWidgetItem(alt)
            if alt == payload["piece"]:
                f = QFont(tok.font())
                f.setBold(True)
                tok.setFont(f)
            self.alternatives.setItem(r, 0, tok)
            p = QTableWidgetItem(f"{prob:.1%}")
            p.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            self.alternatives.setItem(r, 1, p)

    # -- settings -----------------------------------------------------------------------------------

    def settings_dict(self) -> dict[str, Any]:
        return {"decode": self.options.to_dict(), "translate_as_you_type": self.as_you_type.isChecked()}

    def restore_settings(self, data: dict[str, Any]) -> None:
        self.options.from_dict(data.get("decode", {}))
        self.as_you_type.setChecked(bool(data.get("translate_as_you_type", False)))


# -- helpers ------------------------------------------------------------------------------------------

def hypothesis_payloads(translation: Any, row: int, sentence: int, eos_id: int | None = None) -> list[dict]:
    """Step payloads (as the worker sends them) rebuilt from hypothesis `row` of a finished Translation."""
    hyp = translation.nbest[row]
    out = []
    for t, (token_id, piece) in enumerate(zip(hyp.token_ids, hyp.tokens)):
        alts = hyp.alternatives[t] if t < len(hyp.alternatives) else []
        logprob = hyp.token_logprobs[t] if t < len(hyp.token_logprobs) else 0.0
        cross = None if hyp.attention is None or t >= hyp.attention.shape[2] else hyp.attention[:, :, t]
        out.append({"sentence": sentence, "index": t, "token_id": int(token_id), "piece": piece,
                    "logprob": float(logprob), "alternatives": [(a.piece, float(a.prob)) for a in alts],
                    "cross_attention": cross,
                    "is_eos": int(token_id) == eos_id if eos_id is not None else piece == "</s>"})
    return out

def _spin(lo: int, hi: int, value: int, tip: str) -> QSpinBox:
    w = QSpinBox()
    w.setRange(lo, hi)
    w.setValue(value)
    w.setToolTip(tip)
    return w


def _dspin(lo: float, hi: float, value: float, step: float, tip: str) -> QDoubleSpinBox:
    w = QDoubleSpinBox()
    w.setRange(lo, hi)
    w.setDecimals(2)
    w.setSingleStep(step)
    w.setValue(value)
    w.setToolTip(tip)
    return w


def _pairs(*pairs: tuple[str, QWidget]) -> QWidget:
    """Label/widget pairs, two per row."""
    box = QWidget()
    grid = QGridLayout(box)
    grid.setContentsMargins(0, 0, 0, 0)
    grid.setHorizontalSpacing(8)
    grid.setVerticalSpacing(6)
    for i, (label, widget) in enumerate(pairs):
        lab = QLabel(label)
        lab.setBuddy(widget)
        r, c = divmod(i, 2)
        grid.addWidget(lab, r, 2 * c)
        grid.addWidget(widget, r, 2 * c + 1)
    grid.setColumnStretch(1, 1)
    grid.setColumnStretch(3, 1)
    return box


def _join_pieces(pieces: list[str]) -> str:
    out = ""
    for p in pieces:
        if p.startswith(WORD_START):
            out += (" " if out else "") + p[1:]
        else:
            out += p
    return out


def _language_name(code: str) -> str:
    """ "French (fr)" for a language code (core's ISO 639 table); the code itself when unknown."""
    base = code.split("-")[0].split("_")[0]
    name = language_name(base)
    return f"{name} ({code})" if name != base else code
