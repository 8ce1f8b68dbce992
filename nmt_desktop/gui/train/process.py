"""`nmt-desktop train` as a child process (`QProcess`) reporting JSON lines.

The GUI trains through exactly the command a terminal runs:

    python -m nmt_desktop train --config RUN/train_config.toml [--resume] --progress json

(in a packaged app: `nmt-desktop train ...`, the app binary itself; see `core.locations.cli_command`).

stdout is read line by line (gui/child_process.py, shared with the local server's child): a line holding
a JSON object with an "event" key becomes an `event(dict)` signal; anything else, and every stderr
line, goes to `logLine(str)`. `stop()` sends SIGTERM (the child saves `RUN/last` and exits 0) and
kills the child if it has not exited after a timeout. A crash of the child never reaches the window:
`finished(exit_code, crashed)` reports it, with the last stderr lines kept in `stderr_tail`.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from nmt_desktop.core.config import TrainConfig
from nmt_desktop.core.locations import cli_command
from nmt_desktop.core.training.train_flags import train_command_line

from ..child_process import EventProcess, LineBuffer, parse_event  # noqa: F401 (re-export: the controller, tests)


def train_command(config_path: str | os.PathLike, resume: bool = False) -> list[str]:
    """The `train` arguments (after `nmt-desktop`) for a run described by a TOML file."""
    args = ["train", "--config", str(config_path)]
    if resume:
        args.append("--resume")
    return args + ["--progress", "json"]


def flag_command(cfg: TrainConfig) -> str:
    """`nmt-desktop train --flag value ... --progress json`: what the Train tab runs, as flags."""
    return train_command_line(cfg) + " --progress json"


def command_lines(cfg: TrainConfig, resume: bool = False) -> tuple[str, str]:
    """(`nmt-desktop train --config RUN/train_config.toml ...`, the same run as flags)."""
    toml = Path(cfg.out or "RUN") / "train_config.toml"
    short = " ".join(["nmt-desktop", *(shlex.quote(a) for a in train_command(toml, resume))])
    return short, flag_command(cfg)


class TrainProcess(EventProcess):
    """One `train` child at a time; signals arrive on the GUI thread (QProcess is event driven)."""

    event = Signal(dict)
    logLine = Signal(str)  # non-JSON stdout lines and stderr lines
    started = Signal()
    finished = Signal(int, bool)  # exit code, crashed (killed or died of a signal)

    def __init__(self, parent: QObject | None = None, kill_timeout_ms: int = 20000):
        super().__init__(parent, kill_timeout_ms)
        self.last_error: str | None = None  # message of the child's `error` event

    @property
    def program(self) -> str:
        return cli_command()[0]

    def arguments(self, config_path: str | os.PathLike, resume: bool = False) -> list[str]:
        return cli_command(*train_command(config_path, resume))[1:]

    def start(self, config_path: str | os.PathLike, resume: bool = False, workdir: str | None = None) -> None:
        if self.running:
            raise RuntimeError("a training process is already running")
        self.last_error = None
        self.launch(train_command(config_path, resume), workdir)

    def on_started(self) -> None:
        self.started.emit()

    def on_event(self, event: dict[str, Any]) -> None:
        if event["event"] == "error":
            self.last_error = str(event.get("message", ""))
        self.event.emit(event)

    def on_text(self, line: str) -> None:
        self.logLine.emit(line)

    def on_stderr(self, line: str) -> None:
        self.logLine.emit(line)

    def on_failed_to_start(self, message: str) -> None:
        self.stderr_tail.append(message)
        self.logLine.emit(message)
        self.finished.emit(-1, True)

    def on_exit(self, exit_code: int, crashed: bool) -> None:
        self.finished.emit(exit_code, crashed)
