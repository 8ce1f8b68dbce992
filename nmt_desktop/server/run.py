"""Running the server: each model behind its decode thread, the app on uvicorn, bound first so that
`--port 0` reports the port it got, and shut down gracefully on SIGTERM or Ctrl+C: uvicorn stops taking
connections, lets the requests in flight finish (their decode threads keep working), then the lifespan
stops the threads, and the process says "stopped" and exits 0."""

from __future__ import annotations

import asyncio
import signal
import socket
from typing import TYPE_CHECKING

import uvicorn

from nmt_desktop.server.app import build_app
from nmt_desktop.server.batcher import DecodeWorker
from nmt_desktop.server.context import ServerContext
from nmt_desktop.server.events import EventLog
from nmt_desktop.server.file_jobs import FileStore
from nmt_desktop.server.routing import Models, ServedModel, model_glossary, model_languages
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


def served_models(translators: list["Translator"], settings: ServerSettings) -> Models:
    """Each model with its languages, glossary and decode thread."""
    served: list[ServedModel] = []
    for translator in translators:
        source, targets, multilingual = model_languages(translator)
        glossary = model_glossary(translator)
        # the folder's name (what -m named: en-de, opus-mt-en-fr), one of a kind among the served
        base = (translator.path.stem if translator.path else "") or translator.name or f"{source}-{targets[0]}"
        name, n = base, 1
        while any(m.name == name for m in served):
            n += 1
            name = f"{base}-{n}"
        worker = DecodeWorker(translator, glossary, name, settings.batch_size, settings.window_s,
                              settings.limits.max_queue)
        served.append(ServedModel(name, translator, source, targets, worker, glossary, multilingual))
    return Models(served)


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


def serve(translators: list["Translator"], settings: ServerSettings, sock: socket.socket | None = None) -> int:
    """Serve until SIGTERM or Ctrl+C; 0 after a graceful stop. `sock`: bound already (`bind`, so that a port
    in use is said before the models load), else bound here; OSError when the address cannot be bound."""
    sock = sock if sock is not None else bind(settings.host, settings.port)
    models = served_models(translators, settings)
    ctx = ServerContext(settings, models, EventLog(settings.log_json), FileStore(settings.upload_dir,
                                                                                settings.file_ttl_s))
    # OPUS-CAT's plugins send the segment in the query string: --max-chars of percent-encoded UTF-8 (up to 9
    # characters each) must fit in a request line, which h11 caps at 16 KB by default
    line_limit = max(64 * 1024, settings.limits.max_chars * 9 + 16 * 1024)
    config = uvicorn.Config(build_app(ctx), log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=settings.limits.timeout_s + 5, server_header=False,
                            h11_max_incomplete_event_size=line_limit)
    server = _Server(config, ctx, sock.getsockname()[1])
    # uvicorn raises the signal again once it has shut down; a handler of ours there makes that a clean exit
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    finally:
        sock.close()
        models.stop()
        ctx.files.close()
        ctx.log.stopped()
    return 0
