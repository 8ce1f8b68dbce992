"""What every subcommand module of the CLI shares: its two error kinds, model lookup and thread
setup. Subcommand modules import these from here, never from `nmt_desktop.cli` (no cycles)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CLIError", "UsageError", "resolve_model", "set_threads"]


class UsageError(Exception):
    """Bad command line: exit code 2."""


class CLIError(Exception):
    """Bad model or input detected by the CLI itself: exit code 1."""


def resolve_model(arg: str | None) -> Path:
    """The model folder or .zip to load for `-m ARG` (None: the single place a default is chosen)."""
    from nmt_desktop.core.locations import ModelNotFoundError, default_model_path, resolve_model_path

    if arg is None:
        default = default_model_path()
        if default is None:
            raise UsageError("no model given and no bundled model installed: use -m MODEL (a model folder or .zip)")
        return default
    try:
        return resolve_model_path(arg)
    except ModelNotFoundError as exc:
        raise CLIError(str(exc)) from None


def set_threads(n: int | None) -> None:
    """torch's intra-op threads for `--threads N` (None: leave torch's default); one inter-op thread."""
    if n is None:
        return
    import torch

    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work has started
        pass
