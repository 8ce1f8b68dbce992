"""The Train tab: a form over `TrainConfig`, then `nmt-desktop train` as a child process with live plots.

The tab never trains in the window's process. Start writes the form as `RUN/train_config.toml` and
runs `python -m nmt_desktop train --config RUN/train_config.toml --progress json` through
`TrainProcess` (a QProcess); the JSON progress events drive the progress bar, the pyqtgraph plots,
the sample table and the probe heatmap. Stop sends SIGTERM (the child saves `RUN/last` and exits 0);
Resume runs the same command with `--resume`. A crash of the child is shown with its last error lines.

Runs live in `user_runs_dir()/<src>-<tgt>-<YYYYmmdd-HHMMSS>`; when a run ends (or stops) its best
model (else its last checkpoint) is announced with `modelReady(path)` so the window can put it in the
model picker, and "Load trained model" loads it with one click.
"""

from __future__ import annotations

import dataclasses
import logging
import shlex
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog,
                               QFormLayout, QGridLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QMessageBox, QPlainTextEdit, QProgressBar, QPushButton, QRadioButton, QScrollArea,
                               QSpinBox, QSplitter, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from nmt_desktop.core.config import PRESETS, ConfigError, TrainConfig
from nmt_desktop.core.locations import user_runs_dir
from nmt_desktop.core.training.train_flags import train_command_line

from .formatting import format_eta  # noqa: F401 (re-exported: tests and screenshot use it here)
from .attention_view import FocusView
from .devices import Device, detect_devices, no_gpu_message
from .train_process import TrainProcess, parse_event, train_command

log = logging.getLogger("nmt_desktop.gui.train")

# Defaults that differ between fine-tuning a loaded model and training from scratch.
FINETUNE_DEFAULTS: dict[str, Any] = dict(lr=1e-4, warmup_steps=500, dropout=None, max_steps=2000, epochs=None,
                                         eval_every=200, patience=5)
SCRATCH_DEFAULTS: dict[str, Any] = dict(preset="small", vocab_size=8000, lr=7e-4, warmup_steps=4000, dropout=0.1,
                                        max_steps=None, epochs=20.0, eval_every=1000, patience=10)

TRAIN_KINDS = ("TSV or TMX file", "Two aligned files")
DEV_KINDS = ("Automatic split", "TSV or TMX file", "Two aligned files", "No dev set")
CORPUS_FILTER = "Parallel corpora (*.tsv *.txt *.tmx *.tab);;All files (*)"
PREVIEW_PAIRS = 5
PLOTS = {  # key: (plot, legend name, colour)
    "train_loss": ("loss", "train loss", "#4f46e5"),
    "dev_loss": ("loss", "dev loss", "#dc2626"),
    "lr": ("lr", "learning rate", "#059669"),
    "tokens_per_s": ("speed", "target tokens/s", "#d97706"),
    "bleu": ("quality", "dev BLEU", "#4f46e5"),
    "chrf": ("quality", "dev chrF", "#0891b2"),
}
PLOT_TITLES = {"loss": "Loss (per target token)", "lr": "Learning rate", "speed": "Tokens / s",
               "quality": "Dev BLEU and chrF"}


class DataCheck:
    """The outcome of reading the corpora before a run: preview pairs and one summary line each."""

    def __init__(self, preview: list[tuple[str, str]], summary: list[str]):
        self.preview, self.summary = preview, summary


def check_data(cfg: TrainConfig) -> DataCheck:
    """Read and validate the run's corpora as the trainer will (CorpusError names file and line)."""
    from nmt_desktop.core.training.data import CorpusSpec, read_corpus, split_dev

    langs = dict(src_lang=cfg.src_lang or None, tgt_lang=cfg.tgt_lang or None)
    train = read_corpus(CorpusSpec(path=cfg.train, src_path=cfg.train_src, tgt_path=cfg.train_tgt,
                                   reverse=cfg.reverse, **langs))
    summary = [f"Training data: {train.stats.summary()}"]
    if cfg.dev or cfg.dev_src:
        dev = read_corpus(CorpusSpec(path=cfg.dev, src_path=cfg.dev_src, tgt_path=cfg.dev_tgt, reverse=cfg.reverse,
                                     **langs))
        summary.append(f"Dev set: {dev.stats.summary()}")
    elif cfg.dev_fraction > 0:
        rest, dev = split_dev(train, cfg.dev_fraction, cfg.seed)
        summary.append(f"Dev set: {len(dev)} pairs held out (seed {cfg.seed}), {len(rest)} left for training.")
    return DataCheck(train.preview(PREVIEW_PAIRS), summary)


def run_name(src: str, tgt: str, when: float | None = None) -> str:
    """A readable run folder name: `<src>-<tgt>-<YYYYmmdd-HHMMSS>`."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when))
    return f"{_slug(src) or 'src'}-{_slug(tgt) or 'tgt'}-{stamp}"


def _slug(text: str) -> str:
    return "".join(c for c in text.strip() if c.isalnum() or c in "_.")[:16]


def flag_command(cfg: TrainConfig) -> str:
    """`nmt-desktop train --flag value ... --progress json`: what the Train tab runs, as flags."""
    return train_command_line(cfg) + " --progress json"


class FloatEdit(QLineEdit):
    """A float typed as text (learning rates read better as 7e-4 than in a spin box)."""

    def __init__(self, name: str, value: float):
        super().__init__()
        self.name = name
        self.setValue(value)

    def setValue(self, value: float) -> None:  # noqa: N802 - Qt style
        self.setText(repr(float(value)))

    def value(self) -> float:
        try:
            return float(self.text().strip())
        except ValueError:
            raise ConfigError(f"{self.name} must be a number, got {self.text()!r}") from None


class PathRow(QWidget):
    """A path line edit with a Browse… button."""

    def __init__(self, title: str, placeholder: str = "", on_pick: Callable[[], None] | None = None,
                 save: bool = False):
        super().__init__()
        self.title = title
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(placeholder)
        self.button = QPushButton("Browse…")
        self.button.clicked.connect(self._browse)
        self._on_pick = on_pick
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.edit, 1)
        lay.addWidget(self.button)

    def _browse(self) -> None:
        start = str(Path(self.text()).parent) if self.text() else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, self.title, start, CORPUS_FILTER)
        if path:
            self.edit.setText(path)
            if self._on_pick is not None:
                self._on_pick()

    def text(self) -> str:
        return self.edit.text().strip()

    def setText(self, text: str | None) -> None:  # noqa: N802
        self.edit.setText(text or "")


class TrainPanel(QWidget):
    """The Train tab. `set_model(info)` tells it which model is loaded (for fine-tuning)."""

    stateChanged = Signal(str)  # idle | checking | running | stopping | stopped | finished | failed
    trainEvent = Signal(dict)  # every progress event, after the panel has shown it
    modelReady = Signal(str)  # a run's best (or last) model folder, for the model picker
    loadModelRequested = Signal(str)
    trainingFailed = Signal(str)  # one line for the window's error report
    statusMessage = Signal(str)
    _checked = Signal(int, object, str)  # token, DataCheck or None, error message
    _devicesFound = Signal(object)  # list[Device] with GPU names and memory (from a thread)

    def __init__(self, parent: QWidget | None = None, devices: list[Device] | None = None):
        super().__init__(parent)
        self.state = "idle"
        self.model_path: str | None = None
        self.model_name = ""
        self.model_langs = ("", "")
        self.run_dir: Path | None = None
        self.trained_model: str | None = None
        self.last_event: dict[str, Any] | None = None
        self.last_step = 0
        self.total_steps: int | None = None
        self.probe_updates = 0
        self.probe: dict[str, Any] | None = None
        self.error_text = ""
        self.end_reason: str | None = None
        self._check_token = 0
        self._pending_start: TrainConfig | None = None
        self._base = TrainConfig()  # fields the form does not show (kept from a loaded TOML)
        self.ask: Callable[[str, str], bool] = self._ask_dialog  # tests replace this
        self.process = TrainProcess(self)
        self.process.event.connect(self._on_event)
        self.process.logLine.connect(self._append_log)
        self.process.finished.connect(self._on_finished)
        self._checked.connect(self._on_checked)
        self._devicesFound.connect(self.set_devices)
        self.devices = detect_devices(details=False) if devices is None else devices
        self.series: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in PLOTS}

        self._build_form()
        self._build_live()
        split = QSplitter(Qt.Horizontal)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form)
        scroll.setMinimumWidth(400)
        split.addWidget(scroll)
        split.addWidget(self.live)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([440, 900])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(split)
        self._set_mode(scratch=True)
        self._update_kinds()
        self._connect_changes()
        self._set_state("idle")
        self._update_command()
        if devices is None and any(d.key.startswith("cuda") for d in self.devices):
            threading.Thread(target=lambda: self._emit_safely(self._devicesFound, detect_devices()),
                             name="train-devices", daemon=True).start()

    @staticmethod
    def _emit_safely(signal: Any, *args: Any) -> None:
        try:
            signal.emit(*args)  # queued to the GUI thread
        except RuntimeError:  # the panel was deleted meanwhile
            pass

    def set_devices(self, devices: list[Device]) -> None:
        """List `devices` (best first) in the device box, keeping the choice if it is still there."""
        current = self.device.currentData()
        self.devices = list(devices)
        self.device.blockSignals(True)
        self.device.clear()
        for d in self.devices:
            self.device.addItem(d.label, d.key)
        index = self.device.findData(current)
        self.device.setCurrentIndex(index if index >= 0 else 0)
        self.device.blockSignals(False)
        message = no_gpu_message(self.devices) or ""
        self.device_message.setText(message)
        self.device_message.setVisible(bool(message))

    # -- building ---------------------------------------------------------------------------------

    def _build_form(self) -> None:
        self.form = QWidget()
        col = QVBoxLayout(self.form)
        col.setContentsMargins(0, 0, 6, 0)

        # data
        data = QGroupBox("Data")
        f = QFormLayout(data)
        self.train_kind = QComboBox()
        self.train_kind.addItems(TRAIN_KINDS)
        self.train_file = PathRow("Training data", "source<TAB>target .tsv, or .tmx", self.check_data_now)
        self.train_src = PathRow("Training source", "source sentences, one per line", self.check_data_now)
        self.train_tgt = PathRow("Training target", "target sentences, one per line", self.check_data_now)
        f.addRow("Training data", self.train_kind)
        f.addRow("File", self.train_file)
        f.addRow("Source file", self.train_src)
        f.addRow("Target file", self.train_tgt)
        langs = QHBoxLayout()
        self.src_lang = QLineEdit()
        self.src_lang.setPlaceholderText("source, e.g. en")
        self.tgt_lang = QLineEdit()
        self.tgt_lang.setPlaceholderText("target, e.g. de")
        langs.addWidget(self.src_lang)
        langs.addWidget(QLabel("→"))
        langs.addWidget(self.tgt_lang)
        f.addRow("Direction", langs)
        self.reverse = QCheckBox("Swap the sides (train target → source)")
        f.addRow("", self.reverse)
        self.dev_kind = QComboBox()
        self.dev_kind.addItems(DEV_KINDS)
        self.dev_file = PathRow("Dev set", "source<TAB>target .tsv, or .tmx")
        self.dev_src = PathRow("Dev source", "dev source sentences")
        self.dev_tgt = PathRow("Dev target", "dev target sentences")
        split_row = QHBoxLayout()
        self.dev_percent = QDoubleSpinBox()
        self.dev_percent.setRange(0.1, 50.0)
        self.dev_percent.setSingleStep(0.5)
        self.dev_percent.setValue(2.0)
        self.dev_percent.setSuffix(" %")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setValue(1)
        split_row.addWidget(self.dev_percent)
        split_row.addWidget(QLabel("seed"))
        split_row.addWidget(self.seed)
        self.dev_split_widget = QWidget()
        self.dev_split_widget.setLayout(split_row)
        split_row.setContentsMargins(0, 0, 0, 0)
        f.addRow("Dev set", self.dev_kind)
        f.addRow("Dev file", self.dev_file)
        f.addRow("Dev source", self.dev_src)
        f.addRow("Dev target", self.dev_tgt)
        f.addRow("Hold out", self.dev_split_widget)
        self.data_form = f
        self.check_button = QPushButton("Check and preview data")
        self.check_button.clicked.connect(self.check_data_now)
        f.addRow(self.check_button)
        self.preview_table = QTableWidget(0, 2)
        self.preview_table.setHorizontalHeaderLabels(["source", "target"])
        self.preview_table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.preview_table.verticalHeader().setVisible(False)
        self.preview_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.preview_table.setMaximumHeight(150)
        f.addRow(self.preview_table)
        self.data_summary = QLabel("")
        self.data_summary.setObjectName("hint")
        self.data_summary.setWordWrap(True)
        f.addRow(self.data_summary)
        self.data_error = QLabel("")
        self.data_error.setWordWrap(True)
        self.data_error.setStyleSheet("color: #b91c1c; font-weight: 600;")
        self.data_error.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.data_error.hide()
        f.addRow(self.data_error)
        col.addWidget(data)

        # model
        model = QGroupBox("Model")
        f = QFormLayout(model)
        self.finetune_radio = QRadioButton("Fine-tune the loaded model (its tokenizer is kept)")
        self.scratch_radio = QRadioButton("From scratch")
        self.mode_group = QButtonGroup(self)
        self.mode_group.addButton(self.finetune_radio)
        self.mode_group.addButton(self.scratch_radio)
        self.finetune_radio.toggled.connect(lambda on: self._set_mode(scratch=not on))
        self.model_label = QLabel("No model loaded")
        self.model_label.setObjectName("hint")
        self.preset = QComboBox()
        self.preset.addItems(list(PRESETS))
        for i, (name, arch) in enumerate(PRESETS.items()):
            self.preset.setItemData(i, f"d_model {arch['d_model']}, {arch['n_heads']} heads, "
                                       f"{arch['encoder_layers']}+{arch['decoder_layers']} layers", Qt.ToolTipRole)
        self.vocab_size = QSpinBox()
        self.vocab_size.setRange(100, 256000)
        self.vocab_size.setSingleStep(1000)
        f.addRow(self.finetune_radio)
        f.addRow("", self.model_label)
        f.addRow(self.scratch_radio)
        f.addRow("Size preset", self.preset)
        f.addRow("Vocabulary size", self.vocab_size)
        col.addWidget(model)

        # device
        device = QGroupBox("Device")
        f = QFormLayout(device)
        self.device = QComboBox()
        for d in self.devices:
            self.device.addItem(d.label, d.key)
        self.device.setCurrentIndex(0)  # detect_devices lists the best first
        self.threads = QSpinBox()
        self.threads.setRange(0, 256)
        self.threads.setSpecialValueText("torch default")
        self.device_message = QLabel(no_gpu_message(self.devices) or "")
        self.device_message.setWordWrap(True)
        self.device_message.setStyleSheet("color: #92400e;")
        self.device_message.setVisible(bool(self.device_message.text()))
        f.addRow("Train on", self.device)
        f.addRow("CPU threads", self.threads)
        f.addRow(self.device_message)
        col.addWidget(device)

        # hyper-parameters
        hp = QGroupBox("Hyper-parameters")
        f = QFormLayout(hp)
        self.lr = FloatEdit("learning rate", 7e-4)
        self.batch_tokens = QSpinBox()
        self.batch_tokens.setRange(16, 1_000_000)
        self.batch_tokens.setSingleStep(512)
        self.batch_tokens.setValue(4096)
        limit = QHBoxLayout()
        self.limit_kind = QComboBox()
        self.limit_kind.addItems(["steps", "epochs"])
        self.limit_value = QDoubleSpinBox()
        self.limit_value.setRange(0.1, 10_000_000)
        limit.addWidget(self.limit_value, 1)
        limit.addWidget(self.limit_kind)
        self.limit_kind.currentIndexChanged.connect(self._limit_kind_changed)
        self.warmup = QSpinBox()
        self.warmup.setRange(0, 1_000_000)
        self.label_smoothing = QDoubleSpinBox()
        self.label_smoothing.setRange(0.0, 0.9)
        self.label_smoothing.setSingleStep(0.05)
        self.label_smoothing.setValue(0.1)
        self.dropout = QDoubleSpinBox()
        self.dropout.setRange(-0.05, 0.9)
        self.dropout.setSingleStep(0.05)
        self.eval_every = QSpinBox()
        self.eval_every.setRange(1, 10_000_000)
        self.eval_sentences = QSpinBox()
        self.eval_sentences.setRange(0, 1_000_000)
        self.eval_sentences.setSpecialValueText("all")
        self.eval_sentences.setValue(500)
        self.patience = QSpinBox()
        self.patience.setRange(0, 1000)
        self.patience.setSpecialValueText("never stop early")
        self.log_every = QSpinBox()
        self.log_every.setRange(1, 1_000_000)
        self.log_every.setValue(50)
        self.probe_edit = QLineEdit()
        self.probe_edit.setPlaceholderText("empty: the first training sentence")
        f.addRow("Learning rate", self.lr)
        f.addRow("Batch tokens", self.batch_tokens)
        f.addRow("Train for", limit)
        f.addRow("Warmup steps", self.warmup)
        f.addRow("Label smoothing", self.label_smoothing)
        f.addRow("Dropout", self.dropout)
        f.addRow("Evaluate every", self.eval_every)
        f.addRow("Dev sentences decoded", self.eval_sentences)
        f.addRow("Early stopping after", self.patience)
        f.addRow("Report every", self.log_every)
        f.addRow("Probe sentence", self.probe_edit)
        self.reset_button = QPushButton("Reset defaults")
        self.reset_button.clicked.connect(lambda: self.apply_defaults(self.scratch_radio.isChecked()))
        f.addRow(self.reset_button)
        col.addWidget(hp)

        # run folder, config and command line
        run = QGroupBox("Run")
        f = QFormLayout(run)
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText(f"automatic: {user_runs_dir()}/<src>-<tgt>-<date>")
        f.addRow("Run folder", self.out_edit)
        row = QHBoxLayout()
        self.save_button = QPushButton("Save config…")
        self.save_button.clicked.connect(self._save_dialog)
        self.load_button = QPushButton("Load config…")
        self.load_button.clicked.connect(self._load_dialog)
        self.open_run_button = QPushButton("Open run…")
        self.open_run_button.setToolTip("Show an earlier run's curves and continue it with Resume")
        self.open_run_button.clicked.connect(self._open_run_dialog)
        row.addWidget(self.save_button)
        row.addWidget(self.load_button)
        row.addWidget(self.open_run_button)
        row.addStretch(1)
        f.addRow(row)
        self.command_view = QPlainTextEdit()
        self.command_view.setReadOnly(True)
        self.command_view.setMaximumHeight(130)
        self.command_view.setStyleSheet("font-family: monospace; font-size: 9pt; background: #f8fafc;")
        f.addRow(QLabel("Equivalent command line"))
        f.addRow(self.command_view)
        col.addWidget(run)
        col.addStretch(1)

    def _build_live(self) -> None:
        self.live = QWidget()
        lay = QVBoxLayout(self.live)
        lay.setContentsMargins(6, 0, 0, 0)
        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start training")
        self.start_button.setObjectName("primaryButton")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Save a checkpoint and stop; Resume continues it")
        self.stop_button.clicked.connect(self.stop)
        self.resume_button = QPushButton("Resume")
        self.resume_button.clicked.connect(self.resume)
        self.load_model_button = QPushButton("Load trained model")
        self.load_model_button.clicked.connect(self._request_load)
        for b in (self.start_button, self.stop_button, self.resume_button, self.load_model_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.state_label = QLabel("")
        buttons.addWidget(self.state_label)
        lay.addLayout(buttons)
        prog = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("not started")
        self.eta_label = QLabel("")
        prog.addWidget(self.progress, 1)
        prog.addWidget(self.eta_label)
        lay.addLayout(prog)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.error_label.setStyleSheet("color: #b91c1c; background: #fef2f2; border: 1px solid #fecaca; "
                                       "border-radius: 6px; padding: 6px; font-family: monospace;")
        self.error_label.hide()
        lay.addWidget(self.error_label)

        vsplit = QSplitter(Qt.Vertical)
        plots = QWidget()
        grid = QGridLayout(plots)
        grid.setContentsMargins(0, 0, 0, 0)
        self.plots: dict[str, pg.PlotWidget] = {}
        for i, key in enumerate(PLOT_TITLES):
            w = pg.PlotWidget()
            w.setBackground("w")
            w.setTitle(PLOT_TITLES[key], color="#374151", size="10pt")
            w.showGrid(x=True, y=True, alpha=0.2)
            w.setLabel("bottom", "step")
            w.setMenuEnabled(False)
            if key in ("loss", "quality"):
                w.addLegend(offset=(-10, 10), labelTextColor="#374151")
            for axis in ("left", "bottom"):
                w.getAxis(axis).setTextPen("#374151")
            self.plots[key] = w
            grid.addWidget(w, i // 2, i % 2)
        self.curves: dict[str, pg.PlotDataItem] = {}
        for key, (plot, name, colour) in PLOTS.items():
            symbol = "o" if key in ("dev_loss", "bleu", "chrf") else None
            self.curves[key] = self.plots[plot].plot([], [], name=name, pen=pg.mkPen(colour, width=2),
                                                     symbol=symbol, symbolSize=6, symbolBrush=colour,
                                                     symbolPen=None)
        vsplit.addWidget(plots)

        bottom = QSplitter(Qt.Horizontal)
        self.bottom_tabs = QTabWidget()
        self.samples_table = QTableWidget(0, 4)
        self.samples_table.setHorizontalHeaderLabels(["step", "source", "reference", "hypothesis"])
        header = self.samples_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        for c in (1, 2, 3):
            header.setSectionResizeMode(c, QHeaderView.Stretch)
        self.samples_table.verticalHeader().setVisible(False)
        self.samples_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(5000)
        self.log_view.setStyleSheet("font-family: monospace; font-size: 9pt;")
        self.bottom_tabs.addTab(self.samples_table, "Sample translations")
        self.bottom_tabs.addTab(self.log_view, "Log")
        bottom.addWidget(self.bottom_tabs)

        probe = QGroupBox("Probe sentence: cross-attention")
        pl = QVBoxLayout(probe)
        pick = QHBoxLayout()
        self.probe_layer = QSpinBox()
        self.probe_head = QSpinBox()
        for spin, name in ((self.probe_layer, "layer"), (self.probe_head, "head")):
            spin.setRange(1, 1)
            spin.valueChanged.connect(lambda _v: self._show_probe())
            pick.addWidget(QLabel(name))
            pick.addWidget(spin)
        pick.addStretch(1)
        self.probe_label = QLabel("Shown at each evaluation.")
        self.probe_label.setObjectName("hint")
        self.probe_label.setWordWrap(True)
        pl.addLayout(pick)
        pl.addWidget(self.probe_label)
        self.probe_view = FocusView()
        pl.addWidget(self.probe_view, 1)
        bottom.addWidget(probe)
        bottom.setSizes([520, 420])
        vsplit.addWidget(bottom)
        vsplit.setSizes([380, 380])
        lay.addWidget(vsplit, 1)

    def _connect_changes(self) -> None:
        for w in self.findChildren(QLineEdit):
            w.textChanged.connect(self._update_command)
        for w in self.findChildren(QComboBox):
            w.currentIndexChanged.connect(self._update_command)
        for w in self.findChildren(QSpinBox) + self.findChildren(QDoubleSpinBox):
            if w not in (self.probe_layer, self.probe_head):
                w.valueChanged.connect(self._update_command)
        for w in (self.reverse, self.finetune_radio):
            w.toggled.connect(self._update_command)
        self.train_kind.currentIndexChanged.connect(self._update_kinds)
        self.dev_kind.currentIndexChanged.connect(self._update_kinds)

    def _update_kinds(self) -> None:
        aligned = self.train_kind.currentIndex() == 1
        dev = self.dev_kind.currentIndex()
        for widget, visible in ((self.train_file, not aligned), (self.train_src, aligned), (self.train_tgt, aligned),
                                (self.dev_file, dev == 1), (self.dev_src, dev == 2), (self.dev_tgt, dev == 2),
                                (self.dev_split_widget, dev == 0)):
            self.data_form.setRowVisible(widget, visible)

    def _limit_kind_changed(self) -> None:
        epochs = self.limit_kind.currentIndex() == 1
        self.limit_value.setDecimals(1 if epochs else 0)
        self.limit_value.setSingleStep(1.0 if epochs else 100.0)

    # -- model and modes ---------------------------------------------------------------------------

    def set_model(self, info: Any) -> None:
        """The window loaded a model: it is what "Fine-tune" starts from."""
        if info is None:
            self.model_path, self.model_name, self.model_langs = None, "", ("", "")
            self.model_label.setText("No model loaded")
        else:
            self.model_path = str(info.path)
            self.model_name = info.name
            self.model_langs = (info.src_lang or "", info.tgt_lang or "")
            self.model_label.setText(f"{info.name}{' (' + info.languages + ')' if info.languages else ''}")
        self._update_command()

    def _set_mode(self, scratch: bool) -> None:
        for w in (self.finetune_radio, self.scratch_radio):
            w.blockSignals(True)
        self.scratch_radio.setChecked(scratch)
        self.finetune_radio.setChecked(not scratch)
        for w in (self.finetune_radio, self.scratch_radio):
            w.blockSignals(False)
        self.preset.setEnabled(scratch)
        self.vocab_size.setEnabled(scratch)
        self.dropout.setSpecialValueText("preset default (0.1)" if scratch else "the model's own")
        self.apply_defaults(scratch)

    def apply_defaults(self, scratch: bool) -> None:
        """Put the mode's default hyper-parameters in the form."""
        d = SCRATCH_DEFAULTS if scratch else FINETUNE_DEFAULTS
        if scratch:
            self.preset.setCurrentText(d["preset"])
            self.vocab_size.setValue(d["vocab_size"])
        self.lr.setValue(d["lr"])
        self.warmup.setValue(d["warmup_steps"])
        self.dropout.setValue(self.dropout.minimum() if d["dropout"] is None else d["dropout"])
        self.limit_kind.setCurrentIndex(0 if d["max_steps"] else 1)
        self._limit_kind_changed()
        self.limit_value.setValue(d["max_steps"] or d["epochs"])
        self.eval_every.setValue(d["eval_every"])
        self.patience.setValue(d["patience"])

    # -- form <-> TrainConfig ------------------------------------------------------------------------

    def form_config(self, out: str | None = None) -> TrainConfig:
        """The form as a TrainConfig (`out`: the run folder; default the form's or an automatic name)."""
        scratch = self.scratch_radio.isChecked()
        aligned = self.train_kind.currentIndex() == 1
        dev = self.dev_kind.currentIndex()
        epochs = self.limit_kind.currentIndex() == 1
        dropout = self.dropout.value()
        fields: dict[str, Any] = dict(
            train=None if aligned else (self.train_file.text() or None),
            train_src=(self.train_src.text() or None) if aligned else None,
            train_tgt=(self.train_tgt.text() or None) if aligned else None,
            dev=(self.dev_file.text() or None) if dev == 1 else None,
            dev_src=(self.dev_src.text() or None) if dev == 2 else None,
            dev_tgt=(self.dev_tgt.text() or None) if dev == 2 else None,
            dev_fraction=round(self.dev_percent.value() / 100.0, 6) if dev == 0 else 0.0,
            reverse=self.reverse.isChecked(),
            src_lang=self.src_lang.text().strip(), tgt_lang=self.tgt_lang.text().strip(),
            from_model=None if scratch else self.model_path,
            preset=self.preset.currentText(), vocab_size=self.vocab_size.value(),
            dropout=None if dropout < 0 else round(dropout, 4),
            lr=self.lr.value(), warmup_steps=self.warmup.value(),
            label_smoothing=round(self.label_smoothing.value(), 4), batch_tokens=self.batch_tokens.value(),
            max_steps=None if epochs else int(self.limit_value.value()),
            epochs=round(self.limit_value.value(), 4) if epochs else None,
            eval_every=self.eval_every.value(), eval_sentences=self.eval_sentences.value(),
            patience=self.patience.value(), log_every=self.log_every.value(), probe=self.probe_edit.text().strip(),
            device=str(self.device.currentData()), threads=self.threads.value(), seed=self.seed.value(),
            progress="json",
            out=out or self.out_edit.text().strip() or str(user_runs_dir() / run_name(*self._direction())),
        )
        return dataclasses.replace(self._base, **fields)

    def _direction(self) -> tuple[str, str]:
        """(src, tgt) names for the run folder: the languages typed, the model's, or file extensions."""
        src, tgt = self.src_lang.text().strip(), self.tgt_lang.text().strip()
        if not (src and tgt) and self.finetune_radio.isChecked():
            src, tgt = src or self.model_langs[0], tgt or self.model_langs[1]
        if not (src and tgt) and self.train_kind.currentIndex() == 1:
            src = src or Path(self.train_src.text()).suffix.lstrip(".")
            tgt = tgt or Path(self.train_tgt.text()).suffix.lstrip(".")
        if self.reverse.isChecked() and not (self.src_lang.text().strip() or self.tgt_lang.text().strip()):
            src, tgt = tgt, src
        return src, tgt

    def set_form(self, cfg: TrainConfig) -> None:
        """Show `cfg` in the form (fields the form lacks are kept for the next run)."""
        self._base = dataclasses.replace(cfg)
        scratch = not cfg.from_model
        self._set_mode(scratch)
        if not scratch and cfg.from_model != self.model_path:
            self.model_path = cfg.from_model
            self.model_label.setText(f"{cfg.from_model} (from the loaded config)")
        self.train_kind.setCurrentIndex(1 if (cfg.train_src or cfg.train_tgt) else 0)
        self.train_file.setText(cfg.train)
        self.train_src.setText(cfg.train_src)
        self.train_tgt.setText(cfg.train_tgt)
        if cfg.dev:
            self.dev_kind.setCurrentIndex(1)
        elif cfg.dev_src or cfg.dev_tgt:
            self.dev_kind.setCurrentIndex(2)
        elif cfg.dev_fraction > 0:
            self.dev_kind.setCurrentIndex(0)
            self.dev_percent.setValue(cfg.dev_fraction * 100.0)
        else:
            self.dev_kind.setCurrentIndex(3)
        self.dev_file.setText(cfg.dev)
        self.dev_src.setText(cfg.dev_src)
        self.dev_tgt.setText(cfg.dev_tgt)
        self.reverse.setChecked(cfg.reverse)
        self.src_lang.setText(cfg.src_lang)
        self.tgt_lang.setText(cfg.tgt_lang)
        self.preset.setCurrentText(cfg.preset)
        self.vocab_size.setValue(cfg.vocab_size)
        self.dropout.setValue(self.dropout.minimum() if cfg.dropout is None else cfg.dropout)
        self.lr.setValue(cfg.lr)
        self.warmup.setValue(cfg.warmup_steps)
        self.label_smoothing.setValue(cfg.label_smoothing)
        self.batch_tokens.setValue(cfg.batch_tokens)
        epochs = cfg.epochs is not None and not cfg.max_steps
        self.limit_kind.setCurrentIndex(1 if epochs else 0)
        self._limit_kind_changed()
        self.limit_value.setValue(cfg.epochs if epochs else (cfg.max_steps or 1000))
        self.eval_every.setValue(cfg.eval_every)
        self.eval_sentences.setValue(cfg.eval_sentences)
        self.patience.setValue(cfg.patience)
        self.log_every.setValue(cfg.log_every)
        self.probe_edit.setText(cfg.probe)
        index = self.device.findData(cfg.device)
        if index < 0:
            self.device.addItem(cfg.device, cfg.device)
            index = self.device.count() - 1
        self.device.setCurrentIndex(index)
        self.threads.setValue(cfg.threads)
        self.seed.setValue(cfg.seed)
        self.out_edit.setText(cfg.out or "")
        self._update_command()

    def save_config(self, path: str | Path) -> None:
        """Write the form as the TOML `nmt-desktop train --config` reads (no run folder if automatic)."""
        cfg = self.form_config()
        if not self.out_edit.text().strip():
            cfg = dataclasses.replace(cfg, out=None)
        Path(path).write_text(cfg.to_toml(), encoding="utf-8")

    def load_config(self, path: str | Path) -> None:
        cfg = TrainConfig.from_toml(path)  # ConfigError names the file
        self.set_form(cfg)
        if cfg.out and (Path(cfg.out) / "last").is_dir() and not self.running:
            self.run_dir = Path(cfg.out)  # a run's own config: Resume continues it
            self._set_state(self.state)

    def open_run(self, folder: str | Path) -> None:
        """Show an earlier run: its config in the form, its events replayed into the plots; Resume continues it."""
        folder = Path(folder)
        self.load_config(folder / "train_config.toml")
        self.run_dir = folder
        self._reset_live()
        self.end_reason = None
        try:
            lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        for line in lines:
            ev = parse_event(line)
            if ev is not None:
                self._on_event(ev)
        self.trained_model = self._run_model()
        done = self.end_reason not in (None, "interrupted")  # it reached a limit: nothing to resume
        self._set_state("finished" if done else "idle")

    def _open_run_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open training run", str(user_runs_dir()))
        if folder:
            try:
                self.open_run(folder)
            except ConfigError as exc:
                self._show_error(str(exc))

    def _save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save training config", str(Path.home() / "train.toml"),
                                              "TOML (*.toml)")
        if path:
            self.save_config(path)
            self.statusMessage.emit(f"Saved {path}")

    def _load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load training config", str(Path.home()), "TOML (*.toml)")
        if path:
            try:
                self.load_config(path)
            except ConfigError as exc:
                self._show_error(str(exc))

    def command_lines(self, cfg: TrainConfig | None = None, resume: bool = False) -> tuple[str, str]:
        """(`nmt-desktop train --config RUN/train_config.toml ...`, the same run as flags)."""
        cfg = cfg or self.form_config()
        toml = Path(cfg.out or "RUN") / "train_config.toml"
        short = " ".join(["nmt-desktop", *(shlex.quote(a) for a in train_command(toml, resume))])
        return short, flag_command(cfg)

    def _update_command(self, *_: Any) -> None:
        try:
            cfg = self.form_config()
            short, flags = self.command_lines(cfg)
            self.command_view.setPlainText(f"{short}\n\n# the same, as flags:\n{flags}")
        except ConfigError as exc:
            self.command_view.setPlainText(f"(the form is not complete: {exc})")

    # -- data check -------------------------------------------------------------------------------

    def check_data_now(self) -> None:
        """Read the chosen corpora in a thread and show a preview (or the error)."""
        self._pending_start = None
        self._run_check(self.form_config())

    def _run_check(self, cfg: TrainConfig) -> None:
        self._check_token += 1
        token = self._check_token
        self.data_error.hide()
        self.data_summary.setText("Reading the data…")

        def work() -> None:
            try:
                result, error = check_data(cfg), ""
            except Exception as exc:  # noqa: BLE001 - CorpusError, OSError, ...: shown, never raised
                result, error = None, " ".join(str(exc).split()) or type(exc).__name__
            self._emit_safely(self._checked, token, result, error)

        threading.Thread(target=work, name="train-data-check", daemon=True).start()

    def _on_checked(self, token: int, result: DataCheck | None, error: str) -> None:
        if token != self._check_token:
            return
        pending, self._pending_start = self._pending_start, None
        if result is None:
            self.data_summary.setText("")
            self.data_error.setText(error)
            self.data_error.show()
            self.preview_table.setRowCount(0)
            if pending is not None:
                self._show_error(f"The data cannot be used: {error}")
                self._set_state("idle")
            return
        self.data_error.hide()
        self.data_summary.setText("\n".join(result.summary))
        self.preview_table.setRowCount(len(result.preview))
        for r, (s, t) in enumerate(result.preview):
            self.preview_table.setItem(r, 0, QTableWidgetItem(s))
            self.preview_table.setItem(r, 1, QTableWidgetItem(t))
        if pending is not None:
            if not pending.probe and result.preview:
                pending = dataclasses.replace(pending, probe=result.preview[0][0])
            self._launch(pending, resume=False)

    # -- running ----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.process.running

    def start(self) -> bool:
        """Validate the form and the data, then start a new run; False if it did not get that far."""
        if self.running or self.state == "checking":
            return False
        self._hide_error()
        try:
            cfg = self.form_config()
            if not cfg.train and not (cfg.train_src and cfg.train_tgt):
                raise ConfigError("choose the training data first")
            cfg.validate()
        except ConfigError as exc:
            self._show_error(str(exc))
            return False
        if self.finetune_radio.isChecked() and not cfg.from_model:
            self._show_error("No model is loaded to fine-tune: load one on the Models tab, or choose From scratch.")
            return False
        if (Path(cfg.out) / "last").exists():
            self._show_error(f"{cfg.out} already holds a training run: press Resume to continue it, "
                             f"or clear the run folder field for a new one.")
            return False
        self._pending_start = cfg
        self._set_state("checking")
        self._run_check(cfg)
        return True

    def _launch(self, cfg: TrainConfig, resume: bool) -> None:
        run = Path(cfg.out)
        try:
            run.mkdir(parents=True, exist_ok=True)
            (run / "train_config.toml").write_text(cfg.to_toml(), encoding="utf-8")
        except OSError as exc:
            self._show_error(f"Cannot create the run folder {run}: {exc.strerror or exc}")
            self._set_state("idle")
            return
        self.run_dir = run
        self.trained_model = None
        self.end_reason = None
        if not resume:
            self._reset_live()
        short, flags = self.command_lines(cfg, resume)
        self.command_view.setPlainText(f"{short}\n\n# the same, as flags:\n{flags}"
                                       + ("\n# (--resume continues OUT/last)" if resume else ""))
        self._append_log(f"$ {short}")
        self.process.start(run / "train_config.toml", resume=resume)
        self._set_state("running")

    def resume(self) -> bool:
        """Continue the current run folder from its last checkpoint (`--resume`)."""
        if self.running or self.run_dir is None or not (self.run_dir / "last").exists():
            return False
        self._hide_error()
        toml = self.run_dir / "train_config.toml"
        try:
            cfg = TrainConfig.from_toml(toml)
        except ConfigError as exc:
            self._show_error(str(exc))
            return False
        cfg = dataclasses.replace(cfg, out=str(self.run_dir), progress="json")
        self._launch(cfg, resume=True)
        return True

    def stop(self) -> None:
        """Ask the child to save a checkpoint and exit (SIGTERM; killed if it does not)."""
        if self.running:
            self.process.stop()
            self._set_state("stopping")

    def confirm_close(self) -> bool:
        """Closing the window: ask during a run, then stop the child cleanly (its checkpoint is kept)."""
        if not self.running:
            return True
        if not self.ask("Training is running",
                        "A training run is in progress. Stop it and close? A checkpoint is saved; "
                        "Resume continues the run later."):
            return False
        self.shutdown()
        return True

    def shutdown(self, timeout_ms: int = 60000) -> None:
        """Stop the child and wait for it (idempotent); a start still checking its data is dropped."""
        self._pending_start = None
        self._check_token += 1
        if self.state == "checking":
            self._set_state("idle")
        if self.running:
            self.process.stop()
            self.process.wait(timeout_ms)

    def _ask_dialog(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text, QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        return answer == QMessageBox.Yes

    # -- events -----------------------------------------------------------------------------------

    def _reset_live(self) -> None:
        for key in self.series:
            self.series[key] = ([], [])
            self.curves[key].setData([], [])
        self.samples_table.setRowCount(0)
        self.probe_updates = 0
        self.probe = None
        self.last_step = 0
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("starting…")
        self.eta_label.setText("")

    def _add_point(self, key: str, step: float, value: Any) -> None:
        if value is None:
            return
        xs, ys = self.series[key]
        while xs and xs[-1] >= step:  # a resumed run repeats steps after its checkpoint
            xs.pop()
            ys.pop()
        xs.append(float(step))
        ys.append(float(value))
        self.curves[key].setData(np.asarray(xs), np.asarray(ys))

    def _on_event(self, ev: dict) -> None:
        kind = ev.get("event")
        step = int(ev.get("step", 0) or 0)
        self.last_event = ev
        self.last_step = step
        if kind == "start":
            self.total_steps = ev.get("total_steps")
            self.progress.setRange(0, int(self.total_steps or 0) or 0)
            self.progress.setFormat("%v / %m steps" if self.total_steps else "step %v")
            self.progress.setValue(step)
            what = "resumed" if ev.get("resumed") else "started"
            self._append_log(f"{what} at step {step}: {ev.get('parameters', 0):,} parameters on {ev.get('device')}, "
                             f"{ev.get('train_pairs', 0):,} training pairs, {ev.get('dev_pairs', 0):,} dev pairs, "
                             f"{ev.get('steps_per_epoch')} steps per epoch")
        elif kind == "step":
            self._add_point("train_loss", step, ev.get("loss"))
            self._add_point("lr", step, ev.get("lr"))
            self._add_point("tokens_per_s", step, ev.get("tokens_per_s"))
            total = ev.get("total_steps") or self.total_steps
            if total:
                self.progress.setRange(0, int(total))
            self.progress.setValue(step)
            self.eta_label.setText(f"epoch {ev.get('epoch', 0) + 1} · loss {ev.get('loss', 0):.3f} · "
                                   f"ETA {format_eta(ev.get('eta_s'))}")
        elif kind == "eval":
            self._add_point("dev_loss", step, ev.get("dev_loss"))
            self._add_point("bleu", step, ev.get("bleu"))
            self._add_point("chrf", step, ev.get("chrf"))
            self._add_samples(step, ev.get("samples") or [])
            self._append_log(f"step {step}: dev loss {ev.get('dev_loss', 0):.3f}, BLEU {ev.get('bleu', 0):.2f}, "
                             f"chrF {ev.get('chrf', 0):.2f}" + (" (best)" if ev.get("best") else ""))
            if ev.get("probe") and ev["probe"].get("attention") is not None:
                self.probe = dict(ev["probe"], step=step)
                self.probe_updates += 1
                self._show_probe()
        elif kind == "checkpoint":
            self.statusMessage.emit(f"Checkpoint saved at step {step}")
        elif kind == "end":
            self.end_reason = ev.get("reason")
            best = ev.get("best")
            self._append_log(f"finished ({self.end_reason}) at step {step}"
                             + (f"; best model {best} (BLEU {ev.get('best_bleu', 0):.2f})" if best else ""))
        elif kind == "error":
            self._append_log(f"error: {ev.get('message')}")
        self.trainEvent.emit(ev)

    def _add_samples(self, step: int, samples: list[dict]) -> None:
        for s in reversed(samples):  # newest evaluation at the top
            self.samples_table.insertRow(0)
            for c, text in enumerate((str(step), s.get("source", ""), s.get("reference", ""),
                                      s.get("hypothesis", ""))):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.samples_table.setItem(0, c, item)

    def _show_probe(self) -> None:
        if self.probe is None:
            return
        att = np.asarray(self.probe["attention"], dtype=np.float32)  # (layers, heads, T, S)
        if att.ndim != 4:
            return
        layers, heads = att.shape[:2]
        for spin, n in ((self.probe_layer, layers), (self.probe_head, heads)):
            if spin.maximum() != n:
                spin.blockSignals(True)
                spin.setRange(1, n)
                spin.setValue(n if spin is self.probe_layer and spin.value() == 1 and n > 1 else spin.value())
                spin.blockSignals(False)
        layer, head = self.probe_layer.value() - 1, self.probe_head.value() - 1
        matrix = att[layer, head]
        self.probe_view.set_matrix(matrix, self.probe.get("source_tokens", []), self.probe.get("target_tokens", []),
                                   title=f"step {self.probe['step']}: layer {layer + 1}, head {head + 1}")
        self.probe_label.setText(f"“{self.probe.get('source', '')}” → “{self.probe.get('translation', '')}”")

    def _on_finished(self, code: int, crashed: bool) -> None:
        stopped = self.process.stop_requested
        log.info("training process ended: exit code %s%s%s", code, ", crashed" if crashed else "",
                 ", stop requested" if stopped else "")
        if code == 0 and not crashed:
            self._set_state("stopped" if stopped or self.end_reason == "interrupted" else "finished")
        elif stopped:  # killed after the timeout, or stopped before the child could save: the last checkpoint
            self._set_state("stopped")  # (if any) is kept
        else:
            message = self.process.last_error or (
                f"the training process {'crashed' if crashed else 'exited with code ' + str(code)}")
            tail = list(self.process.stderr_tail)[-8:]
            self.error_text = f"Training failed: {message}" + ("\n" + "\n".join(tail) if tail else "")
            self._show_error(self.error_text)
            self._set_state("failed")
            self.trainingFailed.emit(message)
        model = self._run_model()
        if model is not None and self.state in ("stopped", "finished"):
            self.trained_model = model
            self.modelReady.emit(model)
        self._set_state(self.state)

    def _run_model(self) -> str | None:
        if self.run_dir is None:
            return None
        for name in ("best", "last"):
            if (self.run_dir / name / "config.json").is_file():
                return str(self.run_dir / name)
        return None

    def _request_load(self) -> None:
        if self.trained_model:
            self.loadModelRequested.emit(self.trained_model)

    # -- state and messages -------------------------------------------------------------------------

    def _set_state(self, state: str) -> None:
        self.state = state
        busy = state in ("checking", "running", "stopping")
        self.start_button.setEnabled(not busy)
        self.stop_button.setEnabled(state == "running")
        can_resume = (not busy and self.run_dir is not None and (self.run_dir / "last").exists()
                      and state != "finished")
        self.resume_button.setEnabled(can_resume)
        self.load_model_button.setEnabled(not busy and bool(self.trained_model))
        self.form.setEnabled(not busy)
        run = f" · {self.run_dir.name}" if self.run_dir is not None else ""
        text = {"idle": "Ready", "checking": "Checking the data…", "running": f"Training{run}",
                "stopping": "Stopping (saving a checkpoint)…",
                "stopped": f"Stopped at step {self.last_step}{run}: checkpoint kept, Resume continues",
                "finished": f"Finished ({self.end_reason or 'done'}) at step {self.last_step}{run}",
                "failed": f"Failed{run}"}[state]
        self.state_label.setText(text)
        self.stateChanged.emit(state)

    def _show_error(self, text: str) -> None:
        self.error_text = text
        self.error_label.setText(text)
        self.error_label.show()

    def _hide_error(self) -> None:
        self.error_text = ""
        self.error_label.hide()
        self.data_error.hide()

    def _append_log(self, line: str) -> None:
        self.log_view.appendPlainText(line)
