"""What every route shares: the settings, the models, the counters and log, the rate limiter, the file
store; and the request helpers every API needs (the caller's key checked, a body read within its limit,
a translation awaited within the timeout)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from nmt_desktop.server.access import RateLimiter, matching_key
from nmt_desktop.server.batcher import QueueFull
from nmt_desktop.server.errors import ApiError
from nmt_desktop.server.events import EventLog, Stats
from nmt_desktop.server.file_jobs import FileStore
from nmt_desktop.server.routing import Models
from nmt_desktop.server.settings import ServerSettings


@dataclass
class ServerContext:
    settings: ServerSettings
    models: Models
    log: EventLog
    files: FileStore
    stats: Stats = field(default_factory=Stats)
    limiter: RateLimiter = field(init=False)

    def __post_init__(self) -> None:
        self.limiter = RateLimiter(self.settings.rate_per_minute, self.settings.keys)

    def queued(self) -> int:
        return sum(m.worker.waiting for m in self.models.served)

    def check_access(self, request: Request, given: Any) -> None:
        """A key is needed when keys are configured: missing -> 400 and a wrong one -> 403 (LibreTranslate's
        codes and words); then the caller's token bucket (429)."""
        given = given if isinstance(given, str) else None
        key = None
        if self.settings.keys:
            if not given:
                raise ApiError(400, "Please contact the server operator to get an API key")
            key = matching_key(given, self.settings.keys)
            if key is None:
                raise ApiError(403, "Invalid API key")
        caller = key if key is not None else (request.client.host if request.client else "unknown")
        if not self.limiter.allow(caller, key):
            raise ApiError(429, "Slowdown: too many requests from this key or address; try again in a moment")

    async def body(self, request: Request, limit: int) -> bytes:
        """The request's body, refused (400) once it is larger than `limit` bytes, before reading it all."""
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ApiError(400, f"Invalid request: the body ({int(declared)} bytes) is larger than this server "
                                f"takes ({limit} bytes)")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ApiError(400, f"Invalid request: the body is larger than this server takes ({limit} bytes)")
            chunks.append(chunk)
        data = b"".join(chunks)
        request._body = data  # Starlette's form() and json() read it from here  # noqa: SLF001
        return data

    async def wait(self, future: "asyncio.Future[Any]") -> Any:
        """A decode thread's answer within the timeout (503 after it); a failure in one sentence (500)."""
        try:
            return await asyncio.wait_for(future, self.settings.limits.timeout_s)
        except asyncio.TimeoutError:
            raise ApiError(503, f"the translation took longer than {self.settings.limits.timeout_s:g} s; "
                                "try a shorter text or again later") from None
        except ApiError:
            raise
        except Exception as exc:  # noqa: BLE001  (a decode failure, said in one sentence)
            raise ApiError(500, f"Cannot translate text: {exc}") from None


def queue_full(exc: QueueFull) -> ApiError:
    return ApiError(429, f"Slowdown: {exc}")


def note(request: Request, segments: int = 0, characters: int = 0, model: str | None = None) -> None:
    """What the request log and the counters say about this request (app.py's middleware reads it)."""
    state = request.scope.setdefault("state", {})
    state["nmt_segments"], state["nmt_characters"], state["nmt_model"] = segments, characters, model
