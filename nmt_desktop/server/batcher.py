"""One decode thread per model: it takes requests from a queue and decodes the segments of every request
waiting (up to a batch size; waiting briefly for the clients that the last batches served, who come back
together) in one call of the document pipeline (core/documents/translate_document.py: placeholders, the
model's glossary, length-sorted batches through `Translator.translate_units`, inline markup carried by
alignment). The event loop only
queues work and awaits an asyncio future, resolved with `loop.call_soon_threadsafe`; it never decodes.

The queue is bounded in segments: a request that would take it past `max_queue` is refused at once
(`QueueFull`, answered 429), never left to wait. Batching never changes an answer: a segment's tokens are
the same alone and among 31 others (tests/server/test_server_concurrency.py; the attention masks keep padded
rows apart, and the backends compute each row on its own)."""

from __future__ import annotations

import asyncio
import collections
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from nmt_desktop.core.documents.blocks import Block, DocumentError, TranslatedBlock
from nmt_desktop.core.documents.translate_document import BlockResult, DocumentOptions, translate_document
from nmt_desktop.server.decode_requests import (DecodeKey, FileRequest, TextRequest, answers, decode_config,
                                                translate_upload)
from nmt_desktop.server.jobs import STOP, CallJob, Job, SegmentJob, outcome
from nmt_desktop.server.plain_text import plain_units, translate_plain

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary
    from nmt_desktop.server.segments import Segment

__all__ = ["Admission", "DecodeKey", "DecodeWorker", "QueueFull"]


class QueueFull(Exception):
    """The decode queue holds as many segments as it may."""


class Admission:
    """The decode queue's bound, kept where requests arrive (so that 429 is said at once): segments
    admitted and not yet answered, at most `max_queue`."""

    def __init__(self, max_queue: int):
        self.max_queue = max_queue
        self._waiting = 0
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        with self._lock:
            return self._waiting

    def admit(self, size: int) -> None:
        """Count `size` more segments in; QueueFull when they would pass the bound."""
        with self._lock:
            if self._waiting + size > self.max_queue:
                raise QueueFull(f"the decode queue is full ({self._waiting} segments waiting, at most "
                                f"{self.max_queue}); try again in a moment")
            self._waiting += size

    def release(self, size: int) -> None:
        with self._lock:
            self._waiting -= size


@dataclass
class _Blocks:
    """Blocks of many requests as one Document for translate_document; never saved."""
    blocks: list[Block]
    path: Path = Path("<requests>")

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        raise DocumentError("requests are answered, not saved")



class DecodeWorker:
    """The decode thread of one model (module docstring)."""

    def __init__(self, translator: "Translator", glossary: "Glossary | None", name: str, batch_size: int = 32,
                 window_s: float = 0.05, max_queue: int = 1024, halves: bool = False, fast: bool = True,
                 continuous: bool = True):
        """window_s: the longest a batch waits for the clients expected back. Clients answered together come
        back together, but one by one through the event loop: a fixed few milliseconds from the first arrival
        caught 5 of 32 clients, then 27, then 6, ... So a batch waits (at most window_s) for as many requests
        as the larger of the last two batches held, the clients still at work; a lone client waits for none.
        halves: batches of half the clients at work (`_half`), for a decode process whose answers travel on
        another core while it decodes the other half (`serve --half-batches`; off by default: on the busy
        2-core machine the clients still on their way back are counted nowhere, the estimate and the batches
        shrank, and smaller batches cost more CPU per sentence; benchmarks/RESULTS.md, issue 43).
        fast: plain lines by plain_text.py's fast path (the same answers; off only to compare).
        continuous: plain greedy lines by continuous batching (continuous_decoding.py: they join the running search
        as rows free up, and each request is answered when its own sentences end) where the translator allows it
        (core/decoding/continuous.py: the compiled backend); whole batches as above otherwise, or when False."""
        from nmt_desktop.core.decoding.continuous import continuous_applies
        from nmt_desktop.server.continuous_decoding import PLAIN_CONFIG

        self.halves, self.fast = halves, fast
        self.continuous = continuous and fast and continuous_applies(translator, PLAIN_CONFIG)
        self.translator, self.glossary = translator, glossary
        self.batch_size, self.window_s, self.max_queue = batch_size, window_s, max_queue
        self._recent: collections.deque[int] = collections.deque(maxlen=2)  # requests in each of the last batches
        self._queue: queue.Queue = queue.Queue()
        self._held: collections.deque = collections.deque()  # taken from the queue but not batchable with the last group
        self.admission = Admission(max_queue)
        self.batches = 0  # decode calls made (tests read it: concurrent requests really share them)
        self._thread = threading.Thread(target=self._run, name=f"decode-{name}", daemon=True)
        self._thread.start()

    @property
    def waiting(self) -> int:
        return self.admission.waiting

    def _enqueue(self, job: Job) -> asyncio.Future:
        self.admission.admit(job.size)
        self._queue.put(job)
        return job.future

    def submit(self, request: TextRequest, segments: list["Segment"]) -> asyncio.Future:
        """A route's request (its segments made already): the future gets `answers(...)`. QueueFull when full."""
        return self.translate([b for s in segments for b in s.blocks], request.key,
                              lambda results: answers(self.translator, request, segments, results))

    def submit_file(self, request: FileRequest) -> asyncio.Future:
        """An uploaded document, translated alone: the future gets its download name."""
        return self.call(lambda translator: translate_upload(translator, self.glossary, request))

    def translate(self, blocks: list[Block], key: DecodeKey, finish: Callable[[list[BlockResult]], Any]) -> asyncio.Future:
        """Queue blocks (from the event loop); the future gets `finish(results)`. QueueFull when full."""
        loop = asyncio.get_running_loop()
        return self._enqueue(SegmentJob(loop.create_future(), loop, len(blocks), blocks, key, finish))

    def call(self, fn: Callable[["Translator"], Any], size: int = 1) -> asyncio.Future:
        """Queue `fn(translator)` to run alone on the decode thread (a document)."""
        loop = asyncio.get_running_loop()
        return self._enqueue(CallJob(loop.create_future(), loop, size, fn))

    def stop(self, timeout: float | None = 30.0) -> None:
        """Finish what is queued, then end the thread."""
        self._queue.put(STOP)
        self._thread.join(timeout)

    # --- the thread ---------------------------------------------------------------------------

    def _next(self, timeout: float | None) -> Any:
        if self._held:
            return self._held.popleft()
        return self._job(self._queue.get(timeout=timeout) if timeout is not None else self._queue.get())

    def _job(self, item: Any) -> Any:
        """What the queue held as a job (a decode process queues requests as they came: decode_child.py); None
        for one already answered."""
        return item

    def _run(self) -> None:
        if self.continuous:
            from nmt_desktop.server.continuous_decoding import ContinuousDecoding

            ContinuousDecoding(self).run()
            return
        while True:
            job = self._next(None)
            if job is None:
                continue
            if job is STOP:
                return
            if isinstance(job, CallJob):
                self._settle([job], lambda: [job.call(self.translator)])
                continue
            group, size = [job], job.size
            expected = max(self._recent, default=1)  # requests that came together lately: clients still active
            cap = self._half()
            expected = min(expected, cap)
            deadline = time.monotonic() + self.window_s
            while size < self.batch_size and len(group) < cap:
                wait = deadline - time.monotonic() if len(group) < expected else 0.0
                try:  # wait for the clients expected back (at most window_s), then take only what is queued
                    more = self._next(wait) if wait > 0 or self._held else self._job(self._queue.get_nowait())
                except queue.Empty:
                    break
                if more is None:
                    continue
                if more is STOP or isinstance(more, CallJob) or more.key != job.key:
                    self._held.append(more)
                    break
                group.append(more)
                size += more.size
            self._recent.append(len(group))
            self._decode(group)

    def _half(self) -> int:
        """The most requests this batch takes: all it may without `halves`; with it, half the clients at work
        (those queued now and those the last batch answered, who are on their way back), so that one half's
        answers and next requests travel while the other half decodes."""
        if not self.halves:
            return self.batch_size
        clients = self._queue.qsize() + len(self._held) + 1 + (self._recent[-1] if self._recent else 0)
        return max(1, -(-clients // 2))

    def _decode(self, group: list[SegmentJob]) -> None:
        try:
            results = self._results([b for job in group for b in job.blocks], group[0].key)
        except Exception as exc:  # noqa: BLE001  (handed to the request, which answers 500 in one sentence)
            if len(group) == 1:
                self._deliver(group, [(False, exc)])
                return
            for job in group:  # one bad request must not fail the others: each alone
                self._decode([job])
            return
        outcomes, start = [], 0
        for job in group:
            outcomes.append(outcome(lambda job=job, start=start: job.finish(results[start: start + job.size])))
            start += job.size
        self._deliver(group, outcomes)

    def _results(self, blocks: list[Block], key: DecodeKey) -> list[BlockResult]:
        """Every block's result: plain lines by the fast path (plain_text.py), the others by the document
        pipeline."""
        self.batches += 1
        if key.target is not None:
            self.translator.target_language = key.target
        cfg = decode_config(key)
        terms = self.glossary.terms if self.glossary else []
        plain = [plain_units(self.translator, b, terms, key.keep_spans) if self.fast else None for b in blocks]
        rest = [b for b, units in zip(blocks, plain) if units is None]
        options = self.document_options(key)
        piped = iter(translate_document(self.translator, _Blocks(rest), cfg, options).blocks if rest else [])
        fast = iter(translate_plain(self.translator, [b for b, u in zip(blocks, plain) if u is not None],
                                    [u for u in plain if u is not None], cfg, self.batch_size))
        return [next(piped) if units is None else next(fast) for units in plain]

    def document_options(self, key: DecodeKey) -> DocumentOptions:
        """How the document pipeline treats a request's blocks: this model's glossary, URLs, e-mail addresses,
        numbers and emoji kept (unless the key says not), and batches of the worker's size."""
        return DocumentOptions(glossary=self.glossary, automatic_dnt=key.keep_spans, batch_size=self.batch_size)

    def _settle(self, jobs: list[Job], compute: Callable[[], list[Any]]) -> None:
        try:
            outcomes = [(True, a) for a in compute()]
        except Exception as exc:  # noqa: BLE001  (handed to the request, which answers 500 in one sentence)
            outcomes = [(False, exc)] * len(jobs)
        self._deliver(jobs, outcomes)

    def _deliver(self, jobs: list[Job], outcomes: list[tuple[bool, Any]]) -> None:
        self.admission.release(sum(job.size for job in jobs))
        loop = jobs[0].loop
        assert loop is not None
        loop.call_soon_threadsafe(resolve_all, [(job.future, ok, value) for job, (ok, value) in zip(jobs, outcomes)])


def resolve_all(settled: list[tuple[asyncio.Future, bool, Any]]) -> None:
    """On the event loop: each future its result or exception (one call per batch, not per request)."""
    for future, ok, value in settled:
        if future.done():  # the request timed out or its client went away
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
