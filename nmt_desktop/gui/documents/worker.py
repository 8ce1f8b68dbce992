"""The Translate file dialog's worker: `translate_document` (core/documents) on a QThread.

It is a `TranslateWorker`, so cancellation, the busy flag, one-line failures and `WorkerThread.stop`'s
cancel-on-close are the Translate tab's own; only the job differs: a whole document with its options, whose
progress the core reports in sentences. Cancel is the core's `cancelled()` check between batches, which
raises `Cancelled`: then nothing is sent, so the dialog has nothing to save.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal

from nmt_desktop.core.documents.translate_document import Cancelled, DocumentOptions, translate_document

from ..workers import TranslateWorker

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.blocks import Document

log = logging.getLogger("nmt_desktop.gui.document")
PROGRESS_EVERY_S = 0.1  # at most ten progress signals a second: a long document has thousands of sentences


@dataclass
class DocumentJob:
    """What one Translate click asks for: the open document and the dialog's options."""
    document: Document
    options: DocumentOptions


class DocumentWorker(TranslateWorker):
    """`progressed(request id, sentences done, total)` while translating, then `finished(request id,
    DocumentTranslation)`; a cancelled request sends neither. The base's `text` slot argument carries a
    `DocumentJob` (the slot's signature is shared with the Translate tab's worker)."""

    progressed = Signal(int, int, int)

    def _run(self, request_id: int, translator: Translator, text: object, cfg: DecodeConfig) -> None:
        assert isinstance(text, DocumentJob)
        job, t0, last = text, time.perf_counter(), [0.0]

        def progress(done: int, total: int) -> None:
            now = time.perf_counter()
            if done in (0, total) or now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                self.progressed.emit(request_id, done, total)

        try:
            result = translate_document(translator, job.document, cfg, job.options, progress,
                                        lambda: self.is_cancelled(request_id))
        except Cancelled:
            log.info("translation of %s cancelled", job.document.path.name)
            return
        if self.is_cancelled(request_id):
            return
        log.info("translated %s: %d block(s), %d sentence(s) in %.2fs", job.document.path.name,
                 len(result.blocks), result.sentences, time.perf_counter() - t0)
        self.finished.emit(request_id, result)
