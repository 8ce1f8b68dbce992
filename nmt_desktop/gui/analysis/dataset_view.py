"""Heads & methods over a file: the Analysis tab's page that judges heads and attribution methods on a dev set
rather than on the one sentence shown (issue 31), from `core.analysis.dataset_report`.

The run is minutes of model work (one re-translation of the file per head, one attribution and its
faithfulness per method and sentence), so it goes on the view's worker thread with a progress bar, an ETA and
Cancel; the core checks the cancel flag between units, so Cancel takes effect within one unit. The view's
result belongs to the model it was run with: a model change cancels the run and clears the tables (no stale
rows). A row's click lists its telling sentences (core docstring): for a head, the sentences whose chrF drops
most when it is off, with and without it; for a method, the sentences where it beats random by least.
"""

from __future__ import annotations

import csv
import html
import math
import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFileDialog, QGridLayout, QHBoxLayout,
                               QHeaderView, QLabel, QProgressBar, QPushButton, QSpinBox, QSplitter, QStackedWidget,
                               QTableWidget, QTableWidgetItem, QTabWidget, QTextBrowser, QVBoxLayout, QWidget)

from nmt_desktop.core.analysis import dataset_report as core
from nmt_desktop.core.analysis.head_names import head_description, layer_name

from ..empty_state import EmptyMessage
from ..job_view import JobView
from ..settings import MAX_RECENT, Settings
from .analysis_view import AnalysisView
from .head_stats import STAT_FIELDS, STAT_TIPS, STAT_TITLES, NumericItem

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator

RECENT_KEY = "dataset_report_files"  # settings: the files run on, newest first
DEFAULT_LINES = 100
METHODS_PER_ROW = 4  # the attribution methods' tick boxes, in rows of four (eight on one row: 994 px)
ROW_KEY = Qt.UserRole + 1  # on a row's first item: the (layer, head) or method it shows, whatever the sort
HEAD_COLUMNS = ["Layer", "Head", "BLEU drop", "chrF drop", "Changed"] + [STAT_TITLES[f] for f in STAT_FIELDS]
METHOD_COLUMNS = ["Method", "Comprehensiveness", "Random comp.", "Sufficiency", "Random suff.", "Sentences",
                  "s / sentence"]
HEAD_TIPS = {2: "Corpus BLEU of the file with every head on, minus with this head zeroed (positive: it helps)",
             3: "The same for corpus chrF", 4: "Sentences whose translation changed when the head was zeroed"}
METHOD_TIPS = {1: "Drop of log p(token) when the top-ranked source tokens are replaced by <unk> (AOPC over "
                  "10..50%): higher is more faithful", 2: "The same for a random ranking: the bar to beat",
               3: "Drop of log p(token) when only the top-ranked tokens are kept: lower is more faithful",
               4: "The same for a random ranking", 5: "Sentences explained (skipped ones in the tooltip)",
               6: "Seconds the attribution itself took per sentence"}
ETA_WINDOW = 40  # progress samples the ETA's speed is measured over: a head pass and a method's sentence differ
EMPTY_HINT = ("Pick a file of source<TAB>reference lines and press Run: every cross-attention head is switched "
              "off in turn and every attribution method is checked for faithfulness, over the whole file.")


def _text_item(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemIsEditable)
    return item


def _number(value: float, digits: int = 3) -> NumericItem:
    """A sortable number; nan (not measured) sorts first and shows as a dash."""
    if math.isnan(value):
        return NumericItem(-math.inf, "–")
    return NumericItem(value, f"{value:.{digits}f}")


def _eta(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


class DatasetView(JobView, AnalysisView):
    """Heads (BLEU drop when ablated, statistics) and attribution methods (faithfulness) over a file's lines."""

    progressed = Signal(int, int, int)  # run token, units done, units in all (emitted from the worker thread)
    failure = "Run failed"

    def __init__(self, parent: QWidget | None = None):
        super().__init__("dataset-worker", parent)
        self.translator: Translator | None = None
        self.report: core.DatasetReport | None = None
        self._cancel: threading.Event | None = None  # the run under way's cancel flag
        self._started = 0.0
        self._samples: deque[tuple[float, int]] = deque(maxlen=ETA_WINDOW)  # (time, units done) of this run
        self._plan: tuple[int, list[str]] = (0, [])  # the run's (heads, methods): what its progress means
        self._run_token = 0  # counts runs: progress of an older (cancelled) run is ignored
        self.file = QComboBox()
        self.file.setEditable(True)
        self.file.setObjectName("datasetFile")
        self.file.setToolTip("A file of source<TAB>reference lines (or TMX); the files used before are listed")
        self.file.lineEdit().setPlaceholderText("dev.tsv: source<TAB>reference per line")
        self.file.addItems([p for p in Settings().get(RECENT_KEY, []) if isinstance(p, str)][:MAX_RECENT])
        self.file.setCurrentIndex(0 if self.file.count() else -1)
        self.file.currentTextChanged.connect(lambda _text: self._update_enabled())
        self.browse_button = QPushButton("Browse…")
        self.browse_button.setToolTip("Choose the file of sentence pairs")
        self.browse_button.clicked.connect(lambda: self.browse())
        self.lines = QSpinBox()
        self.lines.setRange(1, 100000)
        self.lines.setValue(DEFAULT_LINES)
        self.lines.setToolTip("Use the file's first N pairs (each head re-translates all of them)")
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("primaryButton")
        self.run_button.setToolTip("Ablate every head and check every ticked method over the file, in the background")
        self.run_button.clicked.connect(lambda: self.run())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run (after the unit under way)")
        self.cancel_button.clicked.connect(lambda: self.cancel())
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Write the Heads table, and the Methods table beside it (-methods.csv)")
        self.export_button.clicked.connect(lambda: self.export_csv())
        self.heads_box = QCheckBox("Heads")
        self.heads_box.setChecked(True)
        self.heads_box.setToolTip("Switch off every head in turn (one re-translation of the file per head)")
        self.heads_box.toggled.connect(lambda _on: self._update_enabled())
        self.method_boxes: dict[str, QCheckBox] = {}
        self.methods_row = QHBoxLayout()
        self.methods_row.addWidget(QLabel("Methods"), 0, Qt.AlignTop)
        self.method_grid = QGridLayout()  # METHODS_PER_ROW a row: on one row they were wider than a 1024 px screen
        self.methods_row.addLayout(self.method_grid)
        self._sync_methods()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")  # "%v / %m units" while a run is under way
        self.eta = QLabel("")
        self.eta.setObjectName("hint")
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)

        self.heads_table = self._table(HEAD_COLUMNS, HEAD_TIPS)
        for column, name in enumerate(STAT_FIELDS, start=5):
            self.heads_table.horizontalHeaderItem(column).setToolTip(STAT_TIPS[name])
        self.methods_table = self._table(METHOD_COLUMNS, METHOD_TIPS)
        self.tables = QTabWidget()
        self.tables.addTab(self.heads_table, "Heads")
        self.tables.addTab(self.methods_table, "Methods")
        self.sentences = QTextBrowser()
        self.sentences.setPlaceholderText("Click a row to see its most telling sentences.")
        self.sentences_title = QLabel("Telling sentences")
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.sentences_title)
        rl.addWidget(self.sentences, 1)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.tables)
        split.addWidget(right)
        split.setSizes([760, 420])
        self.empty = EmptyMessage()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(split)

        top = QHBoxLayout()
        top.addWidget(QLabel("File"))
        top.addWidget(self.file, 1)
        top.addWidget(self.browse_button)
        top.addWidget(QLabel("Lines"))
        top.addWidget(self.lines)
        top.addWidget(self.run_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.export_button)
        what = QHBoxLayout()
        what.addWidget(self.heads_box)
        what.addLayout(self.methods_row)
        what.addStretch(1)
        bar = QHBoxLayout()
        bar.addWidget(self.progress, 1)
        bar.addWidget(self.eta)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(what)
        layout.addLayout(bar)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.status)
        self.progressed.connect(self._on_progress)
        self.heads_table.itemSelectionChanged.connect(self._show_head_sentences)
        self.methods_table.itemSelectionChanged.connect(self._show_method_sentences)
        self.tables.currentChanged.connect(self._show_current_sentences)
        self._show_empty()

    @staticmethod
    def _table(columns: list[str], tips: dict[int, str]) -> QTableWidget:
        table = QTableWidget(0, len(columns))
        table.setHorizontalHeaderLabels(columns)
        for column, tip in tips.items():
            table.horizontalHeaderItem(column).setToolTip(tip)
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectRows)
        table.setSelectionMode(QAbstractItemView.SingleSelection)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        table.setSortingEnabled(True)
        return table

    def _sync_methods(self) -> None:
        """One tick box per attribution method of the moment (METHODS may grow while the app runs), ticked."""
        for method in core.current_methods():
            if method not in self.method_boxes:
                box = QCheckBox(method.replace("_", " "))
                box.setChecked(True)
                box.setToolTip(f"Check {method}'s faithfulness on every line (attribution + perturbations)")
                box.toggled.connect(lambda _on: self._update_enabled())
                self.method_grid.addWidget(box, *divmod(len(self.method_boxes), METHODS_PER_ROW), Qt.AlignLeft)
                self.method_boxes[method] = box

    def chosen_methods(self) -> list[str]:
        return [m for m in core.current_methods() if m in self.method_boxes and self.method_boxes[m].isChecked()]

    # --- AnalysisView -------------------------------------------------------------------------------------

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        """A new model: the run under way (if any) is cancelled and the rows, which were another model's, go."""
        changed = translator is not self.translator
        self.translator = translator
        if changed:
            self._stop_run()
            self._reset_progress()  # "done in 2 min" was the other model's run
            self.report = None
            self._fill()
            self.status.setText("")
        self._update_enabled()

    # --- running ------------------------------------------------------------------------------------------

    def path(self) -> str:
        return self.file.currentText().strip()

    def browse(self) -> str:
        start = str(Path(self.path()).parent) if self.path() else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Sentence pairs for the report", start,
                                              "Sentence pairs (*.tsv *.txt *.tmx);;All files (*)")
        if path:
            self._set_path(path)
        return path

    def _set_path(self, path: str) -> None:
        index = self.file.findText(path)
        if index < 0:
            self.file.insertItem(0, path)
            index = 0
        self.file.setCurrentIndex(index)

    def _remember(self, path: str) -> None:
        """Put `path` first in the recent files, in the window's own Settings when there is one: it saves its
        whole dict at close, which would drop a key written to the file behind its back."""
        settings = getattr(self.window(), "settings", None)
        if not isinstance(settings, Settings):
            settings = Settings()
        recent = [p for p in settings.get(RECENT_KEY, []) if isinstance(p, str) and p != path]
        settings.set(RECENT_KEY, [path, *recent][:MAX_RECENT])
        settings.save()

    def _update_enabled(self) -> None:
        busy = self.running
        self.run_button.setEnabled(self.translator is not None and bool(self.path()) and not busy
                                   and (self.heads_box.isChecked() or bool(self.chosen_methods())))
        self.cancel_button.setEnabled(busy)
        self.export_button.setEnabled(self.report is not None and not busy)
        for widget in (self.file, self.browse_button, self.lines, self.heads_box, *self.method_boxes.values()):
            widget.setEnabled(not busy)

    def run(self) -> int:
        """Start the report over the file's first `lines` pairs on the worker thread; returns the request id."""
        self._sync_methods()
        path, translator = self.path(), self.translator
        if translator is None or not path:
            return 0
        self._stop_run()
        self._remember(path)
        self._set_path(path)
        lines, methods, heads = self.lines.value(), self.chosen_methods(), self.heads_box.isChecked()
        cfg = translator.config
        self._plan = (cfg.decoder_layers * cfg.n_heads if heads else 0, methods)
        cancel = self._cancel = threading.Event()
        self._run_token += 1
        token = self._run_token  # known before the job starts (its request id is only returned after)

        def job() -> core.DatasetReport | None:
            pairs = core.read_pairs(path, lines)
            try:
                return core.dataset_report(translator, pairs, methods=methods, heads=heads, cancel=cancel.is_set,
                                           progress=lambda done, total: self.progressed.emit(token, done, total))
            except core.ReportCancelled:
                return None

        self.report = None
        self._fill()
        self._started = time.perf_counter()
        self._samples.clear()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m units")
        self.eta.setText("")
        request = self.run_job(job, self._show_report, f"Reading {Path(path).name} and translating it…")
        self.empty.set_message(f"Running over {Path(path).name}…", "The tables appear when the run is done; "
                               "Cancel stops it.")
        return request

    def cancel(self) -> None:
        """Stop the run: the view is idle now; the worker stops after the unit under way."""
        if not self.running:
            return
        self._stop_run()
        self.eta.setText("")
        self.status.setText("Cancelled.")
        self._fill()
        self._update_enabled()

    def shutdown(self) -> None:
        """The window is closing: a run of minutes is told to stop first, so joining the thread is quick."""
        self._stop_run()
        super().shutdown()

    def _stop_run(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self._cancel = None
        if self.running:
            self._reset_progress()
        self.forget_job()

    def _reset_progress(self) -> None:
        self.progress.setFormat("")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.eta.setText("")

    def _on_progress(self, token: int, done: int, total: int) -> None:
        if token != self._run_token or not self.running:
            return
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        now = time.perf_counter()
        self._samples.append((now, done))
        (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
        per_unit = (t1 - t0) / (d1 - d0) if d1 > d0 else (now - self._started) / max(done, 1)
        if done:  # the recent speed, not the average: the head passes and the methods' sentences differ
            self.eta.setText(f"{_eta(now - self._started)} elapsed · about {_eta(per_unit * (total - done))} left")
        self.status.setText(f"Running: {self._phase(done, total)} ({done} of {total} units)…")

    def _phase(self, done: int, total: int) -> str:
        """What the unit after `done` is, from the run's plan: the intact pass, a head's, a method's sentence."""
        heads, methods = self._plan
        if done == 0:
            return "translating the file with every head on"
        if done < 1 + heads:
            return f"head {done} of {heads} switched off"
        sentences = (total - 1 - heads) // max(len(methods), 1)
        k, i = divmod(done - 1 - heads, max(sentences, 1))
        return f"{methods[k]}, sentence {i + 1} of {sentences}" if k < len(methods) else "finishing"

    def _show_report(self, report: core.DatasetReport | None) -> None:
        self._cancel = None
        if report is None:  # cancelled in the worker without the view being told (it always is): stay empty
            self.status.setText("Cancelled.")
            self._fill()
            return
        self.report = report
        self.progress.setValue(self.progress.maximum())
        self.eta.setText(f"done in {_eta(report.seconds)}")
        self.status.setText(f"{len(report.pairs)} sentences · BLEU {report.bleu:.2f}, chrF {report.chrf:.2f} with "
                            f"every head on · {report.seconds:.1f} s")
        self._fill()
        self._update_enabled()

    # --- tables -------------------------------------------------------------------------------------------

    def _show_empty(self) -> None:
        if self.translator is None:
            self.empty.set_message("No model loaded", "Load a model, then run it over a file of sentence pairs.")
        else:
            self.empty.set_message("No report yet for this model", EMPTY_HINT)
        self.stack.setCurrentIndex(0)

    def _fill(self) -> None:
        """Both tables from `self.report` (emptied, with the empty message, when there is none)."""
        report = self.report
        for table in (self.heads_table, self.methods_table):
            table.setSortingEnabled(False)
            table.clearSelection()
            table.setRowCount(0)
        self.sentences.clear()
        self.sentences_title.setText("Telling sentences")
        if report is None:
            self._update_enabled()
            self._show_empty()
            return
        self.heads_table.setRowCount(len(report.heads))
        for r, row in enumerate(report.heads):
            first = NumericItem(row.layer * 10000 + row.head, layer_name(row.layer))
            first.setData(ROW_KEY, (row.layer, row.head))
            cells = [first, NumericItem(row.head, row.name), _number(row.bleu_drop, 2), _number(row.chrf_drop, 2),
                     NumericItem(row.changed, str(row.changed))]
            cells += [_number(math.nan if row.stats is None else getattr(row.stats, f)) for f in STAT_FIELDS]
            for c, item in enumerate(cells):
                item.setToolTip(head_description(row.layer, row.head))
                self.heads_table.setItem(r, c, item)
        self.methods_table.setRowCount(len(report.methods))
        for r, m in enumerate(report.methods):
            first = _text_item(m.method)
            first.setData(ROW_KEY, m.method)
            cells = [first, _number(m.comprehensiveness), _number(m.random_comprehensiveness),
                     _number(m.sufficiency), _number(m.random_sufficiency), NumericItem(m.sentences, str(m.sentences)),
                     _number(m.seconds_per_sentence, 3)]
            tip = f"{m.skipped} sentence(s) skipped: {m.error}" if m.skipped else ""
            for c, item in enumerate(cells):
                item.setToolTip(tip)
                self.methods_table.setItem(r, c, item)
        for table in (self.heads_table, self.methods_table):
            table.setSortingEnabled(True)
        self.heads_table.sortItems(2, Qt.DescendingOrder)  # the heads that matter most first
        self.methods_table.sortItems(1, Qt.DescendingOrder)  # the most comprehensive methods first
        self.tables.setTabText(0, f"Heads ({len(report.heads)})")
        self.tables.setTabText(1, f"Methods ({len(report.methods)})")
        self.tables.setCurrentIndex(0 if report.heads else 1)
        self.stack.setCurrentIndex(1)
        self._update_enabled()

    def row_key(self, table: QTableWidget, row: int) -> Any:
        return table.item(row, 0).data(ROW_KEY)

    def column_values(self, table: QTableWidget, column: int) -> list[float]:
        """A table's numbers in `column`, top to bottom as shown (sorted or not)."""
        return [float(table.item(r, column).data(Qt.UserRole)) for r in range(table.rowCount())]

    def _selected(self, table: QTableWidget) -> Any:
        rows = table.selectionModel().selectedRows() if table.selectionModel() else []
        return self.row_key(table, rows[0].row()) if rows else None

    def _show_current_sentences(self, _index: int = 0) -> None:
        """The pane follows the table shown: its selected row's sentences, or the hint."""
        self.sentences.clear()
        self.sentences_title.setText("Telling sentences")
        if self.tables.currentWidget() is self.heads_table:
            self._show_head_sentences()
        else:
            self._show_method_sentences()

    def _show_head_sentences(self) -> None:
        key, report = self._selected(self.heads_table), self.report
        if key is None or report is None:
            return
        row = report.head(*key)
        self.sentences_title.setText(f"{row.name}: the sentences it matters most for ({row.changed} changed of "
                                     f"{len(report.pairs)})")
        if not row.telling:
            self.sentences.setHtml("<p>No sentence's translation changed with this head switched off.</p>")
            return
        parts = []
        for change in row.telling:
            source, reference = report.pairs[change.index]
            parts.append(_block(change.index, source, reference, [
                ("With every head", report.translations[change.index]),
                (f"Without {row.name}", change.translation)],
                f"chrF {-change.chrf_drop:+.1f}, BLEU {-change.bleu_drop:+.1f}"))
        self.sentences.setHtml("".join(parts))

    def _show_method_sentences(self) -> None:
        key, report = self._selected(self.methods_table), self.report
        if key is None or report is None:
            return
        row = report.method(key)
        self.sentences_title.setText(f"{row.method}: where it is least faithful (smallest margin over random)")
        if not row.telling:
            self.sentences.setHtml(f"<p>No sentence could be explained: {html.escape(row.error or '')}</p>")
            return
        parts = []
        for s in row.telling:
            source, reference = report.pairs[s.index]
            parts.append(_block(s.index, source, reference, [("Translation", report.translations[s.index])],
                                f"comp. {s.comprehensiveness:.3f} (random {s.random_comprehensiveness:.3f}) · "
                                f"suff. {s.sufficiency:.3f} (random {s.random_sufficiency:.3f}) · margin "
                                f"{s.margin:+.3f}"))
        self.sentences.setHtml("".join(parts))

    def select_row(self, table: QTableWidget, key: Any) -> None:
        """Select the row showing `key` ((layer, head) or a method), wherever sorting put it."""
        for r in range(table.rowCount()):
            if self.row_key(table, r) == key:
                table.selectRow(r)
                return

    # --- export ---------------------------------------------------------------------------------------------

    def export_csv(self, path: str | None = None) -> list[Path]:
        """Write the Heads table to `path` and the Methods table beside it (`<stem>-methods.csv`)."""
        if self.report is None:
            return []
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export the report", "heads.csv", "CSV (*.csv)")
            if not path:
                return []
        heads = Path(path)
        methods = heads.with_name(f"{heads.stem}-methods.csv")
        written = []
        try:
            for target, rows in ((heads, core.head_csv_rows(self.report)), (methods, core.method_csv_rows(self.report))):
                with open(target, "w", newline="", encoding="utf-8") as f:
                    csv.writer(f).writerows(rows)
                written.append(target)
        except OSError as exc:
            self.status.setText(f"Cannot write {exc.filename}: {exc.strerror}")
            return written
        self.status.setText(f"Wrote {heads} and {methods.name}")
        return written


def _block(index: int, source: str, reference: str, outputs: list[tuple[str, str]], note: str) -> str:
    """One telling sentence as HTML: its pair's number in the file, source, reference, the translations, a one-line note."""
    esc = html.escape
    rows = "".join(f"<tr><td><i>{esc(label)}</i></td><td>{esc(text)}</td></tr>" for label, text in
                   [("Source", source), ("Reference", reference), *outputs])
    return f"<p><b>Pair {index + 1}</b> · {esc(note)}</p><table cellspacing='2'>{rows}</table><hr/>"
