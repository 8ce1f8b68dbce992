"""Instant adaptation from the memory (core/adaptation, issue 45): the plain path when the memory has nothing,
a confirmed segment coming back, and which memory segment each token names; on every backend, greedy and beam,
float and int8, with a real SQLite memory and the tiny trained model."""

from __future__ import annotations

import pytest
import torch

from nmt_desktop.core.adaptation.settings import Adaptation
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends.choice import choose_backend
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.memory import Entry, Pair, TranslationMemory

PAIR = Pair.of("en", "xx")
BACKENDS = ["reference", "python", "compiled"]
SEARCHES = {"greedy": DecodeConfig(), "beam": DecodeConfig(beam_size=4, nbest=2)}
SOURCE = "red cat runs"
EDITED = "rennt katze rot"  # a post-edit the model would never give (it keeps word order)


@pytest.fixture
def memory(tmp_path):
    with TranslationMemory(tmp_path / "memory.sqlite") as tm:
        yield tm


def translator(tiny_trained, backend: str, int8: bool, memory: TranslationMemory | None) -> Translator:
    model, tokenizers = tiny_trained
    tr = Translator(model, tokenizers, int8=int8, backend=backend)
    tr.adaptation = None if memory is None else Adaptation(memory, PAIR, min_score=40.0)  # no tiny-task look-alikes
    return tr


@pytest.mark.parametrize("int8", [False, True], ids=["float", "int8"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("search", SEARCHES)
def test_a_memory_with_nothing_to_offer_is_the_model_bit_for_bit(tiny_trained, memory, backend, int8, search):
    cfg = SEARCHES[search]
    texts = ["red cat runs", "the small green bird sees the big red cat", "blue dog sleeps"]
    plain = translator(tiny_trained, backend, int8, None).translate_batch(texts, cfg)
    empty = translator(tiny_trained, backend, int8, memory).translate_batch(texts, cfg)
    memory.add([Entry("sun moon water tree house", "sonne mond wasser baum haus", PAIR, origin="confirmed")])
    unrelated = translator(tiny_trained, backend, int8, memory).translate_batch(texts, cfg)  # nothing above min score
    for adapted in (empty, unrelated):
        for a, b in zip(plain, adapted):
            assert [h.token_ids for h in a.nbest] == [h.token_ids for h in b.nbest]
            assert [h.token_logprobs for h in a.nbest] == [h.token_logprobs for h in b.nbest]  # exact, not close
            assert b.memory_matches == [] and b.best.memory is None


@pytest.mark.parametrize("int8", [False, True], ids=["float", "int8"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("search", SEARCHES)
def test_a_confirmed_segment_comes_back_when_its_source_does(tiny_trained, memory, backend, int8, search):
    cfg = SEARCHES[search]
    tr = translator(tiny_trained, backend, int8, memory)
    before = tr.translate(SOURCE, cfg).text
    assert before != EDITED
    memory.add([Entry("blue dog sleeps", "blau hund schlaeft", PAIR, origin="confirmed"),
                Entry(SOURCE, EDITED, PAIR, origin="confirmed")])
    after = tr.translate(SOURCE, cfg)
    assert after.text == EDITED
    edited_id = memory.search(SOURCE, PAIR)[0].entry.id
    assert [(m.entry_id, m.weight) for m in after.memory_matches][0] == (edited_id, 1.0)
    assert after.best.memory is not None and len(after.best.memory) == len(after.best.token_ids)
    for use in after.best.memory:  # every token, </s> included, voted for by the confirmed segment
        assert use is not None and use.sources[0].entry_id == edited_id and use.sources[0].target == EDITED
        assert 0.5 < use.share <= 1.0
    tr.adaptation.enabled = False  # the app's switch: the plain model again
    assert tr.translate(SOURCE, cfg).text == before


@pytest.mark.parametrize("search", SEARCHES)
def test_streamed_steps_name_the_memory_segment_and_keep_their_attention(tiny_trained, memory, search):
    memory.add([Entry(SOURCE, EDITED, PAIR, origin="confirmed"),
                Entry("green bird eats", "gruen vogel isst", PAIR, origin="confirmed")])
    ids = {e.source: e.id for e in memory.entries()}
    tr = translator(tiny_trained, "auto", False, memory)
    stream = tr.stream(SOURCE, SEARCHES[search])
    shown = []
    for step in stream:
        shown = step.shown_after(shown)
        assert step.cross_attention is not None and step.cross_attention.shape[-1] == len(stream.unit.source_ids)
    assert stream.result.text == EDITED
    assert all(s.memory is not None and s.memory.sources[0].entry_id == ids[SOURCE] for s in shown)
    # a sentence of its own: its tokens name the other segment, never the first one
    other = tr.translate("green bird eats", SEARCHES[search])
    assert other.memory_matches[0].entry_id == ids["green bird eats"]
    named = {src.entry_id for use in other.best.memory if use is not None for src in use.sources}
    assert ids["green bird eats"] in named
    assert all(abs(sum(s.weight for s in use.sources) - 1.0) < 1e-6 for use in other.best.memory
               if use is not None and use.sources)


def test_every_backend_gives_the_same_hidden_state(tiny_trained):
    model, _ = tiny_trained
    enc = model.encode(torch.tensor([[5, 6, 7, model.config.eos_id]]))
    start = torch.full((1,), model.config.decoder_start_id)
    hidden = {}
    for name in BACKENDS:
        backend = choose_backend(model, name)
        with torch.inference_mode():
            out = backend.step(backend.start(enc, 4), start, False, False, need_hidden=True)
            plain = backend.step(backend.start(enc, 4), start, False, False)
        assert plain.hidden is None and torch.equal(out.logits, plain.logits)
        hidden[name] = out.hidden
    assert hidden["reference"].shape == (1, model.config.d_model)
    for name in ("python", "compiled"):
        torch.testing.assert_close(hidden[name], hidden["reference"], rtol=1e-4, atol=1e-5)
    with torch.inference_mode():  # the hidden state is what the output projection reads
        torch.testing.assert_close(model.project(hidden["reference"]), choose_backend(model, "reference").step(
            choose_backend(model, "reference").start(enc, 4), start, False, False).logits)


@pytest.mark.parametrize("search", SEARCHES)
def test_in_a_batch_each_sentence_reads_only_its_own_matches(tiny_trained, memory, search):
    cfg = SEARCHES[search]
    memory.add([Entry(SOURCE, EDITED, PAIR, origin="confirmed"),
                Entry("blue dog sleeps", "schlaeft hund blau", PAIR, origin="confirmed")])
    ids = {e.source: e.id for e in memory.entries()}
    texts = [SOURCE, "blue dog sleeps", "sun moon water"]  # the last one matches nothing
    tr = translator(tiny_trained, "auto", False, memory)
    tr.adaptation.k = 64  # more neighbours than a sentence has keys: the other sentences' never count
    plain = translator(tiny_trained, "auto", False, None).translate_batch(texts, cfg)
    own, other, none = tr.translate_batch(texts, cfg)
    assert (own.text, other.text) == (EDITED, "schlaeft hund blau")
    for translation, source in ((own, SOURCE), (other, "blue dog sleeps")):
        named = {src.entry_id for use in translation.best.memory for src in use.sources}
        assert named == {ids[source]}
    assert none.memory_matches == [] and none.best.memory is None
    assert none.best.token_ids == plain[2].best.token_ids and none.best.token_logprobs == plain[2].best.token_logprobs


def test_a_remembered_segment_adapts_the_same_as_one_decoded_when_matched(tiny_trained, memory):
    from nmt_desktop.core.adaptation.memory_use import MemorySource

    memory.add([Entry(SOURCE, EDITED, PAIR, origin="confirmed")])
    entry = memory.exact(SOURCE, PAIR)[0].entry
    ahead = translator(tiny_trained, "auto", False, memory)
    ahead.remember([MemorySource(entry.id, entry.source, entry.target, 1.0),
                    MemorySource(entry.id + 1, "red " * 80, "rot " * 80, 1.0)])  # too long for the model: left out
    lazy = translator(tiny_trained, "auto", False, memory)
    a, b = ahead.translate(SOURCE), lazy.translate(SOURCE)
    assert a.text == b.text == EDITED and a.best.token_logprobs == b.best.token_logprobs


def test_held_lookups_search_each_text_once_and_see_a_later_confirmation(tmp_path):
    pair = Pair.of("en", "xx")
    with TranslationMemory(tmp_path / "held.sqlite") as tm:
        tm.add([Entry("red cat runs", "rennt katze rot", pair, origin="confirmed")])
        adaptation = Adaptation(tm, pair)
        searched = []
        search = tm.search
        tm.search = lambda *a, **k: searched.append(a[0]) or search(*a, **k)
        with adaptation.held_lookups():
            first = adaptation.lookup("red cat runs fast")
            assert adaptation.lookup("red cat runs fast") == first and searched == ["red cat runs fast"]
        tm.add([Entry("red cat runs fast", "rennt katze rot schnell", pair, origin="confirmed")])
        after = adaptation.lookup("red cat runs fast")  # nothing held after the block: the new segment is found
        assert len(searched) == 2 and len(after) == len(first) + 1


def test_a_match_under_knn_min_score_counts_as_a_match_but_builds_no_keys(tiny_trained, memory):
    """A weak match (score 35: under `knn_min_score`, 40) is found by the lookup (online learning's gate reads it)
    but adapts nothing: the plain model's translation, bit for bit; with the bar at 30 it builds the datastore."""
    from nmt_desktop.core.memory.fuzzy import score

    text = "the cat sees the dog"
    memory.add([Entry("the big red cat runs", "rennt katze rot gross", PAIR, origin="confirmed")])
    assert 30 <= score(text, "the big red cat runs") < 40
    plain = translator(tiny_trained, "auto", False, None).translate(text, DecodeConfig())
    tr = translator(tiny_trained, "auto", False, memory)
    tr.adaptation.min_score = 30.0
    assert [m.entry.source for m in tr.adaptation.lookup(text)] == ["the big red cat runs"]
    weak = tr.translate(text, DecodeConfig())
    assert weak.memory_matches == [] and weak.best.token_logprobs == plain.best.token_logprobs
    tr.adaptation.knn_min_score = 30.0
    assert [m.source for m in tr.translate(text, DecodeConfig()).memory_matches] == ["the big red cat runs"]
