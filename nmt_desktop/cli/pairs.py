"""What `score`, `align` and `explain` share: sentence pairs read one per line, scored in batches by teacher forcing.

A line is `source<TAB>target`, or `source ||| target` as fast_align and awesome-align read it. A bad
line (no separator, an empty side, a pair too long for the model) is reported on stderr as one
sentence naming the input and its line number, and keeps its place in the output (the command writes
a placeholder for it), so output line i is always input pair i; the rest goes on and the command
exits 1 at the end.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from nmt_desktop.cli.common import (CLIError, Progress, batches, print_error, stdin_lines,
                                    utf8_stdout)

SEPARATORS = ("\t", " ||| ")
# core/analysis/attribution.METHODS, spelt out so that --help of explain and align imports no numpy or torch
# (tests/cli/test_cli_explain.py keeps them equal)
ATTRIBUTION_METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention_rollout",
                       "attention", "alti_plus", "value_zeroing")
INPUT_HELP = "sentence pairs, one per line: source<TAB>target or source ||| target (default: read stdin)"


@dataclass
class PairLine:
    """One input line: its 1-based number, the two sides, and why it cannot be used (None: it can)."""

    number: int
    source: str = ""
    target: str = ""
    error: str | None = None


@dataclass
class ScoredPair:
    """A line and its scored Translations, one per model (`score_lines`); none when the line failed."""

    line: PairLine
    translations: list[Any] = field(default_factory=list)
    error: str | None = None


def split_pair(text: str, number: int) -> PairLine:
    """`source<TAB>target` or `source ||| target` -> PairLine (stripped sides), its error set when the line
    is not one pair of non-empty sides."""
    sep = next((s for s in SEPARATORS if s in text), None)
    if sep is None:
        reason = "the line is empty" if not text.strip() else "no tab or ' ||| ' between source and target"
        return PairLine(number, error=reason)
    parts = [p.strip() for p in text.split(sep)]
    if len(parts) != 2:
        name = "tab" if sep == "\t" else "' ||| '"
        return PairLine(number, error=f"{len(parts) - 1} separators ({name}) where one separates source and target")
    source, target = parts
    error = "the source is empty" if not source else "the target is empty" if not target else None
    return PairLine(number, source, target, error)


def source_line(text: str, number: int) -> PairLine:
    """A line of source text only (`explain --translate`, `qe --translate`): the whole line, stripped, is the
    source, and there is no target."""
    source = text.strip()
    return PairLine(number, source, "", None if source else "the line is empty")


def open_pairs(path: str | None, parse: Callable[[str, int], PairLine] | None = None
               ) -> tuple[str, Iterator[PairLine], bool]:
    """(name for messages, the lines as PairLines, interactive): the file `path` (read here, so a missing
    file fails before the model loads), else stdin. `parse` (text, line number) -> PairLine: `split_pair`
    unless given (explain --translate reads source lines)."""
    parse = parse or split_pair
    if path is None:
        stream: Iterable[str] = stdin_lines(sys.stdin.buffer)
        where, interactive = "stdin", sys.stdin.isatty()
    else:
        try:
            with open(path, "rb") as f:
                stream = list(stdin_lines(f))
        except OSError as exc:
            raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
        where, interactive = path, False
    return where, (parse(text, n) for n, text in enumerate(stream, 1)), interactive


def _score_each(translator: Any, pairs: list[tuple[str, str]], cfg: Any, batch_size: int) -> list[Any]:
    """A Translation per pair, or the error message (str) of a pair the model cannot score."""
    from nmt_desktop.core.decoding.document import InputTooLongError

    try:
        return list(translator.score_batch(pairs, cfg, batch_size))
    except (InputTooLongError, ValueError):
        pass
    out: list[Any] = []
    for pair in pairs:  # find the culprits one by one
        try:
            out.append(translator.score(*pair, cfg))
        except (InputTooLongError, ValueError) as exc:
            out.append(str(exc))
    return out


def score_lines(models: Sequence[tuple[Any, bool, str]], lines: Iterable[PairLine], cfg: Any,
                batch_size: int, progress: Progress) -> Iterator[ScoredPair]:
    """Each line scored by each model, in input order. models: (translator, reversed, name); a reversed
    model scores (target, source); `name` prefixes its errors ("" for the main model)."""
    for batch in batches(lines, batch_size):
        scored = [ScoredPair(line, error=line.error) for line in batch]
        for translator, reverse, name in models:
            live = [s for s in scored if s.error is None]
            pairs = [(s.line.target, s.line.source) if reverse else (s.line.source, s.line.target) for s in live]
            for s, result in zip(live, _score_each(translator, pairs, cfg, batch_size)):
                if isinstance(result, str):
                    s.error, s.translations = f"{name}{result}", []
                else:
                    s.translations.append(result)
        yield from scored
        progress.update(len(batch))


def add_pair_input(p: argparse.ArgumentParser) -> None:
    """The input argument of `score` and `align`."""
    p.add_argument("input", nargs="?", metavar="FILE", help=INPUT_HELP)


def run_pairs(lines: tuple[str, Iterator[PairLine], bool], models: Sequence[tuple[Any, bool, str]], cfg: Any,
              batch_size: int, emit: Callable[[ScoredPair], str]) -> int:
    """Score the lines (`open_pairs`) with `models` and write `emit(scored)` as one output line per input
    line; a failed line's error goes to stderr. `emit` writes a failed line's placeholder when
    `scored.error` is set, and may raise ValueError for a line it cannot write (the line then fails
    like one the model could not score). Returns the number of failed lines."""
    where, pair_lines, interactive = lines
    utf8_stdout()
    batch_size = 1 if interactive else batch_size
    progress = Progress(sys.stderr.isatty() and not interactive)
    failures = 0
    try:
        for scored in score_lines(models, pair_lines, cfg, batch_size, progress):
            try:
                text = emit(scored)
            except ValueError as exc:  # e.g. align: the tokens do not match the given words
                scored.error, scored.translations = str(exc), []
                text = emit(scored)
            if scored.error is not None:
                failures += 1
                sys.stdout.flush()
                print_error(f"{where} line {scored.line.number}: {scored.error}")
            sys.stdout.write(text + "\n")
            if interactive or scored.line.number % batch_size == 0:
                sys.stdout.flush()
    finally:
        progress.close()
        sys.stdout.flush()
    return failures
