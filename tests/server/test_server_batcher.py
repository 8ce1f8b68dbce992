"""The decode thread itself (nmt_desktop/server/batcher.py), in process on the bundled en-de model, with whole
batches and with continuous batching (continuous_decoding.py): requests waiting together are decoded in one
batch with the answers each gets alone, a request of another decoding (alternatives' beam) waits for its own
batch, one failing request does not fail the others, and the queue refuses what would take it past its bound."""

from __future__ import annotations

import asyncio
import threading

import pytest

from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.server.batcher import DecodeKey, DecodeWorker, QueueFull
from nmt_desktop.server.segments import text_segment
from server_process import BUNDLED

pytestmark = pytest.mark.xdist_group("server")

TEXTS = ["The cat sleeps.", "I like green apples.", "Where is the station?", "It is raining.",
         "We are going home.", "The dog is small."]


@pytest.fixture(scope="module")
def translator() -> Translator:
    return Translator.load(BUNDLED[0])


def _texts(results) -> str:
    return "\n".join(r.target for r in results)


async def _held(worker: DecodeWorker) -> tuple[threading.Event, asyncio.Future]:
    """Keep the decode thread busy on a call (so that requests queue up) until the returned event is set; the
    call's future to await after setting it."""
    held, release = threading.Event(), threading.Event()
    blocker = worker.call(lambda _t: (held.set(), release.wait(30)))
    await asyncio.get_running_loop().run_in_executor(None, held.wait, 30)
    return release, blocker


@pytest.mark.parametrize("continuous", [False, True], ids=["whole-batches", "continuous"])
def test_waiting_requests_share_one_batch_and_get_their_own_answers(translator, continuous):
    worker = DecodeWorker(translator, None, "test", batch_size=32, window_s=0.0, continuous=continuous)
    assert worker.continuous == continuous  # the bundled model runs on the compiled backend
    try:
        async def run() -> tuple[list[str], list[str], int]:
            alone = [await worker.translate(text_segment(t).blocks, DecodeKey(), _texts) for t in TEXTS]
            before = worker.batches
            release, blocker = await _held(worker)  # the thread busy: requests queue up
            futures = [worker.translate(text_segment(t).blocks, DecodeKey(), _texts) for t in TEXTS]
            assert worker.waiting == 1 + len(TEXTS)
            release.set()
            await blocker
            together = list(await asyncio.gather(*futures))
            return alone, together, worker.batches - before
        alone, together, batches = asyncio.run(run())
        assert together == alone and batches == 1 and worker.waiting == 0
    finally:
        worker.stop()


@pytest.mark.parametrize("continuous", [False, True], ids=["whole-batches", "continuous"])
def test_another_decoding_waits_for_its_own_batch_and_a_failure_stays_with_its_request(translator, continuous):
    worker = DecodeWorker(translator, None, "test", batch_size=32, window_s=0.0, continuous=continuous)
    try:
        async def run():
            release, blocker = await _held(worker)
            before = worker.batches
            greedy = worker.translate(text_segment(TEXTS[0]).blocks, DecodeKey(), _texts)
            beam = worker.translate(text_segment(TEXTS[1]).blocks, DecodeKey(4, 3), lambda r: len(r[0].sentences[0].nbest))
            broken = worker.translate(text_segment(TEXTS[2]).blocks, DecodeKey(), lambda r: 1 / 0)
            fine = worker.translate(text_segment(TEXTS[3]).blocks, DecodeKey(), _texts)
            release.set()
            await blocker
            results = await asyncio.gather(greedy, beam, broken, fine, return_exceptions=True)
            return results, worker.batches - before
        (greedy, beam, broken, fine), batches = asyncio.run(run())
        assert isinstance(greedy, str) and greedy and beam == 3 and isinstance(broken, ZeroDivisionError)
        assert isinstance(fine, str) and fine
        # whole batches: greedy | beam | the other two greedy ones together; continuous: the beam request runs
        # through the document pipeline, and the three greedy ones join the search together
        assert batches == (2 if continuous else 3)
    finally:
        worker.stop()


def test_the_queue_refuses_what_would_pass_its_bound(translator):
    worker = DecodeWorker(translator, None, "test", max_queue=3)
    try:
        async def run():
            with pytest.raises(QueueFull, match=r"the decode queue is full \(0 segments waiting, at most 3\)"):
                worker.translate(text_segment("\n".join(TEXTS[:4])).blocks, DecodeKey(), _texts)
            return await worker.translate(text_segment("\n".join(TEXTS[:3])).blocks, DecodeKey(), _texts)
        assert asyncio.run(run()).count("\n") == 2
    finally:
        worker.stop()



def test_a_batch_waits_for_the_clients_the_last_batch_served_and_a_lone_client_for_none(translator):
    """Whole batches' policy (continuous batching waits for no one: a sentence joins at the next step)."""
    worker = DecodeWorker(translator, None, "test", batch_size=32, window_s=30.0, continuous=False)
    try:
        async def run() -> int:
            # a lone client on a fresh thread: no batch served several, so nothing is waited for (not 30 s)
            await asyncio.wait_for(worker.translate(text_segment(TEXTS[0]).blocks, DecodeKey(), _texts), 20)
            release, blocker = await _held(worker)
            first = [worker.translate(text_segment(t).blocks, DecodeKey(), _texts) for t in TEXTS[:3]]
            release.set()
            await blocker
            await asyncio.gather(*first)  # one batch served three clients
            before = worker.batches
            again = [worker.translate(text_segment(TEXTS[3]).blocks, DecodeKey(), _texts)]
            await asyncio.sleep(0.2)  # the other two come back a little later: the batch waits for them
            again += [worker.translate(text_segment(t).blocks, DecodeKey(), _texts) for t in TEXTS[4:6]]
            await asyncio.wait_for(asyncio.gather(*again), 25)
            return worker.batches - before
        assert asyncio.run(run()) == 1
    finally:
        worker.stop()


async def _three_together_then_one(worker: DecodeWorker) -> tuple[list, str]:
    """Three requests that queue up together (their outcomes, exceptions included), then a fourth alone."""
    release, blocker = await _held(worker)
    first = [worker.translate(text_segment(t).blocks, DecodeKey(), _texts) for t in TEXTS[:3]]
    release.set()
    await blocker
    failed = await asyncio.gather(*first, return_exceptions=True)
    return failed, await worker.translate(text_segment(TEXTS[3]).blocks, DecodeKey(), _texts)


def test_a_broken_step_fails_the_requests_in_the_search_and_the_next_ones_are_answered(translator, monkeypatch):
    """Continuous batching: when a step raises, every request with a sentence in the search gets the error (once),
    and a fresh search answers the requests that come after."""
    from nmt_desktop.core.decoding.continuous import ContinuousGreedy

    worker = DecodeWorker(translator, None, "test", batch_size=32, window_s=0.0)
    step, calls = ContinuousGreedy.step, []

    def breaks_once(self):
        calls.append(len(self.rows))
        if len(calls) == 2:
            raise RuntimeError("the step broke")
        return step(self)

    monkeypatch.setattr(ContinuousGreedy, "step", breaks_once)
    try:
        failed, after = asyncio.run(_three_together_then_one(worker))
        assert [str(f) for f in failed] == ["the step broke"] * 3 and calls[:2] == [3, 3]
        assert after == "Es regnet." and worker.waiting == 0
    finally:
        worker.stop()


def test_a_failed_encoding_fails_its_requests_and_the_next_ones_are_answered(translator, monkeypatch):
    """Continuous batching encodes on a thread of its own (encoding_thread.py): when an encoding raises, the
    requests of that group get the error (once each) and the decode thread goes on with the next ones."""
    from nmt_desktop.core.decoding.continuous import ContinuousGreedy

    worker = DecodeWorker(translator, None, "test", batch_size=32, window_s=0.0)
    prepare, encoded = ContinuousGreedy.prepare, []

    def breaks_first(self, units):
        encoded.append([u.text for u in units])
        if len(encoded) == 1:
            raise RuntimeError("the encoder broke")
        return prepare(self, units)

    monkeypatch.setattr(ContinuousGreedy, "prepare", breaks_first)
    try:
        failed, after = asyncio.run(_three_together_then_one(worker))
        assert [str(f) for f in failed] == ["the encoder broke"] * 3 and encoded[0] == TEXTS[:3]
        assert after == "Es regnet." and worker.waiting == 0
    finally:
        worker.stop()
    assert not [t for t in threading.enumerate() if t.name.startswith("encode-")]  # stopped with its decode thread


PIPELINE_TEXTS = ["What! This T-shirt is 3,000 yen? This is a rip-off!", "Here's $5.", "I had no more than 200 yen.",
                  "The cat sleeps on the sofa.", "Write to info@example.org about the cat.", "The dog is small.",
                  "She died when she was 54 years old."]


def test_lines_the_pipeline_prepares_join_the_search_and_get_the_pipelines_answers(translator, monkeypatch):
    """Continuous batching: lines with a number or an address to keep, or a glossary term, are decoded in the
    running search (no document pipeline run of their own) and finished as the pipeline finishes them
    (translate_document.finish_blocks: the number forced in where the model left it out, the term placed)."""
    from nmt_desktop.core.documents.glossary import Glossary, Term
    from nmt_desktop.server import batcher

    glossary = Glossary([Term("cat", "Mieze")])
    answers = {}
    for continuous in (False, True):
        worker = DecodeWorker(translator, glossary, "test", batch_size=32, window_s=0.0, continuous=continuous)
        piped = []
        monkeypatch.setattr(batcher, "translate_document", lambda *a, _f=batcher.translate_document, **k:
                            piped.append(1) or _f(*a, **k))
        try:
            async def run():
                release, blocker = await _held(worker)
                futures = [worker.translate(text_segment(t).blocks, DecodeKey(), _texts) for t in PIPELINE_TEXTS]
                release.set()
                await blocker
                return list(await asyncio.gather(*futures))
            answers[continuous] = asyncio.run(run())
        finally:
            worker.stop()
        assert bool(piped) != continuous  # whole batches run the pipeline; the continuous search does not
    assert answers[True] == answers[False]
    assert "3,000" in answers[True][0] and "$5" in answers[True][1] and "200" in answers[True][2]
    assert "Mieze" in answers[True][3] and "info@example.org" in answers[True][4] and "Mieze" in answers[True][4]
    assert "54" in answers[True][6].split() and "fünfundzwanzig" not in answers[True][6]  # the model's own: 25
