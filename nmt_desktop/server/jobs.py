"""The jobs a model's decode thread takes from its queue (batcher.DecodeWorker, continuous_decoding.py): a request's
blocks to translate, or a call to run alone (a document), and the mark that stops the thread."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.blocks import Block
    from nmt_desktop.core.documents.translate_document import BlockResult
    from nmt_desktop.server.decode_requests import DecodeKey

__all__ = ["STOP", "CallJob", "Job", "SegmentJob", "outcome"]

STOP = object()  # queued by DecodeWorker.stop: finish what is queued, then end


@dataclass
class Job:
    future: Any  # the request's asyncio.Future; in a decode child (decode_child.py), the parent's job number
    loop: asyncio.AbstractEventLoop | None  # the future's loop (None in a decode child)
    size: int  # segments it adds to the queue


@dataclass
class SegmentJob(Job):
    blocks: list["Block"]
    key: "DecodeKey"
    finish: Callable[[list["BlockResult"]], Any]  # run on the decode thread: the answer from the blocks' results


@dataclass
class CallJob(Job):
    call: Callable[["Translator"], Any]  # a whole document: run alone on the decode thread


def outcome(fn: Callable[[], Any]) -> tuple[bool, Any]:
    """(True, fn()) or (False, the exception it raised): one request's answer, never another's failure."""
    try:
        return True, fn()
    except Exception as exc:  # noqa: BLE001
        return False, exc
