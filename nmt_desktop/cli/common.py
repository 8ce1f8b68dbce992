"""What the CLI's command modules share: the two error kinds, model lookup, thread setup, argparse
types and console output. Command modules import these from here, never from `nmt_desktop.cli` or
`cli/main.py` (no cycles; pyproject.toml's import contracts check it)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Callable, Iterator, Sequence

from nmt_desktop.core.analysis.head_names import (HeadNameError, HeadRef, Want, check_head_refs, parse_head_ref,
                                                 parse_head_refs)

__all__ = ["PROG", "DEFAULT_BATCH_SIZE", "MODEL_HELP", "HUB_NOTE", "CLIError", "UsageError", "resolve_model",
           "set_threads", "naming_model", "int_at_least", "positive_int", "non_negative_int", "head_names", "head_name",
           "checked_heads", "one_line", "print_error", "utf8_stdout", "fix_arg"]

PROG = "nmt-desktop"
DEFAULT_BATCH_SIZE = 16  # sentences translated together by `translate` and `heads`
MODEL_HELP = ("model folder or .zip, a training run's folder (its best model), or the name of an installed model "
              "(required)")  # -m of translate, info, heads
HUB_NOTE = ("Models come from the Hugging Face Hub (HF_ENDPOINT overrides the address; HF_TOKEN or "
            "`hf auth login` for private models; HF_HUB_OFFLINE=1 never contacts it).")  # `models`, `pull` help


class UsageError(Exception):
    """Bad command line: exit code 2."""


class CLIError(Exception):
    """Bad model or input detected by the CLI itself: exit code 1."""


# --- models and threads --------------------------------------------------------------------------

def resolve_model(arg: str | None) -> Path:
    """The model folder or .zip to load for `-m ARG` (None: the single place a default is chosen)."""
    from nmt_desktop.core.locations import ModelNotFoundError, default_model_path, resolve_model_path

    if arg is None:
        default = default_model_path()
        if default is None:
            raise UsageError("no model given and no bundled model installed: use -m MODEL (a model folder or .zip)")
        return default
    try:
        return resolve_model_path(arg, say=lambda line: print(line, file=sys.stderr))
    except ModelNotFoundError as exc:
        raise CLIError(str(exc)) from None


@contextlib.contextmanager
def naming_model(path: Path) -> Iterator[None]:
    """Say which model a ModelFolderError is about when its message names only a file inside it."""
    from nmt_desktop.core.formats.folder_files import ModelFolderError

    try:
        yield
    except ModelFolderError as exc:
        if str(path) in str(exc):
            raise
        raise CLIError(f"model '{path}': {exc}") from exc


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


# --- argparse types ------------------------------------------------------------------------------

def int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer >= `minimum`, else "expected a `what` integer, got ..."."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}")
        return value
    return parse


positive_int = int_at_least(1, "positive")
non_negative_int = int_at_least(0, "non-negative")


def head_names(flag: str, want: Want = "any") -> Callable[[str], list[HeadRef]]:
    """An argparse type: decoder layers/heads written like `L3H2,L1` (counted from 1; core/analysis/head_names.py).

    A bad or old 0-based spelling ("2:1") raises UsageError with the parser's own sentence naming `flag`
    (argparse would prefix "argument FLAG:" to an ArgumentTypeError)."""
    def parse(text: str) -> list[HeadRef]:
        try:
            return parse_head_refs(fix_arg(text), flag, want)
        except HeadNameError as exc:
            raise UsageError(str(exc)) from None
    return parse


def head_name(flag: str, want: Want = "any") -> Callable[[str], HeadRef]:
    """An argparse type: one decoder layer or head written like `L3H2` or `L3` (see head_names)."""
    def parse(text: str) -> HeadRef:
        try:
            return parse_head_ref(fix_arg(text), flag, want)
        except HeadNameError as exc:
            raise UsageError(str(exc)) from None
    return parse


def checked_heads(refs: Sequence[HeadRef], flag: str, layers: int, heads: int) -> None:
    """UsageError naming the first of `refs` outside a model of `layers` x `heads` (the sentence of head_names.py)."""
    try:
        check_head_refs(refs, flag, layers, heads)
    except HeadNameError as exc:
        raise UsageError(str(exc)) from None


# --- console text --------------------------------------------------------------------------------

def one_line(text: str) -> str:
    return " ".join(str(text).split()) or "unknown error"


def print_error(message: str) -> None:
    """`nmt-desktop: error: MESSAGE` as one line on stderr."""
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr, flush=True)


def utf8_stdout() -> None:
    """Write UTF-8 whatever the console's code page (never crash on a character)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def fix_arg(text: str) -> str:
    """An argv string with undecodable bytes (surrogate-escaped on POSIX) -> valid Unicode."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
