"""The app's own parts in process (through httpx's ASGI transport): a route's unexpected failure is answered
500 in one sentence by the request log, which still writes its event and counts the error (past it, uvicorn
would drop the client's connection); the token bucket; the keys file's errors."""

from __future__ import annotations

import asyncio
import io
import json

import httpx
import pytest
from starlette.routing import Route

from nmt_desktop.server.access import KeyFileError, TokenBucket, is_loopback, matching_key, read_keys
from nmt_desktop.server.app import build_app
from nmt_desktop.server.context import ServerContext
from nmt_desktop.server.events import EventLog
from nmt_desktop.server.file_jobs import FileStore
from nmt_desktop.server.routing import Models
from nmt_desktop.server.settings import ServerSettings

pytestmark = pytest.mark.xdist_group("server")


def test_an_unexpected_failure_is_answered_500_in_one_sentence_logged_and_counted(tmp_path):
    out = io.StringIO()
    ctx = ServerContext(ServerSettings(log_json=True), Models([]), EventLog(True, out=out), FileStore(tmp_path, 60))
    app = build_app(ctx)

    async def boom(request):
        raise KeyError("lost")

    app.router.routes.append(Route("/boom", boom))

    async def run() -> tuple[httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            return await c.get("/boom"), await c.get("/health")

    failed, health = asyncio.run(run())
    assert (failed.status_code, failed.json()) == (500, {"error": "Cannot translate text: KeyError: 'lost'"})
    assert health.json() == {"status": "ok"}
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(e["path"], e["status"]) for e in events] == [("/boom", 500), ("/health", 200)]
    assert (ctx.stats.requests, ctx.stats.errors) == (2, 1)


def test_the_token_bucket_allows_its_rate_then_refills():
    bucket = TokenBucket(rate=2)  # two a minute, bursts of two
    assert [bucket.take(100.0), bucket.take(100.0), bucket.take(100.0)] == [True, True, False]
    assert bucket.take(115.0) is False and bucket.take(130.0) is True  # one token back after 30 s


def test_keys_loopback_and_the_keys_file(tmp_path):
    assert matching_key("alpha", {"alpha": None, "beta": 5.0}) == "alpha"
    assert matching_key("alph", {"alpha": None}) is None and matching_key("", {"alpha": None}) is None
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.2", "example.org"]))
    good = tmp_path / "keys.txt"
    good.write_text("alpha\n# comment\n\nbeta 30  # thirty a minute\n", encoding="utf-8")
    assert read_keys(good) == {"alpha": None, "beta": 30.0}
    bad = tmp_path / "bad.txt"
    bad.write_text("alpha\nbeta fast\n", encoding="utf-8")
    with pytest.raises(KeyFileError, match=r"bad.txt, line 2: the rate must be a positive number .* got 'fast'"):
        read_keys(bad)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(KeyFileError, match="holds no key"):
        read_keys(empty)


def test_a_multilingual_model_serves_a_pair_per_target_token(tiny_trained, tmp_path):
    from tiny_models import multilingual_translator

    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.server.run import served_models

    translator = multilingual_translator(tiny_trained, [">>fra<<", ">>spa<<"])
    settings = ServerSettings()
    models = served_models([translator], settings)
    ctx = ServerContext(settings, models, EventLog(True, out=io.StringIO()), FileStore(tmp_path, 60))
    try:
        assert models.describe() == [{"name": "multi", "source": "und", "target": "fra"},
                                     {"name": "multi", "source": "und", "target": "spa"}]

        async def run() -> list[dict]:
            transport = httpx.ASGITransport(app=build_app(ctx))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                return [(await c.post("/translate", json={"q": ["red cat runs", "big dog"], "source": "und",
                                                          "target": target})).json()
                        for target in ("SPA", "fra")]

        spa, fra = asyncio.run(run())
        for answer, code in ((spa, "spa"), (fra, "fra")):
            direct = multilingual_translator(tiny_trained, [">>fra<<", ">>spa<<"])
            direct.target_language = code
            cfg = DecodeConfig(attention=True, alternatives=0)
            assert answer["translatedText"] == [t.text for t in direct.translate_batch(["red cat runs", "big dog"], cfg)]
    finally:
        models.stop()


def test_connections_are_accepted_with_nagle_off():
    """With Nagle's algorithm on, a response's body (a second small write after its headers) waited for the
    client's delayed ACK: 40 ms on every keep-alive request. asyncio turns it off only on sockets whose proto
    is TCP, so the listening socket must be made so (and carry TCP_NODELAY for what accepts it)."""
    import socket

    from nmt_desktop.server.run import bind

    listening = bind("127.0.0.1", 0)
    client = socket.create_connection(listening.getsockname(), timeout=5)
    try:
        listening.setblocking(True)
        accepted, _ = listening.accept()
        with accepted:
            assert accepted.proto == socket.IPPROTO_TCP
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        client.close()
        listening.close()
