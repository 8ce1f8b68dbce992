"""The compiled search kernels (native/search_ops.cpp) against the Python code they replace.

`top_logprobs` must give `_step_logprobs` + top-k (the masked ids never chosen, lower index first
among equals), `beam_candidates` what `_beam_candidates` gives (dead beams, more alternatives than
candidates, vocabularies smaller than 2K), and `reorder_filled` what `index_select` gives on the
filled positions, for repeats, swaps, longer cycles and dropped rows, in place.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nmt_desktop.core.decoding import native_library
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.search import _beam_candidates, _masked_ids, _step_logprobs

pytestmark = pytest.mark.skipif(not native_library.load(), reason="the compiled library is not built here "
                                                                  "(python -m nmt_desktop.core.decoding.native_library)")
ops = torch.ops.nmt_desktop if native_library.load() else None
EOS, PAD = 0, 3


def _logits(rows: int, vocab: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(rows, vocab, generator=g) * 4


@pytest.mark.parametrize("rows,vocab,k", [(1, 8000, 1), (4, 8000, 8), (3, 37, 5), (2, 70, 70), (1, 33, 12)])
@pytest.mark.parametrize("min_length", [0, 5])
def test_top_logprobs_equal_log_softmax_and_topk(rows, vocab, k, min_length):
    logits = _logits(rows, vocab, seed=vocab + k)
    logits[:, PAD] = 50.0  # the best logit, but <pad> is never generated
    cfg = DecodeConfig(min_length=min_length)
    expected = _step_logprobs(logits, 0, cfg, EOS, PAD)
    masked = 2 if min_length else 1
    values, ids = ops.top_logprobs(logits, min(k, vocab - masked), *_masked_ids(0, cfg, EOS, PAD))
    top = torch.topk(expected, min(k, vocab - masked), dim=-1)
    assert torch.equal(ids, top.indices)
    torch.testing.assert_close(values, top.values, atol=1e-5, rtol=1e-6)
    assert PAD not in ids and (EOS not in ids or not min_length)


def test_top_logprobs_ranks_equal_values_by_index_and_pads_short_rows():
    logits = torch.tensor([[1.0, 3.0, 3.0, 0.5, 3.0, 2.0]])
    values, ids = ops.top_logprobs(logits, 4, -1, -1)
    assert ids.tolist() == [[1, 2, 4, 5]]
    assert values[0, 0] == values[0, 2] and values[0, 0] > values[0, 3]
    values, ids = ops.top_logprobs(torch.tensor([[1.0, 2.0, 0.0]]), 3, 1, 0)  # two of three ids masked
    assert ids[0, 0] == 2 and values[0, 1:].tolist() == [float("-inf")] * 2
    with pytest.raises(RuntimeError, match="k = 4 for rows of 3"):
        ops.top_logprobs(torch.zeros(1, 3), 4, -1, -1)


@pytest.mark.parametrize("B,K,vocab,alternatives", [(1, 4, 8000, 0), (2, 4, 500, 3), (3, 5, 200, 12), (1, 4, 6, 2),
                                                    (2, 1, 50, 5)])
def test_beam_candidates_equal_the_python_candidates(B, K, vocab, alternatives):
    logits = _logits(B * K, vocab, seed=B * K + vocab)
    g = torch.Generator().manual_seed(7)
    scores = -torch.rand(B, K, generator=g) * 10
    scores[0, 1:] = float("-inf")  # the first step: one live beam
    if B > 1:
        scores[1, -1] = float("-inf")  # a dead beam
    cfg = DecodeConfig(beam_size=K, alternatives=alternatives)
    top_scores, top_idx, top_lps, alt_ids, alt_lp = _beam_candidates(
        _step_logprobs(logits, 3, cfg, EOS, PAD), scores, alternatives)
    k_alt = max(1, min(alternatives, vocab))
    got = ops.beam_candidates(logits, scores, k_alt, *_masked_ids(3, cfg, EOS, PAD))
    live = torch.isfinite(top_scores)  # the order of -inf candidates is arbitrary in torch.topk
    assert torch.equal(torch.isfinite(got[0]), live)
    assert torch.equal(got[1][live], top_idx[live])
    torch.testing.assert_close(got[0][live], top_scores[live], atol=1e-4, rtol=1e-6)
    torch.testing.assert_close(got[2][live], top_lps[live], atol=1e-5, rtol=1e-6)
    assert np.array_equal(got[3].numpy(), alt_ids)
    np.testing.assert_allclose(got[4].numpy(), alt_lp, atol=1e-5)


@pytest.mark.parametrize("indices", [[0, 1, 2, 3], [0, 0, 1, 2], [1, 0, 3, 2], [2, 0, 1, 1], [3, 3, 3, 3],
                                     [1, 2, 0, 0], [2, 3], [1]])
@pytest.mark.parametrize("length", [0, 1, 5])
def test_reorder_filled_equals_index_select_in_place(indices, length):
    g = torch.Generator().manual_seed(len(indices) * 10 + length)
    buffers = [torch.randn(4, 3, 6, 5, generator=g) for _ in range(3)]
    expected = [b.index_select(0, torch.tensor(indices))[:, :, :length] for b in buffers]
    storages = [b.data_ptr() for b in buffers]
    out = ops.reorder_filled(buffers, torch.tensor(indices), length)
    for got, want, storage in zip(out, expected, storages):
        assert got.shape[0] == len(indices) and got.data_ptr() == storage and got.is_contiguous()
        assert torch.equal(got[:, :, :length], want)


def test_reorder_filled_rejects_bad_rows():
    buffers = [torch.zeros(2, 1, 4, 2)]
    with pytest.raises(RuntimeError, match="row 2 of 2"):
        ops.reorder_filled(buffers, torch.tensor([0, 2]), 1)
    with pytest.raises(RuntimeError, match="3 rows from 2"):
        ops.reorder_filled(buffers, torch.tensor([0, 1, 1]), 1)
    with pytest.raises(RuntimeError, match=">= 5 positions"):
        ops.reorder_filled(buffers, torch.tensor([1, 0]), 5)
