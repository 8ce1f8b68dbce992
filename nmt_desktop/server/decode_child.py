"""A model's decode process: `nmt-desktop serve --decode-child SPEC` (core.locations.cli_command, so that the
frozen app starts itself too), started by decode_process.py with one end of a socket pair (SPEC is JSON:
the socket's fd, the model's path, --int8, --backend, --threads, the batch size, wait and halves).

It loads the model as `serve` does (threads set first, the model's glossary read), says "ready" with the
model's languages, then reads jobs on its main thread while its decode thread (batcher.DecodeWorker, the
same batching policy as in process) decodes: a job that arrives during a batch is made into blocks at once
and waits in the queue, so the next batch is ready when this one's answers leave. Each batch's answers go
back in one message.

It ignores SIGINT and SIGTERM (Ctrl+C reaches the whole process group; the server's own process decides
when to stop): it ends on "stop" (after the queue is done) or when the server's end of the socket closes
(the server is gone), so it is never left behind."""

from __future__ import annotations

import json
import marshal
import signal
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from nmt_desktop.server.batcher import DecodeWorker
from nmt_desktop.server.decode_requests import (FileRequest, answers, from_wire, request_segments,
                                                translate_upload)
from nmt_desktop.server.errors import ApiError
from nmt_desktop.server.jobs import CallJob, Job, SegmentJob


def failure(exc: BaseException) -> tuple:
    """An exception as plain data: ("api", status, sentence) for an ApiError, else ("error", its text)."""
    if isinstance(exc, ApiError):
        return ("api", exc.status, exc.message)
    return ("error", str(exc) or type(exc).__name__)


def _plain(value: Any) -> Any:
    """A value marshal takes: numpy's float and int subclasses made plain by a JSON round trip."""
    return json.loads(json.dumps(value))


@dataclass
class _Wire:
    """A request as the server sent it (decode_requests.to_wire), with its job number."""
    number: int
    wire: tuple


class ChildWorker(DecodeWorker):
    """The batching policy of the in-process thread; answers sent over the socket, one message a batch."""

    def __init__(self, conn: Connection, *args: Any, **kwargs: Any):
        self.conn = conn
        self._send_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def send(self, message: tuple) -> None:
        try:
            data = marshal.dumps(message)
        except ValueError:
            data = marshal.dumps(_plain(message))
        with self._send_lock:
            try:
                self.conn.send_bytes(data)
            except OSError:  # the server is gone: nothing to answer
                pass

    def _deliver(self, jobs: list[Job], outcomes: list[tuple[bool, Any]]) -> None:
        self.send(("done", [(job.future, ok, value if ok else failure(value)) for job, (ok, value) in zip(jobs, outcomes)]))

    def take(self, number: int, wire: tuple) -> None:
        """A job from the server, queued as it came: the reading thread holds the interpreter lock only to queue
        it, so that the decode thread, which makes it into blocks (`_job`), is not kept waiting for the lock."""
        self._queue.put(_Wire(number, wire))

    def _job(self, item: Any) -> Any:
        """A queued request as a job for the decode thread; None (answered already) for HTML the reader refuses."""
        if not isinstance(item, _Wire):
            return item
        number, request = item.number, from_wire(item.wire)
        if isinstance(request, FileRequest):
            return CallJob(number, None, 1, lambda t: translate_upload(t, self.glossary, request))
        try:
            segments = request_segments(request)
        except Exception as exc:  # noqa: BLE001  (HTML the reader refuses: 400 in one sentence)
            self.send(("done", [(number, False, failure(exc))]))
            return None
        return SegmentJob(number, None, sum(len(s.blocks) for s in segments), [b for s in segments for b in s.blocks],
                          request.key, lambda results: answers(self.translator, request, segments, results))


def load(spec: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """(translator, glossary, what the server routes by) for the spec's model, threads set first."""
    import torch

    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.server.routing import model_glossary, model_languages

    if spec["threads"] is not None:
        torch.set_num_threads(spec["threads"])
    else:
        from nmt_desktop.core.decoding.threads import follow_load, start_decoding

        if start_decoding() is not None:  # None: OMP_NUM_THREADS is the user's word
            follow_load()
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    translator = Translator.load(spec["model"], int8=spec["int8"], backend=spec["backend"])
    source, targets, multilingual = model_languages(translator)
    stem = translator.path.stem if translator.path else ""
    return translator, model_glossary(translator), {"stem": stem, "name": translator.name or "", "source": source,
                                                    "targets": targets, "multilingual": multilingual}


def main(given: str) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    spec = json.loads(given)
    conn = Connection(spec["fd"])
    try:
        translator, glossary, described = load(spec)
    except Exception as exc:  # noqa: BLE001  (said by the server in one sentence)
        conn.send_bytes(marshal.dumps(("failed", f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc))))
        return 1
    worker = ChildWorker(conn, translator, glossary, spec["name"], spec["batch_size"], spec["window_s"],
                         halves=spec["halves"], continuous=spec.get("continuous", True))
    worker.send(("ready", described))
    while True:
        try:
            message = marshal.loads(conn.recv_bytes())
        except (EOFError, OSError):
            break
        if message[0] == "stop":
            break
        worker.take(message[1], message[2])
    worker.stop(timeout=None)
    return 0
