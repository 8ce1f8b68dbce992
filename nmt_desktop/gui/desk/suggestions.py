"""The desk's suggestions, found on a worker thread so the table shows at once whatever the file's size: first
the translation memory's best match of every segment (its own SQLite connection: a connection belongs to the
thread that made it), then, for the segments whose best match scores below `MACHINE_BELOW`, the model's own
translation with its trust estimate (core/analysis/quality.py `estimate_pairs`, as translate-file's review
uses it: band, estimated chrF, flagged words), a batch at a time so Stop takes effect between batches."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from PySide6.QtCore import QObject, Signal, Slot

from nmt_desktop.gui.decode_threads import end_decoding, start_decoding
from nmt_desktop.gui.workers import one_line

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.memory.entries import Pair

log = logging.getLogger("nmt_desktop.gui.desk.suggestions")

MACHINE_BELOW = 75.0  # a memory match scoring less than this is replaced by the model's translation
MEMORY_BATCH = 200  # lookups sent to the table at a time
MACHINE_BATCH = 8  # segments translated and estimated at a time (Stop waits for one batch at most)


def model_fits(model: tuple[str, str], file: tuple[str, str]) -> bool:
    """Whether a model of (source, target) languages translates a file of (source, target): the same base
    languages, a language either leaves unnamed taken to fit (a German model's suggestions for a French file
    help nobody)."""
    def base(code: str) -> str:
        return code.replace("_", "-").split("-")[0].casefold()

    return all(not mine or not theirs or base(mine) == base(theirs) for mine, theirs in zip(model, file))


@dataclass(frozen=True)
class Suggestion:
    """What the desk suggests for the segment in table row `row`.

    origin: "memory" or "machine". score: the memory match's similarity 0-100 (None for the machine).
    trust/qe: the machine translation's trust band and estimated chrF ("" and None for a memory match).
    flagged: the words the trust estimate flags (target words doubted, unsupported or repeated; source words
    it may leave out), each with its kind."""
    row: int
    text: str
    origin: str
    score: float | None = None
    trust: str = ""
    qe: float | None = None
    flagged: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """"memory 87%" or "machine": where the suggestion comes from, for its column."""
        return f"memory {self.score:.0f}%" if self.origin == "memory" else "machine"


@dataclass(frozen=True)
class SuggestionRequest:
    """The segments to suggest for: (row, source) of each, the memory file and the file's pair (None: no
    lookups), the translator (None: memory only), and the rows confirmed meanwhile (the desk adds to the set;
    the model skips them: a suggestion for a confirmed segment is work for nobody)."""
    segments: Sequence[tuple[int, str]]
    memory_path: Path
    pair: Pair | None
    translator: Translator | None
    confirmed: set[int] = field(default_factory=set)


class SuggestionWorker(QObject):
    """Runs one `SuggestionRequest` at a time on its thread: `found(list[Suggestion])` a batch at a time,
    `progress(stage, done, total)` with stage "memory" or "machine", then `finished(stopped)`, or `failed`
    with one sentence. `stop()` may be called from any thread."""

    found = Signal(object)
    progress = Signal(str, int, int)
    finished = Signal(bool)
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    @Slot(object)
    def run(self, request: SuggestionRequest) -> None:
        self._stop.clear()
        try:
            best = self._memory(request)
            if request.translator is not None and not self._stop.is_set():
                self._machine(request, [(r, s) for r, s in request.segments if best.get(r, 0.0) < MACHINE_BELOW])
        except Exception as exc:  # noqa: BLE001 - one sentence in the desk's status bar
            log.exception("desk suggestions failed")
            self.failed.emit(one_line(exc))
            return
        self.finished.emit(self._stop.is_set())

    def _memory(self, request: SuggestionRequest) -> dict[int, float]:
        """Look every segment up; the best score of each row that has a match."""
        from nmt_desktop.core.memory.store import TranslationMemory

        best: dict[int, float] = {}
        if request.pair is None:
            return best
        total = len(request.segments)
        with TranslationMemory(request.memory_path) as memory:
            for start in range(0, total, MEMORY_BATCH):
                if self._stop.is_set():
                    break
                batch = []
                for row, source in request.segments[start: start + MEMORY_BATCH]:
                    match = memory.search(source, request.pair, limit=1)
                    if match:
                        best[row] = match[0].score
                        batch.append(Suggestion(row, match[0].entry.target, "memory", match[0].score))
                self.found.emit(batch)
                self.progress.emit("memory", min(start + MEMORY_BATCH, total), total)
        return best

    def _machine(self, request: SuggestionRequest, segments: Sequence[tuple[int, str]]) -> None:
        """Translate and estimate the segments the memory does not cover, a batch at a time."""
        from nmt_desktop.core.analysis.quality import estimate_pairs

        start_decoding()  # the app's thread policy on this thread (decode_threads.py)
        pending, done = list(segments), 0
        try:
            while pending:
                if self._stop.is_set():
                    return
                batch, pending = pending[:MACHINE_BATCH], pending[MACHINE_BATCH:]
                done += len(batch)
                batch = [(row, source) for row, source in batch if row not in request.confirmed]
                if not batch:
                    continue
                try:
                    estimates = estimate_pairs(request.translator, [(source, None) for _, source in batch],
                                               batch_size=MACHINE_BATCH, cancelled=self._stop.is_set)
                except ValueError:
                    if self._stop.is_set():  # estimate_pairs's way of saying it was stopped
                        return
                    raise
                self.found.emit([Suggestion(row, est.target, "machine", None, est.trust, est.qe,
                                            tuple(f"{f.text} ({f.kind})" for f in est.flags))
                                 for (row, _), est in zip(batch, estimates)])
                self.progress.emit("machine", done, len(segments))
        finally:
            end_decoding()
