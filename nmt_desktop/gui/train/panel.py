"""The Train tab: the form over `TrainConfig` (form.py) beside the live side (buttons, progress, plots, samples,
log and the probe heatmap), driven by the run controller (controller.py).

The tab never trains in the window's process: the controller runs `nmt-desktop train --config
RUN/train_config.toml --progress json` as a child process, and its JSON progress events are drawn here.
Runs live in `user_runs_dir()/<src>-<tgt>-<YYYYmmdd-HHMMSS>`; when a run ends (or stops) its best model
(else its last checkpoint) is announced with `modelReady(path)` so the window can put it in the model picker,
and "Load trained model" loads it with one click.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QMessageBox,
                               QPlainTextEdit, QProgressBar, QPushButton, QScrollArea, QSplitter, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from nmt_desktop.core.config import ConfigError, TrainConfig
from nmt_desktop.core.locations import user_runs_dir

from .device_detection import Device, detect_devices
from ..formatting import format_time_left
from ..labels import fit_width
from ..lifetime import start_thread
from .controller import TrainController, emit_safely
from .eta import EtaEstimator
from .form import TrainForm
from .plots import LivePlots, ProbeView
from .process import TrainProcess, command_lines

if TYPE_CHECKING:
    from ..models.loader import ModelInfo


class TrainPanel(QWidget):
    """The Train tab. `set_model(info)` tells it which model is loaded (for fine-tuning)."""

    stateChanged = Signal(str)  # idle | checking | running | stopping | stopped | finished | failed
    trainEvent = Signal(dict)  # every progress event, after the panel has shown it
    modelReady = Signal(str)  # a run's best (or last) model folder, for the model picker
    loadModelRequested = Signal(str)
    trainingFailed = Signal(str)  # one line for the window's error report
    statusMessage = Signal(str)
    _devicesFound = Signal(object)  # list[Device] with GPU names and memory (from a thread)

    def __init__(self, parent: QWidget | None = None, devices: list[Device] | None = None):
        super().__init__(parent)
        self.error_text = ""
        self.eta = EtaEstimator()
        self.ask: Callable[[str, str], bool] = self._ask_dialog  # tests replace this
        self.controller = TrainController(self)
        self.controller.process.logLine.connect(self._append_log)
        self.controller.stateChanged.connect(self._show_state)
        self.controller.phaseChanged.connect(lambda _phase: self._show_state(self.state, announce=False))
        self.controller.event.connect(self._on_event)
        self.controller.checked.connect(lambda result, error: self.form.show_check(result, error))
        self.controller.launching.connect(self._on_launching)
        self.controller.error.connect(self._show_error)
        self.controller.modelReady.connect(self.modelReady)
        self.controller.trainingFailed.connect(self.trainingFailed)
        self._devicesFound.connect(lambda found: self.form.set_devices(found))
        look_closer = devices is None  # GPU names and memory come from a thread: detecting them takes a while
        devices = detect_devices(details=False) if devices is None else devices

        self.form = TrainForm(devices)
        self.form.checkRequested.connect(self.check_data_now)
        self.form.save_button.clicked.connect(self._save_dialog)
        self.form.load_button.clicked.connect(self._load_dialog)
        self.form.open_run_button.clicked.connect(self._open_run_dialog)
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
        self.controller.set_state("idle")
        if look_closer and any(d.key.startswith("cuda") for d in devices):
            start_thread(lambda: emit_safely(self._devicesFound, detect_devices()), "train-devices")

    # -- the controller's state, as read by the window and the tests --------------------------------

    @property
    def process(self) -> TrainProcess:
        return self.controller.process

    @property
    def running(self) -> bool:
        return self.controller.running

    @property
    def state(self) -> str:
        return self.controller.state

    @property
    def run_dir(self) -> Path | None:
        return self.controller.run_dir

    @property
    def last_step(self) -> int:
        return self.controller.last_step

    @property
    def trained_model(self) -> str | None:
        return self.controller.trained_model

    # -- building ---------------------------------------------------------------------------------

    def _build_live(self) -> None:
        self.live = QWidget()
        lay = QVBoxLayout(self.live)
        lay.setContentsMargins(6, 0, 0, 0)
        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start training")
        self.start_button.setObjectName("primaryButton")
        self.start_button.setToolTip("Check the data and start training in a separate process")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Save a checkpoint and stop; Resume continues it")
        self.stop_button.clicked.connect(self.stop)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue the stopped or opened run from its last checkpoint")
        self.resume_button.clicked.connect(self.resume)
        self.load_model_button = QPushButton("Load trained model")
        self.load_model_button.setToolTip("Load the run's best model for translating")
        self.load_model_button.clicked.connect(self._request_load)
        for b in (self.start_button, self.stop_button, self.resume_button, self.load_model_button):
            buttons.addWidget(b)
        self.state_label = fit_width(QLabel(""))  # a long status wraps instead of widening the window
        self.state_label.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        buttons.addWidget(self.state_label, 1)
        self.eval_bar = QProgressBar()  # beside "Evaluating on the dev set…": busy, then "128 / 500 sentences"
        self.eval_bar.setToolTip("The dev set's sentences translated so far in this evaluation")
        self.eval_bar.setFixedWidth(self.eval_bar.fontMetrics().horizontalAdvance("00000 / 00000 sentences") + 24)
        self.eval_bar.hide()
        buttons.addWidget(self.eval_bar)
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
        self.error_label.setObjectName("errorBox")  # coloured by the theme's stylesheet (gui/theme.py)
        self.error_label.hide()
        lay.addWidget(self.error_label)

        vsplit = QSplitter(Qt.Vertical)
        self.plots = LivePlots()
        vsplit.addWidget(self.plots)
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
        self.probe = ProbeView()
        bottom.addWidget(self.probe)
        bottom.setSizes([520, 420])
        vsplit.addWidget(bottom)
        vsplit.setSizes([380, 380])
        lay.addWidget(vsplit, 1)

    # -- model and config files ----------------------------------------------------------------------

    def set_model(self, info: ModelInfo | None) -> None:
        """The window loaded a model: it is what "Fine-tune" starts from."""
        self.form.set_model(info)

    def load_config(self, path: str | Path) -> None:
        cfg = TrainConfig.from_toml(path)  # ConfigError names the file
        self.form.set_form(cfg)
        if cfg.out and (Path(cfg.out) / "last").is_dir() and not self.running:
            self.controller.run_dir = Path(cfg.out)  # a run's own config: Resume continues it
            self.controller.set_state(self.state)

    def open_run(self, folder: str | Path) -> None:
        """Show an earlier run: its config in the form, its events replayed into the plots; Resume continues it."""
        folder = Path(folder)
        self.load_config(folder / "train_config.toml")
        self._reset_live()
        self.controller.replay(folder)

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
            self.form.save_config(path)
            self.statusMessage.emit(f"Saved {path}")

    def _load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load training config", str(Path.home()), "TOML (*.toml)")
        if path:
            try:
                self.load_config(path)
            except ConfigError as exc:
                self._show_error(str(exc))

    # -- running ----------------------------------------------------------------------------------

    def check_data_now(self) -> None:
        """Read the chosen corpora in a thread and show a preview (or the error)."""
        cfg = self.form.form_config()
        self.form.show_checking()
        self.controller.check(cfg)

    def start(self) -> bool:
        """Validate the form and the data, then start a new run; False if it did not get that far."""
        if self.running or self.state == "checking":
            return False
        self._hide_error()
        try:
            cfg = self.form.form_config()
        except ConfigError as exc:
            self._show_error(str(exc))
            return False
        if self.controller.start(cfg, fine_tune=self.form.finetune_radio.isChecked()):
            self.form.show_checking()
            return True
        return False

    def _on_launching(self, cfg: TrainConfig, resume: bool) -> None:
        if not resume:
            self._reset_live()
        short, flags = command_lines(cfg, resume)
        self.form.show_command(short, flags, "\n# (--resume continues OUT/last)" if resume else "")
        self._append_log(f"$ {short}")

    def resume(self) -> bool:
        """Continue the current run folder from its last checkpoint (`--resume`)."""
        if self.running or self.run_dir is None or not (self.run_dir / "last").exists():
            return False
        self._hide_error()
        return self.controller.resume()

    def stop(self) -> None:
        """Ask the child to save a checkpoint and exit (SIGTERM; killed if it does not)."""
        self.controller.stop()

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
        self.controller.shutdown(timeout_ms)

    def _ask_dialog(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text, QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        return answer == QMessageBox.Yes

    def _request_load(self) -> None:
        if self.trained_model:
            self.loadModelRequested.emit(self.trained_model)

    # -- events -----------------------------------------------------------------------------------

    def _reset_live(self) -> None:
        self.plots.reset()
        self.samples_table.setRowCount(0)
        self.probe.reset()
        self.controller.last_step = 0
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("starting…")
        self.eta_label.setText("")
        self._epoch_loss = ""  # "epoch 2 · loss 3.101", kept for the line once the run stops
        self.eta.reset()

    def _on_event(self, ev: dict) -> None:
        kind = ev.get("event")
        step = self.last_step
        plots = self.plots
        if "step" in ev and self.progress.maximum() > 0:
            self.progress.setValue(min(step, self.progress.maximum()))  # the bar and the status say one step
        if kind == "start":
            self.eta.restart()
            self.eta.eval_every = int((ev.get("config") or {}).get("eval_every") or 0)
            total = self.controller.total_steps
            self.progress.setRange(0, int(total or 0) or 0)
            self.progress.setFormat("%v / %m steps" if total else "step %v")
            self.progress.setValue(step)
            what = "resumed" if ev.get("resumed") else "started"
            self._append_log(f"{what} at step {step}: {ev.get('parameters', 0):,} parameters on {ev.get('device')}, "
                             f"{ev.get('train_pairs', 0):,} training pairs, {ev.get('dev_pairs', 0):,} dev pairs, "
                             f"{ev.get('steps_per_epoch')} steps per epoch")
        elif kind == "step":
            plots.add_point("train_loss", step, ev.get("loss"))
            plots.add_point("lr", step, ev.get("lr"))
            plots.add_point("tokens_per_s", step, ev.get("tokens_per_s"))
            total = ev.get("total_steps") or self.controller.total_steps
            if total:
                self.progress.setRange(0, int(total))
            self.progress.setValue(step)
            eta = self.eta.update(step, ev.get("elapsed_s"), total, ev.get("eta_s"))
            self._epoch_loss = f"epoch {ev.get('epoch', 0) + 1} · loss {ev.get('loss', 0):.3f}"
            left = format_time_left(eta)
            if left and not self.eta.pauses_timed:  # training time only: the evaluations still to come are not
                left += ", plus evaluations"  # timed yet (the first one is)
            self.eta_label.setText(self._epoch_loss + (f" · {left}" if left else ""))
        elif kind == "eval_start":
            self.eval_bar.setRange(0, 0)  # busy until the first batch of sentences is decoded (shown by phase)
        elif kind == "eval_progress":
            self.eval_bar.setRange(0, max(1, int(ev.get("total") or 0)))
            self.eval_bar.setValue(int(ev.get("done") or 0))
            self.eval_bar.setFormat("%v / %m sentences")
        elif kind == "eval":
            plots.add_point("dev_loss", step, ev.get("dev_loss"))
            plots.add_point("bleu", step, ev.get("bleu"))
            plots.add_point("chrf", step, ev.get("chrf"))
            self._add_samples(step, ev.get("samples") or [])
            self._append_log(f"step {step}: dev loss {ev.get('dev_loss', 0):.3f}, BLEU {ev.get('bleu', 0):.2f}, "
                             f"chrF {ev.get('chrf', 0):.2f}" + (" (best)" if ev.get("best") else ""))
            if ev.get("probe") and ev["probe"].get("attention") is not None:
                self.probe.show_probe(ev["probe"], step)
        elif kind == "checkpoint":
            self.eta.add_pause(ev.get("pause_s"))
            self.statusMessage.emit(f"Checkpoint saved at step {step}")
        elif kind == "end":
            best = ev.get("best")
            self._append_log(f"finished ({self.controller.end_reason}) at step {step}"
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

    # -- state and messages -------------------------------------------------------------------------

    def _show_state(self, state: str, announce: bool = True) -> None:
        """Buttons and status line for `state` (a running child's phase too); `announce`: emit stateChanged."""
        busy = self.controller.busy
        self.start_button.setEnabled(not busy)
        self.stop_button.setEnabled(state == "running")
        self.resume_button.setEnabled(self.controller.can_resume)
        self.load_model_button.setEnabled(not busy and bool(self.trained_model))
        self.form.setEnabled(not busy)
        run = f" · {self.run_dir.name}" if self.run_dir is not None else ""
        running = {"training": f"Training{run}",
                   "evaluating": f"Evaluating on the dev set at step {self.last_step}…",
                   "saving": f"Saving a checkpoint at step {self.last_step}…"}[self.controller.phase]
        self.eval_bar.setVisible(state == "running" and self.controller.phase == "evaluating")
        text = {"idle": "Ready", "checking": "Checking the data…", "running": running,
                "stopping": "Stopping (saving a checkpoint)…",
                "stopped": f"Stopped at step {self.last_step}{run}: checkpoint kept, Resume continues",
                "finished": f"Finished ({self.controller.end_reason or 'done'}) at step {self.last_step}{run}",
                "failed": f"Failed{run}"}[state]
        self.state_label.setText(text)
        if state not in ("running", "checking"):  # no time left is shown for a run that is not running
            self.eta_label.setText(getattr(self, "_epoch_loss", "") if state != "idle" else "")
        if announce:
            self.stateChanged.emit(state)

    def _show_error(self, text: str) -> None:
        self.error_text = text
        self.error_label.setText(text)
        self.error_label.show()

    def _hide_error(self) -> None:
        self.error_text = ""
        self.error_label.hide()
        self.form.data_error.hide()

    def _append_log(self, line: str) -> None:
        self.log_view.appendPlainText(line)
