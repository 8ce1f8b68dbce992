"""Many clients at once: 32 concurrent clients get exactly the answers they get one at a time (batching
never changes a translation), SIGTERM lets a request in flight finish before the process exits 0, and a
request past --timeout gets 503 while the server goes on (test_server_batcher.py: batching itself)."""

from __future__ import annotations

import asyncio
import signal

import httpx
import pytest
from server_process import BUNDLED, start_server

pytestmark = pytest.mark.xdist_group("server")

SENTENCES = [
    "The cat sleeps on the sofa.", "I would like a cup of coffee, please.", "Where is the train station?",
    "My brother lives in a small village near the sea.", "It is raining today.", "We are going to the cinema tonight.",
    "She reads a book every week.", "The children are playing in the garden.", "Can you help me with my homework?",
    "This restaurant serves the best pizza in town.", "He forgot his keys at the office.", "Open the window, please.",
    "The museum is closed on Mondays.", "They bought a new car last year.", "I have never seen such a beautiful sunset.",
    "Please call me when you arrive.", "The meeting starts at nine o'clock.", "Dogs are loyal animals.",
    "Tomorrow we will visit our grandparents.", "The water in the lake is very cold.", "Why are you laughing?",
    "A man in a red shirt is riding a bicycle.", "Two women are talking in the street.", "The soup is too hot.",
    "I lost my umbrella on the bus.", "Our teacher explained the lesson again.", "The shop sells fresh bread.",
    "Turn left at the next corner.", "Music helps me to relax.", "The baby is sleeping in the next room.",
    "Snow covered the mountains during the night.", "Thank you for your letter.",
]


def test_32_concurrent_clients_get_the_sequential_answers(server, client):
    requests = [{"q": s, "source": "en", "target": "de" if n % 2 else "fr"} for n, s in enumerate(SENTENCES)]
    requests[5] = {"q": [SENTENCES[5], SENTENCES[6]], "source": "en", "target": "de"}  # a q list among them
    requests[7] = {"q": "The <i>small</i> dog sleeps.", "source": "en", "target": "de", "format": "html"}
    assert len(requests) == 32
    sequential = [client.post("/translate", json=r).json() for r in requests]

    async def all_at_once() -> list[dict]:
        gate = asyncio.Event()

        async def one(payload: dict) -> dict:
            async with httpx.AsyncClient(base_url=server.url, timeout=120) as c:  # a client of its own
                await gate.wait()
                r = await c.post("/translate", json=payload)
                assert r.status_code == 200, r.text
                return r.json()

        tasks = [asyncio.ensure_future(one(r)) for r in requests]
        await asyncio.sleep(0.05)
        gate.set()
        return await asyncio.gather(*tasks)

    for _ in range(2):
        assert asyncio.run(all_at_once()) == sequential


def test_sigterm_lets_the_request_in_flight_finish_and_exits_0():
    server = start_server("--max-list", "200", models=[BUNDLED[0]])
    try:
        texts = [f"{SENTENCES[n % 32]} {SENTENCES[(n + 7) % 32]}" for n in range(64)]
        sender, answer = server.post_in_background({"q": texts, "source": "en", "target": "de"})
        server.wait_until_queued()
        code = server.stop(signal.SIGTERM)
        sender.join(60)
        assert code == 0, "".join(server.stderr)[-2000:]
        assert answer["status"] == 200 and len(answer["body"]["translatedText"]) == 64
        assert all(answer["body"]["translatedText"])
        events = []
        while not server.events.empty():
            events.append(server.events.get_nowait())
        assert events[-1] == {"event": "stopped"}
        assert any(e.get("path") == "/translate" and e.get("status") == 200 and e.get("segments") == 64 for e in events)
        assert "Traceback" not in "".join(server.stderr)
    finally:
        server.kill()


def test_a_request_past_the_timeout_gets_503_and_the_server_goes_on():
    server = start_server("--timeout", "0.01", "--max-list", "200", models=[BUNDLED[0]])
    try:
        with server.client() as c:
            texts = [f"{SENTENCES[n % 32]} {SENTENCES[(n + 3) % 32]}" for n in range(64)]  # far over 10 ms of decoding
            r = c.post("/translate", json={"q": texts, "source": "en", "target": "de"})
            assert (r.status_code, r.json()) == (503, {"error": "the translation took longer than 0.01 s; try a "
                                                                "shorter text or again later"})
            assert c.get("/health").json() == {"status": "ok"}
            assert c.get("/MtRestService/ListSupportedLanguagePairs").json() == ["en-de"]
        assert server.stop(signal.SIGTERM) == 0
    finally:
        server.kill()
