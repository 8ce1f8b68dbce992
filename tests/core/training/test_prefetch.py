"""Batches prepared ahead in a background thread: the same groups in the same order as the epoch's own slices
(so resume stays exact), the thread gone when the loop leaves early, and a failure raised in the loop."""

from __future__ import annotations

import threading

import pytest
import torch

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.training.batching import batches_for_epoch
from nmt_desktop.core.training.encoding import encode_pairs
from nmt_desktop.core.training.prefetch import Prefetcher
from tiny_models import synthetic_pairs, tiny_tokenizers


@pytest.fixture(scope="module")
def batches():
    tokenizers = tiny_tokenizers()
    cfg = ModelConfig(src_vocab_size=tokenizers.source.vocab_size, tgt_vocab_size=tokenizers.target.vocab_size)
    return batches_for_epoch(encode_pairs(synthetic_pairs(400, seed=2), tokenizers, cfg, 64), 200, seed=1, epoch=0)


def test_groups_are_the_epochs_own_slices_from_the_position(batches):
    with Prefetcher(batches, start=3, group=2) as ahead:
        got = list(ahead)
    want = [[batches[i], batches[i + 1]] for i in range(3, len(batches) - 1, 2)]
    assert len(got) == len(want) > 3
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            assert torch.equal(a.src, b.src) and torch.equal(a.tgt_out, b.tgt_out) and a.n_tgt_tokens == b.n_tgt_tokens


def test_leaving_early_stops_the_thread_and_a_failure_reaches_the_loop(batches):
    before = {t.ident for t in threading.enumerate()}
    with Prefetcher(batches, start=0, group=1, depth=1) as ahead:
        next(iter(ahead))
    assert not [t for t in threading.enumerate() if t.ident not in before and t.name == "batch-prefetch"]

    class Broken(list):
        def __getitem__(self, i):
            raise ValueError(f"batch {i} cannot be collated")

    with pytest.raises(ValueError, match="batch 0 cannot be collated"):
        with Prefetcher(Broken([None, None]), start=0, group=1) as ahead:
            list(ahead)
