"""What the CLI's command modules share: the two error kinds, model lookup, thread setup, argparse
types and console output. Command modules import these from here, never from `nmt_desktop.cli` or
`cli/main.py` (no cycles; pyproject.toml's import contracts check it)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Sequence, TypeVar

from nmt_desktop.core.analysis.head_names import (HeadNameError, HeadRef, Want, check_head_refs, parse_head_ref,
                                                 parse_head_refs)

__all__ = ["PROG", "DEFAULT_BATCH_SIZE", "MODEL_HELP", "HUB_NOTE", "CLIError", "UsageError", "resolve_model",
           "set_threads", "naming_model", "BACKENDS", "add_target_lang_option", "add_running_options", "load_translator",
           "choose_target_language", "int_at_least", "positive_int", "non_negative_int", "head_names", "head_name",
           "checked_heads", "align_method", "one_line", "print_error", "utf8_stdout", "fix_arg", "stdin_lines", "batches", "Progress"]

PROG = "nmt-desktop"
# core/decoding/backend_choice.BACKENDS, spelt out so that --help does not import torch (a test keeps them equal)
BACKENDS = ("auto", "reference", "python", "compiled")
PROGRESS_MIN_LINES = 50  # show a progress bar (stderr is a terminal) once this many lines are done
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
    from nmt_desktop.core.formats.model_folder_layout import ModelFolderError

    try:
        yield
    except ModelFolderError as exc:
        if str(path) in str(exc):
            raise
        raise CLIError(f"model '{path}': {exc}") from exc


def set_threads(n: int | None) -> None:
    """torch's intra-op threads for `--threads N` (None: core/decoding/threads.py's policy, the cores not
    busy with other work, read again between a long job's batches: torch's one per core collapsed beside
    busy processes, issue 42); one inter-op thread."""
    import torch

    if n is None:
        from nmt_desktop.core.decoding.threads import follow_load, start_decoding

        if start_decoding() is not None:  # None: OMP_NUM_THREADS is the user's word
            follow_load()
    else:
        torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work has started
        pass


def add_target_lang_option(p: argparse.ArgumentParser) -> None:
    """--target-lang of the commands that run a model."""
    p.add_argument("--target-lang", metavar="CODE",
                   help="multilingual models (e.g. OPUS-MT en-ROMANCE): the target language, as fra or >>fra<<; "
                        "its token starts every input that does not start with one ('info' lists the codes)")


def add_running_options(p: argparse.ArgumentParser, batched: str) -> None:
    """The "running" group of the commands that decode or score: --batch-size (`batched`: "stdin lines
    translated"), --threads, --int8, --backend."""
    r = p.add_argument_group("running")
    r.add_argument("--batch-size", type=positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"{batched} together (default {DEFAULT_BATCH_SIZE}; 1 when stdin is a terminal)")
    r.add_argument("--threads", type=positive_int, default=None, metavar="N", help="CPU threads for torch")
    r.add_argument("--int8", action="store_true",
                   help="int8 linear layers (CPU; faster, logits change by ~2%%; see the user guide, docs/guide/command-line.md)")
    r.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where decoding runs: compiled (the C++ step), python (the same step in torch) or reference "
                        "(the model's own layers, which --ablate always uses); auto takes compiled where it applies, "
                        "else python, and NMT_DESKTOP_BACKEND can name one (default auto)")


def load_translator(model: str | None, args: argparse.Namespace, target_lang: str | None = None) -> Any:
    """The Translator for `-m MODEL` with add_running_options' --int8/--backend (threads set first) and
    `target_lang` (--target-lang; a code the model lacks is a usage error)."""
    model_path = resolve_model(model)
    set_threads(args.threads)
    from nmt_desktop.core.decoding.translator import Translator

    with naming_model(model_path):
        translator = Translator.load(model_path, int8=args.int8, backend=args.backend)
    if target_lang is not None:
        choose_target_language(translator, fix_arg(target_lang))
    return translator


def choose_target_language(translator: Any, code: str) -> None:
    """Set --target-lang on the translator; a model without that code is a usage error."""
    from nmt_desktop.core.decoding.translator import TargetLanguageError

    try:
        translator.target_language = translator.language_token(code)
    except TargetLanguageError as exc:
        raise UsageError(f"--target-lang: {exc}") from None


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


def align_method(translator: Any, reading: str | None = None, layer: tuple[str, HeadRef] | None = None,
                 heads: tuple[str, Sequence[HeadRef]] | None = None, decision: str | None = None,
                 threshold: float | None = None) -> Any:
    """The model's default alignment reading (`alignment.default_method`) with the options given (None:
    the default's). layer / heads: (flag, refs) as parsed, checked against the model, for the attention the
    reading reads or mixes in; a layer averages its heads. UsageError for a layer or head the model lacks,
    or for a reading that reads no attention."""
    import dataclasses

    from nmt_desktop.core.analysis.alignment import default_method

    layers, n_heads = translator.config.decoder_layers, translator.config.n_heads
    method = default_method(translator.card, layers)
    changes: dict[str, Any] = {}
    if layer is not None:
        checked_heads([layer[1]], layer[0], layers, n_heads)
        changes.update(layer=layer[1].layer, heads=None)
    if heads is not None:
        checked_heads(heads[1], heads[0], layers, n_heads)
        from nmt_desktop.core.analysis.head_names import expand_heads

        changes["heads"] = tuple(expand_heads(heads[1], n_heads))
    for name, value in (("reading", reading), ("decision", decision), ("threshold", threshold)):
        if value is not None:
            changes[name] = value
    chosen = dataclasses.replace(method, **changes)
    if (layer or heads) and not (chosen.uses_attention or getattr(chosen, "attention_weight", 0)):
        flag = (layer or heads)[0]  # type: ignore[index]
        raise UsageError(f"{flag} applies only to readings that use attention (shift, predict, or {chosen.reading} "
                         "with attention mixed in); this one reads none")
    return chosen


# --- console text --------------------------------------------------------------------------------

def one_line(text: str) -> str:
    return " ".join(str(text).split()) or "unknown error"


def print_error(message: str) -> None:
    """`nmt-desktop: error: MESSAGE` as one line on stderr."""
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr, flush=True)


def print_warning(message: str) -> None:
    """`nmt-desktop: warning: MESSAGE` as one line on stderr: said, and the command goes on."""
    print(f"{PROG}: warning: {one_line(message)}", file=sys.stderr, flush=True)


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


# --- input lines and progress --------------------------------------------------------------------

T = TypeVar("T")


def stdin_lines(stream: BinaryIO) -> Iterator[str]:
    """Lines of a byte stream as text: UTF-8 (bad bytes replaced), only the trailing newline removed."""
    for raw in stream:
        if raw.endswith(b"\r\n"):
            raw = raw[:-2]
        elif raw.endswith(b"\n"):
            raw = raw[:-1]
        yield raw.decode("utf-8", errors="replace")


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of `size` (the last one shorter), read lazily (stdin keeps streaming)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class Progress:
    """A tqdm bar on stderr, shown only on a terminal and only once enough lines were done."""

    def __init__(self, enabled: bool):
        self.enabled, self.count, self.bar = enabled, 0, None

    def update(self, n: int) -> None:
        self.count += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled and self.count > PROGRESS_MIN_LINES:
            from tqdm import tqdm

            self.bar = tqdm(initial=self.count, unit="line", file=sys.stderr, leave=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
