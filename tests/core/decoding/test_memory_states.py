"""The memory segments' forced states (core/decoding/memory_states.py): a segment matched by several sentences of
a batch is decoded once, segments are decoded in length-sorted chunks, and the states are those of decoding each
segment alone (so the search's translations do not depend on how the segments were grouped)."""

from __future__ import annotations

import pytest
import torch

from nmt_desktop.core.adaptation.settings import Adaptation
from nmt_desktop.core.decoding import memory_states
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.memory import Entry, Pair, TranslationMemory

PAIR = Pair.of("en", "xx")
SEGMENTS = [("red cat runs", "rennt katze rot"), ("blue dog sleeps", "schlaeft hund blau"),
            ("the small green bird sees the big red cat", "sieht vogel gruen klein katze rot gross"),
            ("red dog runs", "rennt hund rot"), ("green cat sleeps", "schlaeft katze gruen")]


@pytest.fixture
def memory(tmp_path):
    with TranslationMemory(tmp_path / "memory.sqlite") as tm:
        tm.add([Entry(s, t, PAIR, origin="confirmed") for s, t in SEGMENTS])
        yield tm


@pytest.fixture
def passes(monkeypatch):
    """Each forced pass's segment targets, as the decoder received them."""
    seen: list[list[list[int]]] = []
    real = memory_states.forced_states

    def counting(model, src, targets):
        seen.append([list(t) for t in targets])
        return real(model, src, targets)

    monkeypatch.setattr(memory_states, "forced_states", counting)
    return seen


def test_a_segment_matched_by_several_sentences_is_decoded_once(tiny_trained, memory, passes):
    model, tokenizers = tiny_trained
    tr = Translator(model, tokenizers)
    tr.adaptation = Adaptation(memory, PAIR, min_score=40.0)
    texts = ["red cat runs", "red cat runs", "red dog runs", "blue dog sleeps"]
    _knn, used = tr.memory_mixture(texts, tr.search_backend())
    matched = {src.entry_id for sentence in used for src in sentence}
    decoded = [t for chunk in passes for t in chunk]
    assert sum(len(sentence) for sentence in used) > len(matched) >= 3  # the sentences share segments
    assert len(decoded) == len(matched)  # each once


def test_chunks_are_length_sorted_and_give_each_segment_its_own_states(tiny_trained, memory, passes, monkeypatch):
    model, tokenizers = tiny_trained
    monkeypatch.setattr(memory_states, "CHUNK", 2)
    tr = Translator(model, tokenizers)
    tr.adaptation = Adaptation(memory, PAIR, matches=5, min_score=1.0)
    texts = [s for s, _t in SEGMENTS]
    knn, used = tr.memory_mixture(texts, tr.search_backend())
    assert [len(chunk) for chunk in passes] == [2, 2, 1]
    lengths = [len(t) for chunk in passes for t in chunk]
    assert lengths == sorted(lengths)
    for sentence in used:
        rows = [memory_states.segment_row(model, 0, src, tr.source_ids, tr._target_ids) for src in sentence]
        for row in rows:  # each segment's keys are its states decoded alone
            alone = memory_states.forced_states(model, tr.batch_ids([row[2]]), [row[3]])[0]
            cached = tr._memory_keys.get((row[1].entry_id, row[1].source, row[1].target))
            torch.testing.assert_close(cached, alone, rtol=1e-4, atol=1e-5)
    assert knn is not None
    assert knn.store.counts.tolist() == [sum(len(row[3]) for row in (memory_states.segment_row(
        model, 0, src, tr.source_ids, tr._target_ids) for src in sentence)) for sentence in used]


def test_a_segment_is_tokenized_once_however_often_it_is_matched(tiny_trained, memory, passes):
    model, tokenizers = tiny_trained
    tr = Translator(model, tokenizers)
    tr.adaptation = Adaptation(memory, PAIR, min_score=40.0)
    tokenized: list[str] = []
    real = tr.source_ids

    def counting(text, *args, **kwargs):
        tokenized.append(text)
        return real(text, *args, **kwargs)

    tr.source_ids = counting
    first = tr.translate_batch(["red cat runs", "blue dog sleeps"])
    segments = sorted(tokenized)  # the two sentences and their matches
    again = tr.translate_batch(["red cat runs", "blue dog sleeps"])
    assert [t.text for t in again] == [t.text for t in first]
    matched = {src.source for t in first for src in t.memory_matches}
    assert matched and matched <= set(segments)
    assert sorted(tokenized[len(segments):]) == ["blue dog sleeps", "red cat runs"]  # the inputs only
