"""The Train tab's form over `TrainConfig`: data, model, device, hyper-parameters and the run folder, one
group box each, with the equivalent command line kept up to date below.

`form_config()` reads the form as a TrainConfig; `set_form(cfg)` shows one (fields the form does not show are
kept for the next run); `save_config` writes the TOML that `nmt-desktop train --config` reads.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout,
                               QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
                               QRadioButton, QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from nmt_desktop.core.config import PRESETS, ConfigError, TrainConfig
from nmt_desktop.core.locations import user_runs_dir

from nmt_desktop.core.training.precision import PRECISIONS, precision_note, precision_problem

from .device_detection import Device, no_gpu_message
from .fields import FloatEdit, PathRow, double_box, spin_box
from .form_tips import apply_tips
from .memory_rows import MemoryRows
from .process import command_lines

if TYPE_CHECKING:
    from ..models.loader import ModelInfo
    from .controller import DataCheck

# Defaults that differ between fine-tuning a loaded model and training from scratch.
FINETUNE_DEFAULTS: dict[str, Any] = dict(lr=1e-4, warmup_steps=500, dropout=None, max_steps=2000, epochs=None,
                                         eval_every=200, patience=5)
SCRATCH_DEFAULTS: dict[str, Any] = dict(preset="small", vocab_size=8000, lr=7e-4, warmup_steps=4000, dropout=0.1,
                                        max_steps=None, epochs=20.0, eval_every=1000, patience=10)

TRAIN_KINDS = ("TSV or TMX file", "Two aligned files", "Translation memory")
MEMORY_KIND = 2  # fine-tuning on a translation memory (memory_rows.py)
# Fine-tuning on a memory: a few hundred segments, so fewer steps and evaluations than a corpus fine-tune.
MEMORY_DEFAULTS: dict[str, Any] = dict(FINETUNE_DEFAULTS, warmup_steps=50, max_steps=400, eval_every=100, patience=3)
DEV_KINDS = ("Automatic split", "TSV or TMX file", "Two aligned files", "No dev set")
PRECISION_LABELS = {"auto": "Automatic (bf16 on a GPU that has it, else fp32)", "fp32": "fp32 (full precision)",
                    "bf16": "bf16 (mixed precision)", "fp16": "fp16 (mixed, with loss scaling)"}


def run_name(src: str, tgt: str, when: float | None = None) -> str:
    """A readable run folder name: `<src>-<tgt>-<YYYYmmdd-HHMMSS>`."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when))
    return f"{_slug(src) or 'src'}-{_slug(tgt) or 'tgt'}-{stamp}"


def _slug(text: str) -> str:
    return "".join(c for c in text.strip() if c.isalnum() or c in "_.")[:16]


class TrainForm(QWidget):
    """The form. `checkRequested`: the user asked to check the data (a button, or a training file picked)."""

    checkRequested = Signal()

    def __init__(self, devices: list[Device], parent: QWidget | None = None):
        super().__init__(parent)
        self.devices = list(devices)
        self.model_path: str | None = None
        self.model_name = ""
        self.model_langs = ("", "")
        self._prefilled = ("", "")  # the direction the form last put in from the model (not typed)
        self._base = TrainConfig()  # fields the form does not show (kept from a loaded TOML)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 6, 0)
        for section in (self._data_section(), self._model_section(), self._device_section(),
                        self._hyper_section(), self._run_section()):
            col.addWidget(section)
        col.addStretch(1)
        self._set_mode(scratch=True)
        self._update_kinds()
        self._connect_changes()
        apply_tips(self)
        self.update_command()

    # -- sections ---------------------------------------------------------------------------------

    def _data_section(self) -> QGroupBox:
        data = QGroupBox("Data")
        f = self.data_form = QFormLayout(data)
        check = self.checkRequested.emit
        self.train_kind = QComboBox()
        self.train_kind.addItems(TRAIN_KINDS)
        self.train_file = PathRow("Training data", "source<TAB>target .tsv, or .tmx", check)
        self.train_src = PathRow("Training source", "source sentences, one per line", check)
        self.train_tgt = PathRow("Training target", "target sentences, one per line", check)
        f.addRow("Training data", self.train_kind)
        f.addRow("File", self.train_file)
        f.addRow("Source file", self.train_src)
        f.addRow("Target file", self.train_tgt)
        self.memory_rows = MemoryRows(f, check)
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
        self.dev_percent = double_box(0.1, 50.0, 0.5, 2.0)
        self.dev_percent.setSuffix(" %")
        self.seed = spin_box(0, 2**31 - 1, 1)
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
        self.check_button = QPushButton("Check and preview data")
        self.check_button.clicked.connect(check)
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
        self.data_error.setObjectName("error")  # coloured by the theme's stylesheet (gui/theme.py)
        self.data_error.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.data_error.hide()
        f.addRow(self.data_error)
        return data

    def _model_section(self) -> QGroupBox:
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
        self.vocab_size = spin_box(100, 256000, step=1000)
        f.addRow(self.finetune_radio)
        f.addRow("", self.model_label)
        f.addRow(self.scratch_radio)
        f.addRow("Size preset", self.preset)
        f.addRow("Vocabulary size", self.vocab_size)
        return model

    def _device_section(self) -> QGroupBox:
        device = QGroupBox("Device")
        f = QFormLayout(device)
        self.device = QComboBox()
        for d in self.devices:
            self.device.addItem(d.label, d.key)
        self.device.setCurrentIndex(0)  # detect_devices lists the best first
        self.precision = QComboBox()
        for name in PRECISIONS:
            self.precision.addItem(PRECISION_LABELS[name], name)
        self.threads = spin_box(0, 256, special="torch default")
        self.device_message = QLabel(no_gpu_message(self.devices) or "")
        self.device_message.setWordWrap(True)
        self.device_message.setObjectName("warning")
        self.device_message.setVisible(bool(self.device_message.text()))
        self.precision_message = QLabel("")  # why the chosen precision cannot run (or runs slowly) there
        self.precision_message.setWordWrap(True)
        self.precision_message.setObjectName("warning")
        self.precision_message.hide()
        f.addRow("Train on", self.device)
        f.addRow("Precision", self.precision)
        f.addRow("CPU threads", self.threads)
        f.addRow(self.device_message)
        f.addRow(self.precision_message)
        self.device.currentIndexChanged.connect(self._update_precision_message)
        self.precision.currentIndexChanged.connect(self._update_precision_message)
        self._update_precision_message()
        return device

    def _update_precision_message(self) -> None:
        """The sentence for a precision the chosen device cannot run (or runs slowly), from what was detected."""
        key, precision = str(self.device.currentData()), str(self.precision.currentData())
        device = next((d for d in self.devices if d.key == key), Device(key, key))
        text = precision_problem(precision, device.kind, device.bf16) or precision_note(precision, device.kind) or ""
        self.precision_message.setText(text + "." if text else "")
        self.precision_message.setVisible(bool(text))

    def _hyper_section(self) -> QGroupBox:
        hp = QGroupBox("Hyper-parameters")
        f = QFormLayout(hp)
        self.lr = FloatEdit("learning rate", 7e-4)
        self.batch_tokens = spin_box(16, 1_000_000, 4096, step=512)
        limit = QHBoxLayout()
        self.limit_kind = QComboBox()
        self.limit_kind.addItems(["steps", "epochs"])
        self.limit_value = double_box(0.1, 10_000_000)
        limit.addWidget(self.limit_value, 1)
        limit.addWidget(self.limit_kind)
        self.limit_kind.currentIndexChanged.connect(self._limit_kind_changed)
        self.warmup = spin_box(0, 1_000_000)
        self.label_smoothing = double_box(0.0, 0.9, 0.05, 0.1)
        self.dropout = double_box(-0.05, 0.9, 0.05)
        self.eval_every = spin_box(1, 10_000_000)
        self.eval_sentences = spin_box(0, 1_000_000, 500, special="all")
        self.patience = spin_box(0, 1000, special="never stop early")
        self.log_every = spin_box(1, 1_000_000, 50)
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
        return hp

    def _run_section(self) -> QGroupBox:
        """The run folder, the config's Save/Load/Open run buttons (the panel handles them), the command line."""
        run = QGroupBox("Run")
        f = QFormLayout(run)
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText(f"automatic: {user_runs_dir()}/<src>-<tgt>-<date>")
        f.addRow("Run folder", self.out_edit)
        row = QHBoxLayout()
        self.save_button = QPushButton("Save config…")
        self.load_button = QPushButton("Load config…")
        self.open_run_button = QPushButton("Open run…")
        self.open_run_button.setToolTip("Show an earlier run's curves and continue it with Resume")
        row.addWidget(self.save_button)
        row.addWidget(self.load_button)
        row.addWidget(self.open_run_button)
        row.addStretch(1)
        f.addRow(row)
        self.command_view = QPlainTextEdit()
        self.command_view.setReadOnly(True)
        self.command_view.setMaximumHeight(130)
        self.command_view.setObjectName("code")
        f.addRow(QLabel("Equivalent command line"))
        f.addRow(self.command_view)
        return run

    def _connect_changes(self) -> None:
        for w in self.findChildren(QLineEdit):
            w.textChanged.connect(self.update_command)
        for w in self.findChildren(QComboBox):
            w.currentIndexChanged.connect(self.update_command)
        for w in self.findChildren(QSpinBox) + self.findChildren(QDoubleSpinBox):
            w.valueChanged.connect(self.update_command)
        for w in (self.reverse, self.finetune_radio):
            w.toggled.connect(self.update_command)
        self.train_kind.currentIndexChanged.connect(self._update_kinds)
        self.dev_kind.currentIndexChanged.connect(self._update_kinds)

    def _update_kinds(self) -> None:
        aligned = self.train_kind.currentIndex() == 1
        memory = self.train_kind.currentIndex() == MEMORY_KIND
        self.memory_rows.set_visible(self.data_form, memory)
        dev = self.dev_kind.currentIndex()
        for widget, visible in ((self.train_file, not (aligned or memory)), (self.train_src, aligned),
                                (self.train_tgt, aligned),
                                (self.dev_file, dev == 1), (self.dev_src, dev == 2), (self.dev_tgt, dev == 2),
                                (self.dev_split_widget, dev == 0)):
            self.data_form.setRowVisible(widget, visible)

    def _limit_kind_changed(self) -> None:
        epochs = self.limit_kind.currentIndex() == 1
        self.limit_value.setDecimals(1 if epochs else 0)
        self.limit_value.setSingleStep(1.0 if epochs else 100.0)

    # -- shown state ------------------------------------------------------------------------------

    def update_command(self, *_: object) -> None:
        try:
            short, flags = command_lines(self.form_config())
            self.show_command(short, flags)
        except ConfigError as exc:
            self.command_view.setPlainText(f"(the form is not complete: {exc})")

    def show_command(self, short: str, flags: str, note: str = "") -> None:
        self.command_view.setPlainText(f"{short}\n\n# the same, as flags:\n{flags}" + note)

    def show_check(self, result: DataCheck | None, error: str) -> None:
        """A data check's preview and summary, or its error."""
        if result is None:
            self.data_summary.setText("")
            self.data_error.setText(error)
            self.data_error.show()
            self.preview_table.setRowCount(0)
            return
        self.data_error.hide()
        self.data_summary.setText("\n".join(result.summary))
        self.preview_table.setRowCount(len(result.preview))
        for r, (s, t) in enumerate(result.preview):
            self.preview_table.setItem(r, 0, QTableWidgetItem(s))
            self.preview_table.setItem(r, 1, QTableWidgetItem(t))

    def show_checking(self) -> None:
        self.data_error.hide()
        self.data_summary.setText("Reading the data…")

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
        self._update_precision_message()

    # -- model and modes ---------------------------------------------------------------------------

    def set_model(self, info: ModelInfo | None) -> None:
        """The window loaded a model: it is what "Fine-tune" starts from."""
        if info is None:
            self.model_path, self.model_name, self.model_langs = None, "", ("", "")
            self.model_label.setText("No model loaded")
        else:
            self.model_path = str(info.path)
            self.model_name = info.name
            self.model_langs = (info.src_lang or "", info.tgt_lang or "")
            self.model_label.setText(f"{info.name}{' (' + info.languages + ')' if info.languages else ''}")
        if self.finetune_radio.isChecked():
            self._prefill_direction()
        self.update_command()

    def _prefill_direction(self) -> None:
        """Fine-tuning the loaded model: its languages in the Direction fields, unless the user typed others."""
        prefilled = []
        for edit, lang, before in zip((self.src_lang, self.tgt_lang), self.model_langs, self._prefilled):
            text = edit.text().strip()
            if lang and text in ("", before):
                edit.setText(lang)
                text = before = lang
            prefilled.append(before if text == before else "")
        self._prefilled = (prefilled[0], prefilled[1])

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
        if not scratch:
            self._prefill_direction()

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
        memory = self.train_kind.currentIndex() == MEMORY_KIND
        fields: dict[str, Any] = dict(
            train=None if aligned or memory else (self.train_file.text() or None),
            **self.memory_rows.fields(memory),
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
            device=str(self.device.currentData()), precision=str(self.precision.currentData()),
            threads=self.threads.value(), seed=self.seed.value(),
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
        self.train_kind.setCurrentIndex(MEMORY_KIND if cfg.memory else 1 if (cfg.train_src or cfg.train_tgt) else 0)
        self.memory_rows.show(cfg)
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
        self.precision.setCurrentIndex(max(0, self.precision.findData(cfg.precision)))
        self.threads.setValue(cfg.threads)
        self.seed.setValue(cfg.seed)
        self.out_edit.setText(cfg.out or "")
        self.update_command()

    def use_memory(self, memory: str, replay: str | None, general_dev: str | None) -> None:
        """Fill the form to fine-tune the loaded model on `memory` (Tools > Fine-tune on my memory…), with the
        memory's defaults; the direction is the model's."""
        self._set_mode(scratch=False)
        self.train_kind.setCurrentIndex(MEMORY_KIND)
        self.memory_rows.show(TrainConfig(memory=memory, replay=replay, general_dev=general_dev))
        self.dev_kind.setCurrentIndex(0)
        self.dev_percent.setValue(10.0)
        for edit, lang in zip((self.src_lang, self.tgt_lang), self.model_langs):
            edit.setText(lang)
        d = MEMORY_DEFAULTS
        self.warmup.setValue(d["warmup_steps"])
        self.limit_kind.setCurrentIndex(0)
        self._limit_kind_changed()
        self.limit_value.setValue(d["max_steps"])
        self.eval_every.setValue(d["eval_every"])
        self.patience.setValue(d["patience"])
        self.update_command()

    def save_config(self, path: str | Path) -> None:
        """Write the form as the TOML `nmt-desktop train --config` reads (no run folder if automatic)."""
        cfg = self.form_config()
        if not self.out_edit.text().strip():
            cfg = dataclasses.replace(cfg, out=None)
        Path(path).write_text(cfg.to_toml(), encoding="utf-8")
