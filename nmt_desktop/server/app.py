"""The ASGI app: LibreTranslate's and OPUS-CAT's routes, GET /nmt/stats, CORS, every error as
`{"error": "..."}`, and the request log (one event per request, events.py) written by a middleware that
also keeps the counters. `lifespan` sweeps expired files while the server runs and, at shutdown (after
uvicorn has let in-flight requests finish), stops the decode threads and says "stopped"."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nmt_desktop.server import libretranslate, opuscat
from nmt_desktop.server.context import ServerContext
from nmt_desktop.server.errors import ApiError


class RequestLog:
    """Pure ASGI middleware: times each HTTP request, reads its status from the response, and writes the
    request event and the counters from what the route noted (context.note). A route's unexpected failure is
    answered 500 in one sentence here (its one line on stderr): past this point uvicorn would drop the
    client's connection."""

    def __init__(self, app: ASGIApp, ctx: ServerContext):
        self.app, self.ctx = app, ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status, answered = time.perf_counter(), [500], [False]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0], answered[0] = message["status"], True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:  # noqa: BLE001  (answered here, so that the connection stays open for the next request)
            if answered[0]:
                raise
            status[0] = 500
            print(f"nmt-desktop serve: {scope.get('method')} {scope.get('path')} failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)
            await JSONResponse({"error": f"Cannot translate text: {type(exc).__name__}: {exc}"}, status_code=500)(
                scope, receive, send)
        finally:
            state: dict[str, Any] = scope.get("state", {})
            segments, characters = state.get("nmt_segments", 0), state.get("nmt_characters", 0)
            client = scope.get("client") or ("unknown", 0)
            self.ctx.stats.count(status[0], segments, characters)
            self.ctx.log.request(client[0], scope.get("method", ""), scope.get("path", ""), status[0], segments,
                                 characters, (time.perf_counter() - started) * 1000.0, state.get("nmt_model"))


def stats_route(ctx: ServerContext):
    async def stats(request: Request) -> Response:
        given = request.query_params.get("api_key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        ctx.check_access(request, given or None)
        return JSONResponse(ctx.stats.as_dict(ctx.queued(), ctx.models.describe()))
    return stats


async def api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse({"error": exc.message}, status_code=exc.status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {404: f"{request.url.path} is not a route of this server",
                405: f"{request.method} is not allowed on {request.url.path}"}
    return JSONResponse({"error": messages.get(exc.status_code, str(exc.detail))}, status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


async def server_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": f"Cannot translate text: {type(exc).__name__}: {exc}"}, status_code=500)


def build_app(ctx: ServerContext) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async def sweep() -> None:
            while True:
                await asyncio.sleep(max(0.5, min(30.0, ctx.files.ttl_s / 4)))
                ctx.files.sweep()

        sweeper = asyncio.create_task(sweep())
        from nmt_desktop.core.decoding.source_language import warm_up

        asyncio.get_running_loop().run_in_executor(None, warm_up)  # the language identifier, before source=auto needs it
        try:
            yield
        finally:
            sweeper.cancel()
            await asyncio.get_running_loop().run_in_executor(None, ctx.models.stop)
            ctx.files.close()

    routes = [*libretranslate.routes(ctx), *opuscat.routes(ctx), Route("/nmt/stats", stats_route(ctx), methods=["GET"])]
    middleware = [
        Middleware(RequestLog, ctx=ctx),
        Middleware(opuscat.CaseInsensitivePaths),
        Middleware(CORSMiddleware, allow_origins=list(ctx.settings.cors), allow_methods=["GET", "POST"],
                   allow_headers=["Authorization", "Content-Type"], expose_headers=["Authorization"],
                   max_age=60 * 60 * 24 * 20),
    ]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                     exception_handlers={ApiError: api_error, HTTPException: http_error, Exception: server_error})
