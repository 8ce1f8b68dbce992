"""The thread that encodes the sentences that arrived while the decode thread steps (continuous batching).

Encoding the sentences that arrived between two steps took a fifth of the decode thread's time at 32 clients
(benchmarks/RESULTS.md, issue 43), time in which no row advanced. The compiled encoder runs without Python's
interpreter lock (core/decoding/backends/compiled_encoder.py; a Python loop beside it kept 90% of its speed), so
here it runs on a thread of its own: the decode thread hands it a group of sentences and keeps stepping, and the
encoded group comes back through the decode thread's own queue, as the next request does (`Encoded`), to join
free rows between two steps. Groups are encoded in the order they were handed over."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.continuous import Prepared
    from nmt_desktop.core.decoding.results import Unit

__all__ = ["Encoded", "EncodingThread"]


@dataclass
class Encoded:
    """A handed-over group, encoded (`prepared`), or the error that stopped its encoding."""

    requests: list[Any]  # the caller's, in the group's order
    prepared: "Prepared | None"
    error: Exception | None = None


class EncodingThread:
    """Encodes groups handed over with `submit` on its own thread; each result goes to `deliver`."""

    def __init__(self, prepare: Callable[[Sequence["Unit"]], "Prepared"], deliver: Callable[[Encoded], None],
                 name: str):
        self._prepare, self._deliver = prepare, deliver
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self.pending = 0  # groups handed over whose result the caller has not `received` yet
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, requests: list[Any], units: Sequence["Unit"]) -> None:
        self.pending += 1
        self._todo.put((requests, units))

    def received(self) -> None:
        """The caller took one result (called on the caller's thread, which alone counts `pending`)."""
        self.pending -= 1

    def stop(self) -> None:
        """End the thread once the groups handed over are encoded."""
        self._todo.put(None)
        self._thread.join()

    def _run(self) -> None:
        while (item := self._todo.get()) is not None:
            requests, units = item
            try:
                encoded = Encoded(requests, self._prepare(units))
            except Exception as exc:  # noqa: BLE001  (the caller fails these requests, each in one sentence)
                encoded = Encoded(requests, None, exc)
            self._deliver(encoded)
