"""The memory segments' forced states kept beside the memory per model (core/adaptation/kept_states.py): a fresh
translator reads them instead of decoding the segments again and translates the same; an edited entry, another
model or changed weights never reuse them; an unreadable shard is passed over; many shards are merged."""

from __future__ import annotations

import pytest
import torch

from nmt_desktop.core.adaptation import kept_states
from nmt_desktop.core.adaptation.kept_states import KeptStates, model_fingerprint, state_name
from nmt_desktop.core.adaptation.settings import Adaptation
from nmt_desktop.core.decoding import memory_states
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.memory import Entry, Pair, TranslationMemory

PAIR = Pair.of("en", "xx")
TEXTS = ["red cat runs", "blue dog sleeps", "the small green bird sees the big red cat"]


@pytest.fixture
def memory(tmp_path):
    with TranslationMemory(tmp_path / "memory.sqlite") as tm:
        tm.add([Entry("red cat runs", "rennt katze rot", PAIR, origin="confirmed"),
                Entry("blue dog sleeps", "schlaeft hund blau", PAIR, origin="confirmed")])
        yield tm


@pytest.fixture
def decoded(monkeypatch):
    """The targets of every forced pass."""
    seen: list[list[int]] = []
    real = memory_states.forced_states

    def counting(model, src, targets):
        seen.extend(list(t) for t in targets)
        return real(model, src, targets)

    monkeypatch.setattr(memory_states, "forced_states", counting)
    return seen


def fresh(tiny_trained, memory, int8=False) -> Translator:
    model, tokenizers = tiny_trained
    tr = Translator(model, tokenizers, int8=int8)
    tr.adaptation = Adaptation(memory, PAIR, min_score=40.0)
    return tr


def test_a_fresh_translator_reads_the_kept_states_and_translates_the_same(tiny_trained, memory, decoded):
    first = fresh(tiny_trained, memory).translate_batch(TEXTS)
    assert len(decoded) == 2  # both segments, once
    folders = list(memory.path.parent.glob("memory.sqlite.states-*"))
    assert len(folders) == 1 and len(list(folders[0].glob("*.safetensors"))) == 1
    again = fresh(tiny_trained, memory).translate_batch(TEXTS)
    assert len(decoded) == 2  # nothing decoded again
    for a, b in zip(first, again):
        assert a.best.token_ids == b.best.token_ids and a.best.token_logprobs == b.best.token_logprobs
        assert a.memory_matches == b.memory_matches


def test_an_edited_entry_is_decoded_anew(tiny_trained, memory, decoded):
    fresh(tiny_trained, memory).translate_batch(TEXTS)
    entry = memory.exact("red cat runs", PAIR)[0].entry
    with memory.db:  # the entry's target edited in place (same id)
        memory.db.execute("UPDATE entries SET target=? WHERE id=?", ("rot katze rennt", entry.id))
    assert memory.exact("red cat runs", PAIR)[0].entry.target == "rot katze rennt"
    fresh(tiny_trained, memory).translate_batch(TEXTS)
    assert len(decoded) == 3 and decoded[2] not in decoded[:2]  # the edited segment only, with its new target


def test_another_model_or_changed_weights_keep_nothing_for_each_other(tiny_trained, memory, decoded):
    fresh(tiny_trained, memory).translate_batch(TEXTS)
    fresh(tiny_trained, memory, int8=True).translate_batch(TEXTS)  # an int8 copy: other states
    assert len(decoded) == 4
    assert len(list(memory.path.parent.glob("memory.sqlite.states-*"))) == 2
    tr = fresh(tiny_trained, memory)
    tr.weights_changed()  # online learning changed the weights in place
    tr.translate_batch(TEXTS)
    assert len(decoded) == 6  # not read from the loaded model's file
    shards = sorted(p.name for p in memory.path.parent.glob("memory.sqlite.states-*/*.safetensors"))
    assert len(shards) == 2  # nor written there


def test_an_unreadable_shard_is_passed_over(tiny_trained, memory, decoded):
    fresh(tiny_trained, memory).translate_batch(TEXTS)
    (shard,) = memory.path.parent.glob("memory.sqlite.states-*/*.safetensors")
    shard.write_bytes(b"not a safetensors file")
    again = fresh(tiny_trained, memory).translate_batch(TEXTS)
    assert len(decoded) == 4 and again[0].memory_matches


def test_past_the_limit_the_shards_are_merged_keeping_each_entrys_latest(tmp_path, monkeypatch):
    monkeypatch.setattr(kept_states, "SHARDS", 3)
    kept = KeptStates(tmp_path / "m.sqlite", "f" * 16)
    for i in range(5):
        kept.put({state_name(i, f"s{i}", "t"): torch.full((2, 3), float(i))})
    kept.put({state_name(0, "s0", "edited"): torch.full((2, 3), 9.0)})
    later = KeptStates(tmp_path / "m.sqlite", "f" * 16)
    assert later.get(state_name(4, "s4", "t")).tolist() == [[4.0] * 3] * 2
    assert len(list(later.folder.glob("*.safetensors"))) == 1
    assert later.get(state_name(0, "s0", "edited"))[0, 0] == 9.0 and later.get(state_name(0, "s0", "t")) is None
    assert model_fingerprint(torch.nn.Linear(2, 2), False) != model_fingerprint(torch.nn.Linear(2, 2), True)


def test_a_folder_that_cannot_be_written_keeps_nothing_and_translates_the_same(tiny_trained, memory, decoded):
    expected = fresh(tiny_trained, memory).translate_batch(TEXTS)
    (folder,) = memory.path.parent.glob("memory.sqlite.states-*")
    for shard in folder.iterdir():
        shard.unlink()
    folder.rmdir()
    folder.write_text("a file where the folder goes")  # mkdir fails as on a read-only place
    got = fresh(tiny_trained, memory).translate_batch(TEXTS)
    assert [t.text for t in got] == [t.text for t in expected] and len(decoded) == 4
    assert folder.read_text() == "a file where the folder goes"


def test_what_this_process_kept_is_read_back_from_its_shard(tmp_path):
    kept = KeptStates(tmp_path / "m.sqlite", "e" * 16)
    assert kept.get(state_name(1, "a", "b")) is None
    kept.put({state_name(1, "a", "b"): torch.arange(6.0).reshape(2, 3)})
    assert kept.get(state_name(1, "a", "b")).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert kept.get(state_name(1, "a", "edited")) is None


def test_a_kept_state_of_another_shape_is_decoded_again(tiny_trained, memory, decoded):
    first = fresh(tiny_trained, memory).translate_batch(TEXTS)
    (folder,) = memory.path.parent.glob("memory.sqlite.states-*")
    entry = memory.exact("red cat runs", PAIR)[0].entry
    KeptStates(memory.path, folder.name.split("-")[-1]).put(  # a later shard wins: the wrong length
        {state_name(entry.id, entry.source, entry.target): torch.zeros(2, tiny_trained[0].config.d_model)})
    again = fresh(tiny_trained, memory).translate_batch(TEXTS)
    assert len(decoded) == 3 and [t.text for t in again] == [t.text for t in first]


def test_the_fingerprint_names_float_models_as_learned_weights_do_and_int8_ones_by_their_packed_weights():
    from random_models import random_model

    from nmt_desktop.core.adaptation.learned_weights import fingerprint
    from nmt_desktop.core.decoding.int8 import quantize_int8

    model = random_model(seed=0)
    assert model_fingerprint(model, False) == fingerprint(model)
    one, other = quantize_int8(random_model(seed=0)), quantize_int8(random_model(seed=0))
    assert model_fingerprint(one, True) == model_fingerprint(other, True)
    fc1 = other.encoder_layers[0].ffn.fc1  # one packed weight changed, nothing else
    weight, bias = fc1._packed_params._weight_bias()
    fc1.set_weight_bias(torch.quantize_per_tensor(weight.dequantize() * 2, 0.1, 0, torch.qint8), bias)
    assert model_fingerprint(one, True) != model_fingerprint(other, True)
