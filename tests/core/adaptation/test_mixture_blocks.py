"""The per-sentence mixture (each row against its own sentence's key block) gives what the batch-wide one gave
(every row against every key of the batch, the other sentences' masked out): the same mixed scores and the same
memory provenance for every token, on random states with exact repeats, far rows, a sentence without keys and
sentences with fewer keys than k, greedy-like and beam-like row layouts, and steps where only some sentences are
still decoding (only their blocks are read, trimmed to the longest of them)."""

from __future__ import annotations

import pytest
import torch

from nmt_desktop.core.adaptation.datastore import Datastore, MatchStates
from nmt_desktop.core.adaptation.memory_use import MemorySource
from nmt_desktop.core.adaptation.mixture import EXACT, KnnMixture

D, V = 24, 50


def batch_wide(matches: list[MatchStates], logits, hidden, sentences, k, temperature, reach, max_weight):
    """The mixture as it was computed before the key blocks: (mixed scores (R, V), {row: {token: (share, sources)}})."""
    keys = torch.cat([m.keys for m in matches])  # (N, D)
    values = torch.tensor([v for m in matches for v in m.values])
    owner = torch.tensor([m.sentence for m in matches for _ in m.values])
    match = torch.tensor([i for i, m in enumerate(matches) for _ in m.values])
    norms = (keys * keys).sum(-1)
    has = torch.bincount(owner, minlength=int(sentences.max()) + 1) > 0
    adapted = has[sentences].nonzero().squeeze(1)
    h = hidden[adapted]
    hh = (h * h).sum(-1)
    d = torch.addmm(norms[None, :] + hh[:, None], h, keys.t(), alpha=-2.0).clamp_min(0.0)
    d.masked_fill_(owner[None, :] != sentences[adapted][:, None], float("inf"))
    dist, nearest = torch.topk(d, min(k, d.shape[1]), dim=-1, largest=False)
    near = EXACT * hh[:, None]
    exact = dist[:, 0] <= near[:, 0]
    lam = (1.0 - dist[:, 0] / reach).clamp(0.0, max_weight).masked_fill(exact, 1.0)
    knn_w = torch.softmax(-dist / temperature, -1)
    same = (dist <= near).float()
    knn_w = torch.where(exact[:, None], same / same.sum(-1, keepdim=True).clamp_min(1.0), knn_w)
    out = logits.clone()
    provenance: dict[int, dict[int, tuple[float, list[tuple[int, float]]]]] = {}
    for m, row in enumerate(adapted.tolist()):
        if lam[m] <= 0:
            continue
        p_knn = torch.zeros(V)
        p_knn.index_add_(0, values[nearest[m]], knn_w[m])
        p = (1 - lam[m]) * torch.softmax(logits[row], -1) + lam[m] * p_knn
        out[row] = torch.log(p)
        provenance[row] = {}
        for token in values[nearest[m]][knn_w[m] > 0].unique().tolist():
            votes = (values[nearest[m]] == token) & (knn_w[m] > 0)
            mass = float(knn_w[m][votes].sum())
            by: dict[int, float] = {}
            for i, w in zip(match[nearest[m]][votes].tolist(), knn_w[m][votes].tolist()):
                by[matches[i].source.entry_id] = by.get(matches[i].source.entry_id, 0.0) + w / mass
            provenance[row][token] = (min(1.0, float(lam[m]) * mass / float(p[token])), sorted(by.items()))
    return out, provenance


def random_matches(generator, lengths: dict[int, list[int]]) -> list[MatchStates]:
    matches, entry = [], 0
    for sentence, sizes in lengths.items():
        for n in sizes:
            entry += 1
            matches.append(MatchStates(MemorySource(entry, f"s{entry}", f"t{entry}", 0.5), sentence,
                                       torch.randn(n, D, generator=generator) * 3,
                                       torch.randint(0, V, (n,), generator=generator).tolist()))
    return matches


@pytest.mark.parametrize("layout", ["greedy", "beam", "shuffled", "few left"])
@pytest.mark.parametrize("k", [1, 4, 16])
def test_the_key_blocks_mix_as_the_batch_wide_product_did(layout, k):
    generator = torch.Generator().manual_seed(k * 7 + len(layout))
    # sentence 2 has no keys; sentence 3 fewer than k (when k is 16); 0 and 1 several matches each
    matches = random_matches(generator, {0: [9, 6], 1: [12, 3, 5], 3: [2], 4: [7]})
    sentences = {"greedy": torch.arange(5), "beam": torch.arange(5).repeat_interleave(3),
                 "shuffled": torch.tensor([4, 0, 3, 0, 1, 2, 1, 4, 0, 3]),
                 "few left": torch.tensor([4, 3, 4, 2, 3, 4])}[layout]  # the long sentences' blocks are not read
    hidden = torch.randn(len(sentences), D, generator=generator) * 3
    by_sentence = {b: torch.cat([m.keys for m in matches if m.sentence == b]) for b in (0, 1, 3, 4)}
    for r in range(0, len(sentences), 3):  # every third row repeats one of its own sentence's keys (a repeat)
        b = int(sentences[r])
        if b in by_sentence:
            hidden[r] = by_sentence[b][r % len(by_sentence[b])]
    for r in range(1, len(sentences), 4):  # and some lie close to one (an adaptive λ between 0 and the cap)
        b = int(sentences[r])
        if b in by_sentence:
            hidden[r] = by_sentence[b][0] + 0.3 * torch.randn(D, generator=generator)
    logits = torch.randn(len(sentences), V, generator=generator) * 2
    temperature, reach, max_weight = 40.0, 60.0, 0.7

    store = Datastore.of(matches, 5)
    assert store.keys_t.shape == (5, D, 20) and store.counts.tolist() == [15, 20, 0, 2, 7]
    mixed = KnnMixture(store, k, temperature, None, max_weight, reach).mix(logits, hidden, sentences)
    expected, provenance = batch_wide(matches, logits, hidden, sentences, k, temperature, reach, max_weight)

    torch.testing.assert_close(mixed.logits, expected, rtol=1e-5, atol=1e-5)
    assert set(mixed.rows) == set(provenance) and provenance  # the same rows adapted (and some are)
    for row, tokens in provenance.items():
        for token in range(V):
            use = mixed.use(row, token)
            if token not in tokens:
                assert use is not None and use.sources == ()
                continue
            share, sources = tokens[token]
            assert use.share == pytest.approx(share, rel=1e-4, abs=1e-6)
            got = sorted((s.entry_id, s.weight) for s in use.sources)
            assert [i for i, _w in got] == [i for i, _w in sources]
            assert [w for _i, w in got] == pytest.approx([w for _i, w in sources], rel=1e-4, abs=1e-6)
    assert 2 not in {int(sentences[r]) for r in mixed.rows}  # the sentence without keys keeps the model's scores
    assert torch.equal(mixed.logits[sentences == 2], logits[sentences == 2])


def test_one_sentence_mixes_as_before():
    generator = torch.Generator().manual_seed(3)
    matches = random_matches(generator, {0: [8, 5]})
    hidden = torch.randn(4, D, generator=generator) * 3
    hidden[1] = matches[1].keys[2]
    logits = torch.randn(4, V, generator=generator)
    sentences = torch.zeros(4, dtype=torch.long)
    mixed = KnnMixture(Datastore.of(matches, 1), 16, 40.0, None, 0.7, 60.0).mix(logits, hidden, sentences)
    expected, provenance = batch_wide(matches, logits, hidden, sentences, 16, 40.0, 60.0, 0.7)
    torch.testing.assert_close(mixed.logits, expected, rtol=1e-5, atol=1e-5)
    assert set(mixed.rows) == set(provenance)
