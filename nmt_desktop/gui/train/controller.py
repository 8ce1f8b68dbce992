"""The Train tab's run controller, without widgets: it owns the `TrainProcess`, checks the data before a
start, follows the run's progress events and keeps the run's state; the panel subscribes to its signals.

States: idle -> checking (the corpora are read in a thread) -> running -> stopping -> stopped | finished |
failed. Start writes the config as `RUN/train_config.toml` and runs `nmt-desktop train --config ... --progress
json`; Stop sends SIGTERM (the child saves `RUN/last`); Resume runs the same command with `--resume`. When a
run ends (or stops) its best model (else its last checkpoint) is announced with `modelReady(path)`.

While running, `phase` says what the child does between step events, which stop for as long as an evaluation
takes: "training", "evaluating" (from its `eval_start` event to its `eval`) or "saving" (to its `checkpoint`);
`phaseChanged` reports each change.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance

from nmt_desktop.core.config import ConfigError, TrainConfig

from ..lifetime import start_thread
from .process import TrainProcess, parse_event

log = logging.getLogger("nmt_desktop.gui.train")

PREVIEW_PAIRS = 5
BUSY_STATES = ("checking", "running", "stopping")
PHASE_AFTER = {"start": "training", "step": "training", "eval_start": "evaluating", "eval_progress": "evaluating",
               "eval": "saving", "checkpoint": "training", "end": "training", "error": "training"}


@dataclasses.dataclass
class DataCheck:
    """The outcome of reading the corpora before a run: preview pairs and one summary line each."""

    preview: list[tuple[str, str]]
    summary: list[str]


def check_data(cfg: TrainConfig) -> DataCheck:
    """Read and validate the run's corpora as the trainer will (CorpusError names file and line)."""
    from nmt_desktop.core.training.corpus import CorpusSpec, read_corpus, split_dev

    if cfg.memory:  # the memory's segments, its dev part, the replay and the general text, as the trainer reads them
        from nmt_desktop.core.memory.segments import pair_segments
        from nmt_desktop.core.training.memory_data import memory_data_for

        data = memory_data_for(cfg, pair_segments)
        return DataCheck(data.train.preview(PREVIEW_PAIRS), data.summary())
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


def emit_safely(signal: SignalInstance, *args: Any) -> None:
    """Emit from a worker thread (queued to the GUI thread); nothing if the receiver was deleted meanwhile."""
    try:
        signal.emit(*args)
    except RuntimeError:
        pass


class TrainController(QObject):
    """One training run at a time: its process, its data check, its state and where its model is."""

    stateChanged = Signal(str)  # idle | checking | running | stopping | stopped | finished | failed
    phaseChanged = Signal(str)  # training | evaluating | saving: what a running child is doing
    event = Signal(dict)  # every progress event, once the controller has taken its step, total and end
    checked = Signal(object, str)  # DataCheck or None, error message: the latest data check
    launching = Signal(object, bool)  # TrainConfig, resume: a child is about to start
    error = Signal(str)  # a message for the panel's error box
    modelReady = Signal(str)  # a run's best (or last) model folder
    trainingFailed = Signal(str)  # one line for the window's error report
    _checkDone = Signal(int, object, str)  # token, DataCheck or None, error (from the check thread)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.state = "idle"
        self.run_dir: Path | None = None
        self.trained_model: str | None = None
        self.last_event: dict[str, Any] | None = None
        self.last_step = 0
        self.total_steps: int | None = None
        self.end_reason: str | None = None
        self.phase = "training"
        self._check_token = 0
        self._pending_start: TrainConfig | None = None
        self.process = TrainProcess(self)
        self.process.event.connect(self._on_event)
        self.process.finished.connect(self._on_finished)
        self._checkDone.connect(self._on_checked)

    @property
    def running(self) -> bool:
        return self.process.running

    @property
    def busy(self) -> bool:
        return self.state in BUSY_STATES

    @property
    def can_resume(self) -> bool:
        return (not self.busy and self.run_dir is not None and (self.run_dir / "last").exists()
                and self.state != "finished")

    def set_state(self, state: str) -> None:
        self.state = state
        self.stateChanged.emit(state)

    # -- data check -------------------------------------------------------------------------------

    def check(self, cfg: TrainConfig) -> None:
        """Read `cfg`'s corpora in a thread; `checked` reports the preview or the error (a start waiting for
        an earlier check is dropped)."""
        self._pending_start = None
        self._run_check(cfg)

    def _run_check(self, cfg: TrainConfig) -> None:
        self._check_token += 1
        token = self._check_token

        def work() -> None:
            try:
                result, error = check_data(cfg), ""
            except Exception as exc:  # noqa: BLE001 - CorpusError, OSError, ...: shown, never raised
                result, error = None, " ".join(str(exc).split()) or type(exc).__name__
            emit_safely(self._checkDone, token, result, error)

        start_thread(work, "train-data-check")

    def _on_checked(self, token: int, result: DataCheck | None, error: str) -> None:
        if token != self._check_token:
            return
        pending, self._pending_start = self._pending_start, None
        self.checked.emit(result, error)
        if pending is None:
            return
        if result is None:
            self.error.emit(f"The data cannot be used: {error}")
            self.set_state("idle")
            return
        if not pending.probe and result.preview:
            pending = dataclasses.replace(pending, probe=result.preview[0][0])
        self._launch(pending, resume=False)

    # -- running ----------------------------------------------------------------------------------

    def start(self, cfg: TrainConfig, fine_tune: bool = False) -> bool:
        """Validate `cfg`, check its data, then start a new run; False (and `error`) if it did not get that far.
        `fine_tune`: the user chose to fine-tune, so `cfg.from_model` must name the loaded model."""
        if self.running or self.state == "checking":
            return False
        try:
            if not cfg.train and not (cfg.train_src and cfg.train_tgt) and not cfg.memory:
                raise ConfigError("choose the training data first")
            cfg.validate()
        except ConfigError as exc:
            self.error.emit(str(exc))
            return False
        if fine_tune and not cfg.from_model:
            self.error.emit("No model is loaded to fine-tune: load one on the Models tab, or choose From scratch.")
            return False
        if (Path(cfg.out) / "last").exists():
            self.error.emit(f"{cfg.out} already holds a training run: press Resume to continue it, "
                            f"or clear the run folder field for a new one.")
            return False
        self._pending_start = cfg
        self.set_state("checking")
        self._run_check(cfg)
        return True

    def _launch(self, cfg: TrainConfig, resume: bool) -> None:
        run = Path(cfg.out)
        try:
            run.mkdir(parents=True, exist_ok=True)
            (run / "train_config.toml").write_text(cfg.to_toml(), encoding="utf-8")
        except OSError as exc:
            self.error.emit(f"Cannot create the run folder {run}: {exc.strerror or exc}")
            self.set_state("idle")
            return
        self.run_dir = run
        self.trained_model = None
        self.end_reason = None
        if not resume:
            self.last_step = 0
        self.launching.emit(cfg, resume)
        self.process.start(run / "train_config.toml", resume=resume)
        self.set_state("running")

    def resume(self) -> bool:
        """Continue the current run folder from its last checkpoint (`--resume`)."""
        if self.running or self.run_dir is None or not (self.run_dir / "last").exists():
            return False
        try:
            cfg = TrainConfig.from_toml(self.run_dir / "train_config.toml")
        except ConfigError as exc:
            self.error.emit(str(exc))
            return False
        self._launch(dataclasses.replace(cfg, out=str(self.run_dir), progress="json"), resume=True)
        return True

    def stop(self) -> None:
        """Ask the child to save a checkpoint and exit (SIGTERM; killed if it does not)."""
        if self.running:
            self.process.stop()
            self.set_state("stopping")

    def shutdown(self, timeout_ms: int = 60000) -> None:
        """Stop the child and wait for it (idempotent); a start still checking its data is dropped."""
        self._pending_start = None
        self._check_token += 1
        if self.state == "checking":
            self.set_state("idle")
        if self.running:
            self.process.stop()
            self.process.wait(timeout_ms)

    def replay(self, folder: Path) -> None:
        """Show an earlier run: its recorded events again (`event`), its model, and a state Resume can continue."""
        self.run_dir = folder
        self.last_step = 0
        self.end_reason = None
        try:
            lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        for line in lines:
            ev = parse_event(line)
            if ev is not None:
                self._on_event(ev)
        self.trained_model = self.run_model()
        done = self.end_reason not in (None, "interrupted")  # it reached a limit: nothing to resume
        self.set_state("finished" if done else "idle")

    # -- the child's events and end ---------------------------------------------------------------

    def _on_event(self, ev: dict) -> None:
        kind = ev.get("event")
        self.last_event = ev
        self.last_step = int(ev.get("step", 0) or 0)
        if kind == "start":
            self.total_steps = ev.get("total_steps")
        elif kind == "end":
            self.end_reason = ev.get("reason")
        self._set_phase(PHASE_AFTER.get(kind, self.phase))
        self.event.emit(ev)

    def _set_phase(self, phase: str) -> None:
        if phase != self.phase:
            self.phase = phase
            self.phaseChanged.emit(phase)

    def _on_finished(self, code: int, crashed: bool) -> None:
        stopped = self.process.stop_requested
        self._set_phase("training")  # a child killed while evaluating says no more
        log.info("training process ended: exit code %s%s%s", code, ", crashed" if crashed else "",
                 ", stop requested" if stopped else "")
        if code == 0 and not crashed:
            self.set_state("stopped" if stopped or self.end_reason == "interrupted" else "finished")
        elif stopped:  # killed after the timeout, or stopped before the child could save: the last checkpoint
            self.set_state("stopped")  # (if any) is kept
        else:
            message = self.process.last_error or (
                f"the training process {'crashed' if crashed else 'exited with code ' + str(code)}")
            # the child's last stderr lines, less the one that repeats its error event's sentence (it said it twice)
            said = self.process.last_error
            tail = [line for line in list(self.process.stderr_tail)[-8:] if not said or said not in line]
            self.error.emit(f"Training failed: {message}" + ("\n" + "\n".join(tail) if tail else ""))
            self.set_state("failed")
            self.trainingFailed.emit(message)
        model = self.run_model()
        if model is not None and self.state in ("stopped", "finished"):
            self.trained_model = model
            self.modelReady.emit(model)
        self.set_state(self.state)  # the buttons follow trained_model

    def run_model(self) -> str | None:
        """The run's best model folder, else its last checkpoint (None before either exists)."""
        if self.run_dir is None:
            return None
        for name in ("best", "last"):
            if (self.run_dir / name / "config.json").is_file():
                return str(self.run_dir / name)
        return None
