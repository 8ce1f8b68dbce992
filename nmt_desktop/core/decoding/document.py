"""Document translation: the one policy that cuts a text into the units the model translates.

The CLI (`Translator.translate_batch` over input lines) and the GUI (`Translator.stream_document` over
the editor's text) both follow it, so a text translates the same way in both:

- each line (paragraph) is translated on its own, so the output keeps the text's line structure;
- a line that fits the model (`max_positions` source tokens) is one unit, translated whole;
- a longer line is cut at sentence ends (`split_sentences`), each sentence a unit, and their
  translations are joined with a space; a sentence that still does not fit is refused
  (`InputTooLongError`);
- an empty (or blank) line has no unit: its translation is empty, and the line stays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

if TYPE_CHECKING:
    import torch

    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Step, Translation, TranslationStream, Translator
    from nmt_desktop.core.model.transformer import HeadOverride


class InputTooLongError(ValueError):
    """A sentence has more tokens than the model's max_positions and cannot be split further."""


_SENTENCE_END = re.compile(r"(?<=[.!?;:…。！？；])\s+|(?<=[。！？])")


def split_sentences(text: str) -> list[str]:
    """Split at sentence-final punctuation followed by space (or CJK full stops)."""
    return [p for p in (s.strip() for s in _SENTENCE_END.split(text)) if p]


def document_lines(text: str) -> list[str]:
    """The lines of a text ("\\n", "\\r\\n"); a final line end does not start another, empty line."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return lines[:-1] if len(lines) > 1 and text.endswith("\n") else lines


def check_length(ids: Sequence[int], text: str, limit: int) -> None:
    """InputTooLongError unless `ids` (the source ids of `text`) fit a model of `limit` positions."""
    if len(ids) > limit:
        raise InputTooLongError(
            f"the sentence \"{_shorten(text)}\" has {len(ids)} tokens but this model accepts at most "
            f"{limit}; split it into shorter sentences")


def line_units(line: str, source_ids: Callable[[str], list[int]], limit: int) -> list[tuple[str, list[int]]]:
    """The units of one line as (text, source ids): the line itself if it fits, else its sentences;
    none for a blank line."""
    if not line.strip():
        return []
    ids = source_ids(line)
    if len(ids) <= limit:
        return [(line, ids)]
    units = [(part, source_ids(part)) for part in split_sentences(line)]
    for part, part_ids in units:
        check_length(part_ids, part, limit)
    return units


@dataclass
class Unit:
    """One piece of a document the model translates in one go: a line, or a sentence of a long line."""

    line: int  # index of the document line it belongs to
    text: str
    source_ids: list[int]
    source_tokens: list[str]  # readable source pieces, as `Translation.source_tokens`


class DocumentStream:
    """A whole text decoded unit by unit: iterate for `(unit index, Step)` pairs as tokens are chosen.

    `units` is known (and every unit checked against the model's length) before decoding starts;
    `results` holds each unit's `Translation` once it is finished, `translations()` the text's lines
    as `translate_batch` gives them. Steps are the core's own plain data, fresh for every step:
    they may be handed to another thread as they are. `close()` (or leaving the loop) stops.
    """

    def __init__(self, translator: Translator, text: str, cfg: DecodeConfig,
                 head_mask: torch.Tensor | None = None, prefix: Sequence[int] | None = None,
                 prefix_text: str | None = None, head_override: HeadOverride | None = None):
        self.translator, self.cfg = translator, cfg
        self.hooks = dict(head_mask=head_mask, prefix=prefix, prefix_text=prefix_text, head_override=head_override)
        self.lines = document_lines(text)
        limit = translator.config.max_positions
        self.units = [Unit(n, part, ids, translator.source_pieces(ids)) for n, line in enumerate(self.lines)
                      for part, ids in line_units(line, translator.source_ids, limit)]
        self.results: list[Translation | None] = [None] * len(self.units)
        self._stream: TranslationStream | None = None
        self._closed = False

    def close(self) -> None:
        self._closed = True
        if self._stream is not None:
            self._stream.close()

    def __iter__(self) -> Iterator[tuple[int, Step]]:
        for i, unit in enumerate(self.units):
            if self._closed:
                return
            self._stream = self.translator.stream(unit.text, self.cfg, **self.hooks)
            for step in self._stream:
                if self._closed:
                    return
                yield i, step
            if self._closed or self._stream.result is None:
                return
            self.results[i] = self._stream.result

    @property
    def finished(self) -> bool:
        return all(r is not None for r in self.results)

    def translations(self) -> list[Translation]:
        """One Translation per line (a split line's sentences joined), once every unit is finished."""
        if not self.finished:
            raise RuntimeError("the document is not translated yet")
        parts: list[list[Translation]] = [[] for _ in self.lines]
        for unit, result in zip(self.units, self.results):
            parts[unit.line].append(result)  # type: ignore[arg-type]  (finished: no None left)
        return [self.translator._join(line, p) for line, p in zip(self.lines, parts)]


def _shorten(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
