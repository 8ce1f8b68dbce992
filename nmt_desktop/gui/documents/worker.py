"""The Translate file dialog's worker: `translate_document` (core/documents) on a QThread.

It is a `TranslateWorker`, so cancellation, the busy flag, one-line failures and `WorkerThread.stop`'s
cancel-on-close are the Translate tab's own; only the job differs: a whole document with its options, whose
progress the core reports in sentences. Cancel is the core's `cancelled()` check between batches, which
raises `Cancelled`: then nothing is sent, so the dialog has nothing to save. A book takes minutes, so the thread
policy (gui/decode_threads.py) is read again between batches every RETHREAD_EVERY_S, not only at the start.
"""

from __future__ import annotations

import logging
import time
from itertools import accumulate
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal

from nmt_desktop.core.documents.translate_document import Cancelled, DocumentOptions, translate_document

from ..decode_threads import start_decoding
from ..workers import TranslateWorker

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.blocks import Document

log = logging.getLogger("nmt_desktop.gui.document")
PROGRESS_EVERY_S = 0.1  # at most ten progress signals a second: a long document has thousands of sentences
# the thread policy read again this often during a document (decode_threads.py): a book takes minutes, and a
# count fit for an idle machine runs ~10 times slower once other work starts (issue 42: a 742-sentence EPUB took
# 476 s on two threads beside busy processes, 43 s on one)
RETHREAD_EVERY_S = 20.0


@dataclass
class DocumentJob:
    """What one Translate click asks for: the open document and the dialog's options."""
    document: Document
    options: DocumentOptions


def work_curve(document: Document) -> list[int]:
    """The characters of the document's shortest k sentences, for k = 0..n: the core translates sentences
    shortest first (length-sorted batches), so "k of n sentences" is far less than k/n of the work, and an ETA
    counted in sentences said 7 s where 43 s were left (issue 42). Sentences as the core cuts them
    (`line_sentences`), counted in characters (close enough to the tokens the decoding time follows)."""
    from nmt_desktop.core.decoding.document import line_sentences

    sizes = sorted(len(s) for block in document.blocks if not block.verbatim and block.text.strip()
                   for s in line_sentences(block.text.strip()))
    return list(accumulate(sizes, initial=0))


def work_done(curve: list[int], done: int, total: int) -> int:
    """The characters translated once `done` of `total` sentences are (the curve's share at done/total: the
    core's sentence count differs a little from the curve's where it cuts long sentences)."""
    if total <= 0 or len(curve) < 2:
        return done
    return curve[min(len(curve) - 1, round(done * (len(curve) - 1) / total))]


class DocumentWorker(TranslateWorker):
    """`weighed(request id, work_curve)` first, then `progressed(request id, sentences done, total)` while
    translating, then `finished(request id, DocumentTranslation)`; a cancelled request sends neither of the last
    two. The base's `text` slot argument carries a `DocumentJob` (the slot's signature is shared with the
    Translate tab's worker)."""

    weighed = Signal(int, object)
    progressed = Signal(int, int, int)

    def _run(self, request_id: int, translator: Translator, text: object, cfg: DecodeConfig) -> None:
        assert isinstance(text, DocumentJob)
        job, t0, last = text, time.perf_counter(), [0.0]
        rethreaded = [t0]
        self.weighed.emit(request_id, work_curve(job.document))

        def progress(done: int, total: int) -> None:
            now = time.perf_counter()
            if done in (0, total) or now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                self.progressed.emit(request_id, done, total)
            if done and now - rethreaded[0] >= RETHREAD_EVERY_S:  # a long document: the machine's load has moved
                rethreaded[0] = now
                start_decoding()  # on this thread, between batches: the next batch runs on the new count

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
