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

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.documents.blocks import Block, DocumentError, TranslatedBlock
from nmt_desktop.core.documents.translate_document import BlockResult, DocumentOptions, translate_document

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary


class QueueFull(Exception):
    """The decode queue holds as many segments as it may."""


@dataclass(frozen=True)
class DecodeKey:
    """What must be equal for segments to share a search: beam width, hypotheses kept, target token."""
    beam_size: int = 1
    nbest: int = 1
    target: str | None = None  # a multilingual model's >>code<<; None for an ordinary model
    # URLs, e-mail addresses and emoji behind placeholders (translate_document's automatic do-not-translate);
    # off for alternatives, whose n-best texts hold the placeholders' names, not what they stand for
    keep_spans: bool = True


@dataclass
class _Job:
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop
    size: int  # segments it adds to the queue


@dataclass
class SegmentJob(_Job):
    blocks: list[Block]
    key: DecodeKey
    finish: Callable[[list[BlockResult]], Any]  # run on the decode thread: the answer from the blocks' results


@dataclass
class CallJob(_Job):
    call: Callable[["Translator"], Any]  # a whole document: run alone on the decode thread


@dataclass
class _Blocks:
    """Blocks of many requests as one Document for translate_document; never saved."""
    blocks: list[Block]
    path: Path = Path("<requests>")

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        raise DocumentError("requests are answered, not saved")


_STOP = object()


class DecodeWorker:
    """The decode thread of one model (module docstring)."""

    def __init__(self, translator: "Translator", glossary: "Glossary | None", name: str, batch_size: int = 32,
                 window_s: float = 0.05, max_queue: int = 1024):
        """window_s: the longest a batch waits for the clients expected back. Clients answered together come
        back together, but one by one through the event loop: a fixed few milliseconds from the first arrival
        caught 5 of 32 clients, then 27, then 6, ... So a batch waits (at most window_s) for as many requests
        as the larger of the last two batches held, the clients still at work; a lone client waits for none."""
        self.translator, self.glossary = translator, glossary
        self.batch_size, self.window_s, self.max_queue = batch_size, window_s, max_queue
        self._recent: collections.deque[int] = collections.deque(maxlen=2)  # requests in each of the last batches
        self._queue: queue.Queue = queue.Queue()
        self._held: collections.deque = collections.deque()  # taken from the queue but not batchable with the last group
        self._waiting = 0  # segments queued and not yet decoded
        self._lock = threading.Lock()
        self.batches = 0  # decode calls made (tests read it: concurrent requests really share them)
        self._thread = threading.Thread(target=self._run, name=f"decode-{name}", daemon=True)
        self._thread.start()

    @property
    def waiting(self) -> int:
        with self._lock:
            return self._waiting

    def _enqueue(self, job: _Job) -> asyncio.Future:
        with self._lock:
            if self._waiting + job.size > self.max_queue:
                raise QueueFull(f"the decode queue is full ({self._waiting} segments waiting, at most "
                                f"{self.max_queue}); try again in a moment")
            self._waiting += job.size
        self._queue.put(job)
        return job.future

    def translate(self, blocks: list[Block], key: DecodeKey, finish: Callable[[list[BlockResult]], Any]) -> asyncio.Future:
        """Queue blocks (from the event loop); the future gets `finish(results)`. QueueFull when full."""
        loop = asyncio.get_running_loop()
        return self._enqueue(SegmentJob(loop.create_future(), loop, len(blocks), blocks, key, finish))

    def call(self, fn: Callable[["Translator"], Any], size: int = 1) -> asyncio.Future:
        """Queue `fn(translator)` to run alone on the decode thread (a document)."""
        loop = asyncio.get_running_loop()
        return self._enqueue(CallJob(loop.create_future(), loop, size, fn))

    def stop(self, timeout: float = 30.0) -> None:
        """Finish what is queued, then end the thread."""
        self._queue.put(_STOP)
        self._thread.join(timeout)

    # --- the thread ---------------------------------------------------------------------------

    def _next(self, timeout: float | None) -> Any:
        if self._held:
            return self._held.popleft()
        return self._queue.get(timeout=timeout) if timeout is not None else self._queue.get()

    def _run(self) -> None:
        while True:
            job = self._next(None)
            if job is _STOP:
                return
            if isinstance(job, CallJob):
                self._settle([job], lambda: [job.call(self.translator)])
                continue
            group, size = [job], job.size
            expected = max(self._recent, default=1)  # requests that came together lately: clients still active
            deadline = time.monotonic() + self.window_s
            while size < self.batch_size:
                wait = deadline - time.monotonic() if len(group) < expected else 0.0
                try:  # wait for the clients expected back (at most window_s), then take only what is queued
                    more = self._next(wait) if wait > 0 or self._held else self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP or isinstance(more, CallJob) or more.key != job.key:
                    self._held.append(more)
                    break
                group.append(more)
                size += more.size
            self._recent.append(len(group))
            self._decode(group)

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
        answers, start = [], 0
        for job in group:
            answers.append(_outcome(lambda job=job, start=start: job.finish(results[start: start + job.size])))
            start += job.size
        self._deliver(group, answers)

    def _results(self, blocks: list[Block], key: DecodeKey) -> list[BlockResult]:
        self.batches += 1
        if key.target is not None:
            self.translator.target_language = key.target
        cfg = DecodeConfig(beam_size=key.beam_size, nbest=key.nbest, attention=True, alternatives=0)
        options = DocumentOptions(glossary=self.glossary, automatic_dnt=key.keep_spans, batch_size=self.batch_size)
        return translate_document(self.translator, _Blocks(blocks), cfg, options).blocks

    def _settle(self, jobs: list[_Job], compute: Callable[[], list[Any]]) -> None:
        try:
            answers = [(True, a) for a in compute()]
        except Exception as exc:  # noqa: BLE001  (handed to the request, which answers 500 in one sentence)
            answers = [(False, exc)] * len(jobs)
        self._deliver(jobs, answers)

    def _deliver(self, jobs: list[_Job], answers: list[tuple[bool, Any]]) -> None:
        with self._lock:
            self._waiting -= sum(job.size for job in jobs)
        for job, (ok, value) in zip(jobs, answers):
            job.loop.call_soon_threadsafe(_resolve, job.future, ok, value)


def _outcome(fn: Callable[[], Any]) -> tuple[bool, Any]:
    try:
        return True, fn()
    except Exception as exc:  # noqa: BLE001
        return False, exc


def _resolve(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.done():  # the request timed out or its client went away
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
