"""Which layout a prepared linear layer uses (core/decoding/backends/prepared_linear.py), and that every layout and
fused form computes the same product."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from nmt_desktop.core.decoding.backends.prepared_linear import (_ONEDNN_ONE_ROW_MIN_WEIGHTS, onednn_available, prepare_linear,
                                                      prepare_weight)

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
    assert prepared.blocked_from_rows == (1, 1) and prepared._blocked(x) is not None
    expected = F.linear(x.double(), weight.double(), bias.double())
    assert torch.allclose(prepared(x).double(), expected, rtol=1e-4, atol=1e-4)


def test_a_matrix_that_fits_the_cache_keeps_addmm_for_one_row(one_thread):
    weight, bias = torch.randn(2048, 512), torch.randn(2048)
    prepared = prepare_weight(weight, bias)
    assert prepared.blocked_from_rows[0] == 2  # large enough for oneDNN, but not at one row on one thread
    assert prepared._blocked(torch.randn(1, 512)) is None
    assert prepared._blocked(torch.randn(4, 512)) is not None  # two or more rows: oneDNN


@pytest.mark.parametrize("rows", [1, 2, 5, 70])
def test_prepared_linear_equals_linear(rows):
    """Every layout (addmm for one row, oneDNN's blocked weights for several rows of a large matrix)
    and every fused form (plain, + residual, activated) equals F.linear."""
    gen = torch.Generator().manual_seed(rows)
    layer = torch.nn.Linear(256, 512)  # 2^17 weights: large enough for the oneDNN layout
    x = torch.randn(rows, 256, generator=gen)
    residual = torch.randn(rows, 512, generator=gen)
    prepared = prepare_linear(layer)
    with torch.inference_mode():
        expected = F.linear(x, layer.weight, layer.bias)
        torch.testing.assert_close(prepared(x), expected, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(prepared.add(x, residual), expected + residual, atol=1e-4, rtol=1e-4)
        for name, fn in (("relu", F.relu), ("silu", F.silu), ("gelu", F.gelu)):
            torch.testing.assert_close(prepared.activated(x, name), fn(expected), atol=1e-4, rtol=1e-4)
    if torch.backends.mkldnn.is_available():
        assert (prepared._onednn is not None) == (rows > 1)  # made at the first multi-row product only
    small = prepare_linear(torch.nn.Linear(64, 64))
    small(torch.randn(rows, 64))
    assert small._onednn is None  # small matrices always go through addmm


def test_prepared_linear_single_row_with_threads():
    """With several threads a single row times a large matrix goes through oneDNN (it splits the
    product over threads); the result is the same, and with one thread addmm serves it."""
    layer = torch.nn.Linear(512, 1024)  # 2^19 weights
    x = torch.randn(1, 512, generator=torch.Generator().manual_seed(0))
    threads = torch.get_num_threads()
    try:
        for n, uses_onednn in ((1, False), (2, True)):
            torch.set_num_threads(n)
            prepared = prepare_linear(layer)
            with torch.inference_mode():
                torch.testing.assert_close(prepared(x), F.linear(x, layer.weight, layer.bias), atol=1e-4, rtol=1e-4)
            if torch.backends.mkldnn.is_available():
                assert (prepared._onednn is not None) == uses_onednn
    finally:
        torch.set_num_threads(threads)
