"""Running the server: each model behind its decoder (a decode process of its own, decode_process.py; a
thread of this process with --decode-in-process), the app on uvicorn, bound first so that `--port 0`
reports the port it got, and shut down gracefully on SIGTERM or Ctrl+C: uvicorn stops taking connections,
lets the requests in flight finish (their decoders keep working), then the lifespan stops the decoders
(a decode process finishes what it holds and exits), and the process says "stopped" and exits 0."""

from __future__ import annotations

import asyncio
import signal
import socket
from typing import TYPE_CHECKING, Any

import uvicorn

from nmt_desktop.server.app import build_app
from nmt_desktop.server.batcher import DecodeWorker
from nmt_desktop.server.context import ServerContext
from nmt_desktop.server.decode_process import DecodeProcess, ModelLoad
from nmt_desktop.server.events import EventLog
from nmt_desktop.server.file_jobs import FileStore
from nmt_desktop.server.routing import Decoder, Models, ServedModel, model_glossary, model_languages
from nmt_desktop.server.settings import ServerSettings

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator


class _Server(uvicorn.Server):
    """uvicorn's server, saying "listening" once it accepts connections."""

    def __init__(self, config: uvicorn.Config, ctx: ServerContext, port: int):
        super().__init__(config)
        self.ctx, self.port = ctx, port

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.ctx.log.listening(self.ctx.settings.host, self.port, self.ctx.models.describe())


def served_models(models: list["Translator | ModelLoad"], settings: ServerSettings) -> Models:
    """Each model with its languages, glossary and decoder: a decode process for a ModelLoad (the models
    load at once, each in its own), a decode thread for a Translator loaded here. ModelLoadError in one
    sentence when a model cannot load (the decode processes already started are ended)."""
    processes = [DecodeProcess(m, _stem(m.path), settings.batch_size, settings.window_s, settings.limits.max_queue,
                               settings.halves, settings.continuous) if isinstance(m, ModelLoad) else None for m in models]
    served: list[ServedModel] = []
    try:
        for model, process in zip(models, processes):
            if process is not None:
                described = process.ready()
                source, targets, multilingual = described["source"], described["targets"], described["multilingual"]
                base = described["stem"] or described["name"] or f"{source}-{targets[0]}"
            else:
                assert not isinstance(model, ModelLoad)
                source, targets, multilingual = model_languages(model)
                base = (model.path.stem if model.path else "") or model.name or f"{source}-{targets[0]}"
            # the folder's name (what -m named: en-de, opus-mt-en-fr), one of a kind among the served
            name, n = base, 1
            while any(m.name == name for m in served):
                n += 1
                name = f"{base}-{n}"
            worker: Decoder
            if process is not None:
                process.name = name
                worker = process
            else:
                worker = DecodeWorker(model, model_glossary(model), name, settings.batch_size, settings.window_s,
                                      settings.limits.max_queue, continuous=settings.continuous)
            served.append(ServedModel(name, source, targets, worker, multilingual))
    except BaseException:
        for process in processes:
            if process is not None:
                process.proc.kill()
                process.proc.wait()
        for model in served:
            model.worker.stop()
        raise
    return Models(served)


def _stem(path: str) -> str:
    from pathlib import Path

    return Path(path).stem or path


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one); OSError when taken.

    Made with proto IPPROTO_TCP and TCP_NODELAY (which accepted sockets inherit): asyncio turns Nagle's
    algorithm off only on sockets whose proto says TCP, and with it on, the response body (a second small
    write after the headers) waited for the client's delayed ACK: 40 ms on every keep-alive request."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def serve(models_given: list["Translator | ModelLoad"], settings: ServerSettings,
          sock: socket.socket | None = None) -> int:
    """Serve until SIGTERM or Ctrl+C; 0 after a graceful stop. `models_given`: ModelLoads (each decoded in a
    process of its own) or Translators (decoded on a thread of this process, --decode-in-process). `sock`:
    bound already (`bind`, so that a port in use is said before the models load), else bound here; OSError
    when the address cannot be bound, ModelLoadError when a model cannot load."""
    sock = sock if sock is not None else bind(settings.host, settings.port)
    try:
        models = served_models(models_given, settings)
    except BaseException:
        sock.close()
        raise
    ctx = ServerContext(settings, models, EventLog(settings.log_json), FileStore(settings.upload_dir,
                                                                                settings.file_ttl_s))
    # OPUS-CAT's plugins send the segment in the query string: --max-chars of percent-encoded UTF-8 (up to 9
    # characters each) must fit in a request line, which h11 caps at 16 KB by default
    line_limit = max(64 * 1024, settings.limits.max_chars * 9 + 16 * 1024)
    config = uvicorn.Config(build_app(ctx), log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=settings.limits.timeout_s + 5, server_header=False,
                            http=_http_parser(), h11_max_incomplete_event_size=line_limit)
    server = _Server(config, ctx, sock.getsockname()[1])
    # uvicorn raises the signal again once it has shut down; a handler of ours there makes that a clean exit
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(server.serve(sockets=[sock]))
    finally:
        sock.close()
        models.stop()
        ctx.files.close()
        ctx.log.stopped()
    return 0


def _http_parser() -> str:
    """httptools (llhttp, in C) where installed: uvicorn's h11 path, in Python, was a large part of the ~1 ms
    a request cost the event loop (benchmarks/RESULTS.md, issue 43); h11 otherwise."""
    import importlib.util

    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


def _loop_factory() -> Any:
    """uvloop's event loop (libuv) where installed (not on Windows), else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
