"""The `nmt-desktop train` flag of each `TrainConfig` field, and a config as a command line: one
spelling shared by the CLI's parser and the Train tab's "copy as command" (the GUI never imports
the CLI)."""

from __future__ import annotations

import dataclasses
import shlex

from nmt_desktop.core.config import TrainConfig

__all__ = ["train_flag", "train_command_line"]

_FLAG_NAMES = {"from_model": "--from"}  # fields whose flag is not --field-name


def train_flag(name: str) -> str:
    """`warmup_steps` -> `--warmup-steps`; `from_model` -> `--from`."""
    return _FLAG_NAMES.get(name, "--" + name.replace("_", "-"))


def train_command_line(cfg: TrainConfig) -> str:
    """`nmt-desktop train --flag value ...`: every field that differs from the defaults (shell-quoted)."""
    defaults = TrainConfig()
    parts = ["nmt-desktop", "train"]
    for f in dataclasses.fields(TrainConfig):
        value = getattr(cfg, f.name)
        if value == getattr(defaults, f.name) or value is None or f.name == "progress":
            continue
        if isinstance(value, bool):
            parts.append(train_flag(f.name) if value else "--no-" + train_flag(f.name)[2:])
        else:
            parts += [train_flag(f.name), shlex.quote(str(value))]
    return " ".join(parts)
