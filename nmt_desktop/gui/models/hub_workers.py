"""QObject workers for the "Get models…" dialog: searching the OPUS-MT catalogue and pulling a model,
each on its own QThread so a search never waits behind a download and the window never stalls.

Every signal carries the request id first. A pull is cancelled through a thread-safe Event that the
core's download loop checks between chunks (a queued slot could not run while the pull is busy).
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QObject, Signal, Slot

from ..workers import one_line

log = logging.getLogger("nmt_desktop.gui.hub")


class SearchWorker(QObject):
    """`search(request_id, query, offline)` -> `found(request_id, SearchResult)` or `failed(request_id, msg)`."""

    found = Signal(int, object)
    failed = Signal(int, str)

    @Slot(int, str, bool)
    def search(self, request_id: int, query: str, offline: bool) -> None:
        from nmt_desktop.core.hub.catalogue import search_models

        try:
            result = search_models(query.replace(",", " ").split(), offline=offline)
        except Exception as exc:  # noqa: BLE001 - reported in the dialog, never raised
            log.warning("model search failed: %s", exc)
            self.failed.emit(request_id, one_line(exc))
            return
        self.found.emit(request_id, result)


class PullWorker(QObject):
    """`pull(request_id, repo, int8)` -> `progress(request_id, PullProgress)`..., then `pulled(request_id,
    PullResult)`, `cancelled(request_id)` or `failed(request_id, message)`."""

    progress = Signal(int, object)
    pulled = Signal(int, object)
    cancelled = Signal(int)
    failed = Signal(int, str)

    def __init__(self) -> None:
        super().__init__()
        self.cancel_event = threading.Event()

    def cancel(self) -> None:
        """Stop the pull under way (any thread); nothing is installed."""
        self.cancel_event.set()

    @Slot(int, str, bool)
    def pull(self, request_id: int, repo: str, int8: bool) -> None:
        from nmt_desktop.core.hub.pull import PullCancelled, pull_model

        self.cancel_event.clear()
        try:
            result = pull_model(repo, int8=int8, progress=lambda p: self.progress.emit(request_id, p),
                                cancel=self.cancel_event)
        except PullCancelled:
            self.cancelled.emit(request_id)
            return
        except Exception as exc:  # noqa: BLE001 - reported in the dialog, never raised
            log.warning("pull of %s failed: %s", repo, exc)
            self.failed.emit(request_id, one_line(exc))
            return
        log.info("installed %s from %s", result.path, repo)
        self.pulled.emit(request_id, result)
