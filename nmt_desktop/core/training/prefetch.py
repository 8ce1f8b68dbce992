"""Batches prepared ahead: the next optimizer steps' micro-batches are collated (padded, pinned for a GPU) in a
background thread while the current step computes, so the training thread never waits on Python padding.

The order is the epoch's own (`batches[start:]` in groups of `group`), so a run stays an exact function of
(data, seed, position) and `--resume` continues bit for bit. A plain thread rather than a DataLoader: the
batches are already planned in memory, and worker processes would copy the encoded corpus into each.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Iterator, Sequence
from types import TracebackType

from nmt_desktop.core.training.batching import Batch

_DONE = object()  # the producer's last item


def pinned(batch: Batch) -> Batch:
    """The batch in page-locked memory, so a copy to the GPU with non_blocking=True is truly asynchronous."""
    return dataclasses.replace(batch, src=batch.src.pin_memory(), tgt_in=batch.tgt_in.pin_memory(),
                               tgt_out=batch.tgt_out.pin_memory())


class Prefetcher:
    """Iterate the groups `batches[i:i + group]` for i = start, start + group, ... (whole groups only),
    collated `depth` groups ahead in a daemon thread. Use as a context manager: leaving it stops the thread."""

    def __init__(self, batches: Sequence[Batch], start: int, group: int, pin: bool = False, depth: int = 2):
        self.batches, self.start, self.group, self.pin = batches, start, group, pin
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="batch-prefetch", daemon=True)

    def __enter__(self) -> "Prefetcher":
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()  # a producer blocked on the full queue sees it within 0.1 s
        self._thread.join()

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self) -> None:
        try:
            for i in range(self.start, len(self.batches) - self.group + 1, self.group):
                micro = [self.batches[j] for j in range(i, i + self.group)]
                if not self._put([pinned(b) for b in micro] if self.pin else micro):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the training thread, which raises it
            self._put(exc)
            return
        self._put(_DONE)

    def __iter__(self) -> Iterator[list[Batch]]:
        while True:
            item = self._queue.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
