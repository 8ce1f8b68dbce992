"""Which layout a prepared linear layer uses for one row (core/decoding/prepared_linear.py), and that every
layout computes the same product."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from nmt_desktop.core.decoding.prepared_linear import _ONEDNN_ONE_ROW_MIN_WEIGHTS, onednn_available, prepare_weight

pytestmark = pytest.mark.skipif(not onednn_available(torch.device("cpu")), reason="this torch build has no oneDNN")


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_a_matrix_larger_than_the_cache_uses_onednn_for_one_row(one_thread):
    torch.manual_seed(0)
    out_features = _ONEDNN_ONE_ROW_MIN_WEIGHTS // 512  # e.g. an output projection over a 16k+ vocabulary
    weight, bias = torch.randn(out_features, 512) * 0.05, torch.randn(out_features)
    prepared = prepare_weight(weight, bias)
    x = torch.randn(1, 512)
    assert prepared.one_row_ok and prepared._blocked(x) is not None
    expected = F.linear(x.double(), weight.double(), bias.double())
    assert torch.allclose(prepared(x).double(), expected, rtol=1e-4, atol=1e-4)


def test_a_matrix_that_fits_the_cache_keeps_addmm_for_one_row(one_thread):
    weight, bias = torch.randn(2048, 512), torch.randn(2048)
    prepared = prepare_weight(weight, bias)
    assert prepared.onednn_ok and not prepared.one_row_ok
    assert prepared._blocked(torch.randn(1, 512)) is None
    assert prepared._blocked(torch.randn(4, 512)) is not None  # two or more rows: oneDNN
