"""The compiled encoder over packed sources (native/encode_sources.cpp, backends/compiled_encoder.py) against the
model's own encoder and cross-attention projections: every architecture variant, float32 and int8, sources of
different lengths encoded together; the bundled en-de; bad input refused in one sentence."""

from __future__ import annotations

import pytest
import torch
from random_models import VARIANTS, padded, random_model

from nmt_desktop.core.decoding.backends import native_library
from nmt_desktop.core.decoding.backends.compiled_encoder import encode_sources, prepare_compiled_encoder
from nmt_desktop.core.decoding.backends.fused_step import cross_state
from nmt_desktop.core.decoding.int8 import quantize_int8
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.locations import bundled_models_dir

pytestmark = pytest.mark.skipif(not native_library.load(), reason="the compiled library is not built here "
                                "(python -m nmt_desktop.core.decoding.backends.native_library builds it)")


def _python_cross(model, sources: list[list[int]]):
    """The reference: the padded batch through model.encode and start_cache, in the fused layout."""
    with torch.inference_mode():
        src = padded(sources, model.config.pad_id)
        return cross_state(model.start_cache(model.encode(src), 1), model.config.n_heads)


def _assert_equal_cross(model, sources: list[list[int]], atol: float) -> None:
    H = model.config.n_heads
    with torch.inference_mode():
        got = encode_sources(prepare_compiled_encoder(model), sources)
    want = _python_cross(model, sources)
    assert len(got.keys_t) == len(got.values) == len(model.decoder_layers)
    S = max(map(len, sources))
    for keys_t, values, want_k, want_v in zip(got.keys_t, got.values, want.keys_t, want.values):
        assert keys_t.shape == (len(sources) * H, keys_t.shape[1], S) and values.shape == (len(sources) * H, S, keys_t.shape[1])
        for b, ids in enumerate(sources):
            n, rows = len(ids), slice(b * H, (b + 1) * H)
            torch.testing.assert_close(keys_t[rows, :, :n], want_k[rows, :, :n], atol=atol, rtol=1e-4)
            torch.testing.assert_close(values[rows, :n], want_v[rows, :n], atol=atol, rtol=1e-4)
            assert not keys_t[rows, :, n:].any() and not values[rows, n:].any()  # nothing past its own length


@pytest.mark.parametrize("int8", [False, True], ids=["float32", "int8"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_packed_sources_equal_the_models_encoder(variant, int8):
    model = random_model(**VARIANTS[variant])
    if int8:
        model = quantize_int8(model)
    eos = model.config.eos_id
    sources = [[5, 6, 7, 8, 9, eos], [10, eos], [12, 13, 14, 15, eos], [16, 17, 18, 19, 20, 21, 22, 23, 24, eos]]
    if not int8:
        _assert_equal_cross(model, sources, 1e-5)
        return
    # int8 quantises each product's input with that call's range, which the padded batch's padding rows widen: the
    # same products see the same rows only for a source alone
    for ids in sources:
        _assert_equal_cross(model, [ids], 1e-3)


def test_one_source_and_eight_heads_equal_the_models_encoder():
    model = random_model(d_model=64, n_heads=8)
    _assert_equal_cross(model, [[7, 8, 9, model.config.eos_id]], 1e-5)


def test_bundled_model_encodes_real_sentences_as_its_encoder():
    translator = Translator.load(bundled_models_dir() / "en-de")
    sources = [translator.source_ids(s) for s in ("Hello.", "The cat sleeps on the warm windowsill all afternoon.",
                                                   "Where is the station?")]
    _assert_equal_cross(translator.model, sources, 1e-4)


@pytest.mark.parametrize("sources, message", [
    ([[5, 6], []], "an empty source"),
    ([[5, 10_000]], "outside the vocabulary"),
    ([list(range(5, 5 + 40))], "past the model's 32 positions"),
])
def test_bad_sources_are_refused_in_one_sentence(sources, message):
    encoder = prepare_compiled_encoder(random_model())
    with pytest.raises(RuntimeError, match=message):
        encode_sources(encoder, sources)
