"""A model's decode thread with continuous batching: each request's sentences join the running search as soon
as there is a free row, and each request is answered the step its last sentence ends.

With whole batches, 32 clients of one sentence each wait for the batch's longest sentence, come back
together, and leave the decoder idle while their answers and next requests travel (benchmarks/RESULTS.md,
issue 43). Here (core/decoding/continuous.py) the batch stays as full as the clients keep it. Between two
steps the decode thread takes what arrived. A greedy request has its sentences tokenized: a plain line's as
plain_text.py's fast path does, any other block (a number or URL to keep, a glossary term, HTML's inline markup)
as the document pipeline prepares it (translate_document.prepare_blocks). The sentences of the requests that
arrived meanwhile go together (`_ENCODE_TOGETHER`, `_ENCODE_WITHIN`) to the encoding thread
(encoding_thread.py), which encodes them while this thread steps, and join free rows when they come back; the
thread steps, and answers the requests whose last sentence ended: plain lines joined, the others finished by
the pipeline (translate_document.finish_blocks: constraints placed, whose repairs decode here between two steps,
placeholders restored, formatting moved). Beam search, n-best lists and files run between two steps through the
document pipeline, as with whole batches.

Answers are those of whole batches (the same sentences, the same assembly; the unforced tokens of a batch of
their own, to float rounding like any batch's)."""

from __future__ import annotations

import collections
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

from nmt_desktop.core.decoding.continuous import ContinuousGreedy, Prepared
from nmt_desktop.core.documents.translate_document import PreparedBlocks, finish_blocks, prepare_blocks
from nmt_desktop.server.decode_requests import DecodeKey, decode_config
from nmt_desktop.server.encoding_thread import Encoded, EncodingThread
from nmt_desktop.server.jobs import STOP, CallJob, Job, SegmentJob, outcome
from nmt_desktop.server.plain_text import plain_results, plain_units

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation, Unit
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary
    from nmt_desktop.core.documents.translate_document import DocumentOptions

__all__ = ["ContinuousDecoding", "PLAIN_CONFIG"]

PLAIN_CONFIG = decode_config(DecodeKey())  # greedy, as the whole batches decode it
# Sentences waiting before they are handed to the encoding thread while the search is at least half full (a
# sentence encoded alone costs about twice its share of a group of 4, and the encoding thread shares the machine
# with this one; 2/1 or 4/1 instead of 4/2 made no difference beyond the noise: RESULTS); a fuller search waits at
# most _ENCODE_WITHIN steps for them
_ENCODE_TOGETHER = 4
_ENCODE_WITHIN = 2
# Answers held before they are sent, while the search runs: every send wakes the server's side, which took the
# core from the decode thread (~2.4 ms of wall time a send at 32 clients, timed by hand: benchmarks/RESULTS.md);
# at most _SEND_WITHIN steps
_SEND_TOGETHER = 8
_SEND_WITHIN = 2


class Worker(Protocol):
    """What the decode thread uses of its batcher.DecodeWorker (a protocol: the batcher imports this module)."""

    translator: "Translator"
    glossary: "Glossary | None"
    batch_size: int
    batches: int
    _queue: queue.Queue

    def _job(self, item: Any) -> Any: ...
    def document_options(self, key: DecodeKey) -> "DocumentOptions": ...
    def _settle(self, jobs: list[Job], compute: Callable[[], list[Any]]) -> None: ...
    def _decode(self, group: list[SegmentJob]) -> None: ...
    def _deliver(self, jobs: list[Job], outcomes: list[tuple[bool, Any]]) -> None: ...


@dataclass
class _Request:
    """A greedy request in the running search: its sentences per block when every block is a plain line
    (plain_text.py), else the document pipeline's preparation of its blocks (`work`: one list of sentences,
    whose constraints are placed when the last one ended)."""

    job: SegmentJob
    units: list[list["Unit"]]  # per block; with `work`, one list: all the blocks' sentences
    done: list["Translation | None"]  # per sentence, all blocks' in order
    left: int
    work: "PreparedBlocks | None" = None
    failed: bool = False


@dataclass
class _Ready:
    """Prepared sentences of one request, from its sentence `first` on, waiting for free rows."""

    request: _Request
    prepared: Prepared
    first: int


class ContinuousDecoding:
    """One `DecodeWorker`'s decode thread in continuous mode (module docstring)."""

    def __init__(self, worker: Worker):
        self.worker = worker
        self.search = ContinuousGreedy(worker.translator, PLAIN_CONFIG, worker.batch_size)
        self._arrived: list[_Request] = []  # tokenized, not yet encoded
        self._held_steps = 0  # steps the arrived sentences have waited
        self._waiting: collections.deque[_Ready] = collections.deque()  # encoded, waiting for free rows
        self._answered: list[tuple[SegmentJob, tuple[bool, Any]]] = []  # answers not yet sent
        self._answered_steps = 0  # steps the oldest of them has waited
        self._encoding = EncodingThread(lambda units: self.search.prepare(units), worker._queue.put,
                                        f"encode-{threading.current_thread().name}")

    def run(self) -> None:
        stopping = False
        while True:
            idle = not (self.search.rows or self._waiting or self._arrived)  # wait for a request or an encoded group
            if stopping and idle and not self._encoding.pending:
                self._encoding.stop()
                return
            jobs = self._take(block=idle)
            while jobs:
                ran = False
                for job in jobs:
                    if job is STOP:
                        stopping = True
                    elif isinstance(job, Encoded):
                        self._received(job)
                    elif self._greedy(job):
                        self._arrive(job)
                    elif isinstance(job, CallJob):
                        self.worker._settle([job], lambda job=job: [job.call(self.worker.translator)])
                        ran = True
                    else:  # another decoding (beam search, n-best): the document pipeline
                        self.worker._decode([job])
                        ran = True
                jobs = self._take(block=False) if ran else []  # what arrived while a request ran here
            self._encode(force=stopping)
            self._join()
            if self.search.rows:
                self._step()
            self._send(force=stopping or not self.search.rows)

    def _take(self, block: bool) -> list[Any]:
        """The worker's queued jobs (waiting for the first when `block`)."""
        source, worker = self.worker._queue, self.worker
        items = [worker._job(source.get())] if block else []
        while True:
            try:
                items.append(worker._job(source.get_nowait()))
            except queue.Empty:
                return [item for item in items if item is not None]

    @staticmethod
    def _greedy(job: Any) -> bool:
        return isinstance(job, SegmentJob) and job.key.beam_size == 1 and job.key.nbest == 1 and bool(job.blocks)

    def _arrive(self, job: SegmentJob) -> None:
        """Tokenize a greedy request's sentences to wait for encoding: per block when every block is a plain line
        (plain_text.py's fast path), else as the document pipeline prepares the blocks (placeholders, numbers to
        keep, glossary terms, a styled block's runs). A failure, or no sentence to translate, is answered here."""
        worker = self.worker
        if job.key.target is not None:  # a multilingual model's target token, read with the sources
            worker.translator.target_language = job.key.target
        terms = worker.glossary.terms if worker.glossary else []
        try:
            units = [plain_units(worker.translator, block, terms, job.key.keep_spans) for block in job.blocks]
            work = None if all(units) else prepare_blocks(worker.translator, job.blocks, worker.document_options(job.key))
        except Exception as exc:  # noqa: BLE001  (the request answers 500 in one sentence)
            worker._deliver([job], [(False, exc)])
            return
        request = _Request(job, units, [], 0) if work is None else _Request(job, [work.units], [], 0, work)  # type: ignore[arg-type]
        request.left = sum(map(len, request.units))
        request.done = [None] * request.left
        if not request.left:  # blank or verbatim blocks only
            worker._deliver([job], [self._answer(request)])
            return
        self._arrived.append(request)

    def _answer(self, request: _Request) -> tuple[bool, Any]:
        """The request's outcome from its sentences' translations: plain lines joined, or the pipeline's blocks
        finished (constraints placed: their repairs decode here, between two steps)."""
        job, worker = request.job, self.worker
        if request.work is None:
            return outcome(lambda: job.finish(plain_results(job.blocks, request.units, request.done)))
        if job.key.target is not None:
            worker.translator.target_language = job.key.target
        return outcome(lambda: job.finish(finish_blocks(worker.translator, request.work, request.done,  # type: ignore[arg-type]
                                                        PLAIN_CONFIG, worker.document_options(job.key))))

    def _encode(self, force: bool) -> None:
        """Encode the arrived sentences together, once there are enough of them, the search is less than half
        full, or they have waited `_ENCODE_WITHIN` steps."""
        if not self._arrived:
            return
        count = sum(r.left for r in self._arrived)
        if not (force or count >= _ENCODE_TOGETHER or len(self.search.rows) * 2 < self.search.capacity
                or self._held_steps >= _ENCODE_WITHIN):
            self._held_steps += 1
            return
        requests, self._arrived, self._held_steps = self._arrived, [], 0
        self._encoding.submit(requests, [u for r in requests for block in r.units for u in block])

    def _received(self, encoded: Encoded) -> None:
        """An encoded group back from the encoding thread: its requests wait for free rows (or fail, each with
        the encoder's error in one sentence)."""
        self._encoding.received()
        if encoded.prepared is None:
            self.worker._deliver([r.job for r in encoded.requests], [(False, encoded.error)] * len(encoded.requests))
            return
        prepared = encoded.prepared
        for request in encoded.requests:
            mine, prepared = prepared.split(request.left, self.search.n_heads)
            self._waiting.append(_Ready(request, mine, 0))

    def _join(self) -> None:
        joined = False
        while self._waiting and self.search.free:
            ready = self._waiting[0]
            if ready.request.failed:
                self._waiting.popleft()
                continue
            count = min(self.search.free, len(ready.prepared.units))
            part, rest = ready.prepared.split(count, self.search.n_heads)
            self.search.join(part, [(ready.request, ready.first + j) for j in range(count)])
            joined = True
            if rest.units:
                self._waiting[0] = _Ready(ready.request, rest, ready.first + count)
            else:
                self._waiting.popleft()
        if joined:
            self.worker.batches += 1  # sentences that entered the search together

    def _step(self) -> None:
        try:
            finished = self.search.step()
        except Exception as exc:  # noqa: BLE001  (every request in the search answers 500 in one sentence)
            self._fail_running(exc)
            return
        complete: list[_Request] = []
        for (request, index), translation in finished:
            request.done[index] = translation
            request.left -= 1
            if request.left == 0:
                complete.append(request)
        self._answered += [(r.job, self._answer(r)) for r in complete]

    def _send(self, force: bool) -> None:
        """Deliver the answers made, once there are enough of them, the oldest has waited `_SEND_WITHIN` steps, or
        the search is empty."""
        if not self._answered:
            return
        if not (force or len(self._answered) >= _SEND_TOGETHER or self._answered_steps >= _SEND_WITHIN):
            self._answered_steps += 1
            return
        answered, self._answered, self._answered_steps = self._answered, [], 0
        self.worker._deliver([job for job, _ in answered], [outcome for _, outcome in answered])

    def _fail_running(self, exc: Exception) -> None:
        """The search broke: its requests fail (once each), their waiting sentences are dropped, and a fresh
        search takes the next ones."""
        failed: list[_Request] = []
        for tag in [row.tag for row in self.search.rows]:
            request = tag[0]
            if not request.failed:
                request.failed = True
                failed.append(request)
        self.search = ContinuousGreedy(self.worker.translator, PLAIN_CONFIG, self.worker.batch_size)
        self.worker._deliver([r.job for r in failed], [(False, exc)] * len(failed))
