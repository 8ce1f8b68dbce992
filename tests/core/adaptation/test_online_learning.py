"""Online learning from each confirmed segment (core/adaptation/online_learning.py, issue 45) with the tiny trained
model and a real memory path: a confirmed pair lowers its own loss and comes back after enough steps; nothing
learned (or learning off) is the parent bit for bit; the learned weights and Adam's moments reload exactly from
the file beside the memory; clear brings the parent back and deletes the file."""

from __future__ import annotations

import copy

import pytest
import torch

from nmt_desktop.core.adaptation.learned_weights import LearnedWeights, LearnedWeightsError, fingerprint
from nmt_desktop.core.adaptation.online_learning import OnlineLearner, OnlineLearning
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.translator import Translator

SOURCE, EDITED = "red cat runs", "rennt katze rot"  # a post-edit the model would never give (it keeps word order)
EARLIER = [("blue dog sleeps", "blau hund schlaeft"), ("the small green bird", "der kleine gruene vogel")]
CFG = DecodeConfig()
ON = OnlineLearning(enabled=True)  # the defaults, learning on (as by default; the app attaches with it off)


def fresh(tiny_trained, backend: str = "auto") -> Translator:
    """A translator over its own copy of the tiny model (learning changes weights in place)."""
    model, tokenizers = tiny_trained
    return Translator(copy.deepcopy(model), tokenizers, backend=backend)


def weights(tr: Translator) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in tr.model.named_parameters()}


def test_a_confirmed_pair_lowers_its_own_loss(tiny_trained, tmp_path):
    tr = fresh(tiny_trained)
    learner = OnlineLearner.attach(tr, tmp_path / "memory.sqlite", EARLIER, ON)
    with torch.no_grad():
        before = learner.loss([(SOURCE, EDITED)]).item()
    learner.learn([(SOURCE, EDITED)])
    with torch.no_grad():
        after = learner.loss([(SOURCE, EDITED)]).item()
    assert after < before
    assert not tr.model.training


@pytest.mark.parametrize("backend", ["reference", "python", "compiled"])
def test_the_next_translation_uses_the_learned_weights(tiny_trained, tmp_path, backend):
    tr = fresh(tiny_trained, backend)
    assert tr.translate(SOURCE, CFG).text != EDITED  # prepares the backend's weights (a snapshot)
    strong = OnlineLearning(enabled=True, lr=3e-3, steps=10, l2sp=0.0)
    learner = OnlineLearner.attach(tr, tmp_path / "memory.sqlite", [], strong)
    learner.learn([(SOURCE, EDITED)])
    tr.weights_changed()
    assert tr.translate(SOURCE, CFG).text == EDITED


def test_nothing_learned_or_learning_off_is_the_parent_bit_for_bit(tiny_trained, tmp_path):
    texts = [SOURCE, "the small green bird sees the big red cat", "blue dog sleeps"]
    plain = fresh(tiny_trained).translate_batch(texts, CFG)
    tr = fresh(tiny_trained)
    parent = weights(tr)
    assert OnlineLearner.attach(tr, tmp_path / "memory.sqlite", EARLIER) is None  # off, nothing kept: not even read
    learner = OnlineLearner.attach(tr, tmp_path / "memory.sqlite", EARLIER, ON)  # nothing kept beside the memory
    learner.learn([("  ", EDITED), (SOURCE, "")])  # nothing to learn from
    learner.save()
    assert not list(tmp_path.glob("*.safetensors"))
    assert all(torch.equal(p, parent[n]) for n, p in tr.model.named_parameters())
    for a, b in zip(plain, tr.translate_batch(texts, CFG)):
        assert a.best.token_ids == b.best.token_ids and a.best.token_logprobs == b.best.token_logprobs


def test_the_learned_weights_reload_and_a_resumed_run_goes_on_as_one(tiny_trained, tmp_path):
    memory = tmp_path / "memory.sqlite"
    pairs = [EARLIER[0], (SOURCE, EDITED), EARLIER[1]]
    whole = fresh(tiny_trained)
    one = OnlineLearner.attach(whole, tmp_path / "other.sqlite", [], ON)
    for pair in pairs:
        one.learn([pair])
    first = fresh(tiny_trained)
    learner = OnlineLearner.attach(first, memory, [], ON)
    learner.learn([pairs[0]])
    learner.learn([pairs[1]])
    learner.save()
    kept = list(tmp_path.glob("memory.sqlite.learned-*.safetensors"))
    assert [p.name for p in kept] == [f"memory.sqlite.learned-{fingerprint(fresh(tiny_trained).model)}.safetensors"]
    again = fresh(tiny_trained)
    resumed = OnlineLearner.attach(again, memory, pairs[:2], ON)  # the memory's pairs, as the CLI passes them
    assert all(torch.equal(p, dict(first.model.named_parameters())[n]) for n, p in again.model.named_parameters())
    resumed.learn([pairs[2]])
    assert all(torch.equal(p, dict(whole.model.named_parameters())[n]) for n, p in again.model.named_parameters())


def test_clear_brings_back_the_parent_and_deletes_the_file(tiny_trained, tmp_path):
    tr = fresh(tiny_trained)
    parent = weights(tr)
    learner = OnlineLearner.attach(tr, tmp_path / "memory.sqlite", EARLIER, ON)
    learner.learn([(SOURCE, EDITED)])
    learner.save()
    assert learner.store.path.is_file()
    assert not all(torch.equal(p, parent[n]) for n, p in tr.model.named_parameters())
    learner.clear()
    assert not learner.store.path.exists()
    assert all(torch.equal(p, parent[n]) for n, p in tr.model.named_parameters())
    assert OnlineLearner.attach(fresh(tiny_trained), tmp_path / "memory.sqlite", []) is None


def test_int8_does_not_learn(tiny_trained, tmp_path):
    model, tokenizers = tiny_trained
    assert OnlineLearner.attach(Translator(copy.deepcopy(model), tokenizers, int8=True), tmp_path / "m.sqlite", [],
                                ON) is None


def test_a_damaged_file_is_one_sentence_naming_it(tiny_trained, tmp_path):
    tr = fresh(tiny_trained)
    store = LearnedWeights(tmp_path / "memory.sqlite", fingerprint(tr.model))
    store.path.write_bytes(b"not safetensors")
    with pytest.raises(LearnedWeightsError) as caught:
        OnlineLearner.attach(tr, tmp_path / "memory.sqlite", [])
    assert str(caught.value).startswith(f"{store.path}: cannot read the learned weights")


def test_the_gate_gives_the_learned_weights_to_text_like_the_memorys_segments_only():
    from nmt_desktop.core.adaptation.online_learning import OnlineLearner, OnlineLearning

    learner = OnlineLearner.__new__(OnlineLearner)
    learner.settings, learner._short = OnlineLearning(), (-1, 0)
    learner.seen = [("one two three four five six", "x")] * 3
    assert learner.wants_learned("short", True) and not learner.wants_learned("short", False)  # under 10: any length
    learner.seen = [(" ".join(["w"] * n), "x") for n in range(5, 25)]  # 20 segments of 5-24 words: tenth at 6
    assert learner.short_length() == 6
    assert not learner.wants_learned("five words are too few", True)
    assert learner.wants_learned("six words are just long enough", True)
    assert not learner.wants_learned("six words but no memory match", False)
    assert learner.wants_learned("five words, an exact match", True, exact=True)  # the memory's own translation
    learner.settings = OnlineLearning(gate=False)
    assert learner.wants_learned("short", False)


def test_clear_also_deletes_the_states_kept_for_the_learned_weights(tiny_trained, tmp_path):
    memory = tmp_path / "memory.sqlite"
    learner = OnlineLearner.attach(fresh(tiny_trained), memory, EARLIER, ON)
    learner.learn([(SOURCE, EDITED)])
    learner.save()
    tr = fresh(tiny_trained)
    later = OnlineLearner.attach(tr, memory, [])  # as the app loads what was learned
    kept = tmp_path / f"memory.sqlite.states-{later.loaded_fingerprint}"
    assert later.loaded_fingerprint == fingerprint(tr.model) != fingerprint(fresh(tiny_trained).model)
    kept.mkdir()
    (kept / "000000-abc.safetensors").write_bytes(b"states")
    parents = tmp_path / f"memory.sqlite.states-{fingerprint(fresh(tiny_trained).model)}"
    parents.mkdir()  # the parent's own states stay
    later.clear()
    assert not kept.exists() and parents.is_dir() and not later.store.path.exists()


def test_after_learning_an_exact_match_is_decoded_under_the_new_weights_a_fuzzy_one_is_not(tiny_trained, tmp_path):
    """A repeat is recognised by its states lying at distance ~0 from its segment's, which holds only for states
    of the current weights; other matches keep the states they were decoded under (cheaper, as good)."""
    from nmt_desktop.core.adaptation.memory_use import MemorySource
    from nmt_desktop.core.decoding.memory_states import decoded_states, forced_states, segment_row

    tr = fresh(tiny_trained)
    exact, fuzzy = MemorySource(1, SOURCE, EDITED, 1.0), MemorySource(2, *EARLIER[0], 0.8)
    rows = [segment_row(tr.model, 0, s, tr.source_ids, tr._target_ids) for s in (exact, fuzzy)]
    cache = tr._memory_keys
    before = decoded_states(tr.model, rows, tr.batch_ids, cache)
    learner = OnlineLearner.attach(tr, tmp_path / "memory.sqlite", [], OnlineLearning(enabled=True, lr=3e-3))
    learner.learn([(SOURCE, EDITED)])
    tr.weights_changed()
    after = decoded_states(tr.model, rows, tr.batch_ids, cache)
    now = forced_states(tr.model, tr.batch_ids([rows[0][2]]), [rows[0][3]])[0]
    assert not torch.allclose(before[0], now, atol=1e-3)  # the weights did change what the segment's states are
    assert torch.allclose(after[0], now, atol=1e-5)  # the exact match: decoded anew
    assert after[1] is before[1]  # the fuzzy one: the states decoded before, not decoded again
    assert decoded_states(tr.model, rows, tr.batch_ids, cache)[0] is after[0]  # and anew only once per change
