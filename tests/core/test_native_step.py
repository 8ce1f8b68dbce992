"""The compiled decoding step (core/decoding/native_step.py, native/decode_step.cpp).

It must give what the Python fused step gives on every architecture variant, float32 and int8,
through cache growth, dropped rows, beam reordering and source padding; searches must give the same
tokens with and without it, also when two threads share one step; the library must build from its
source with the command `.ci/setup.sh` runs, and a missing compiler is one clear line.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading

import pytest
import torch
from test_fused_step import variant_batch
from test_transformer import VARIANTS, padded, random_model
from tiny_models import perturbed_model

from nmt_desktop.core.decoding import native_library
from nmt_desktop.core.config import DecodeConfig, ModelConfig
from nmt_desktop.core.decoding.int8 import quantize_int8
from nmt_desktop.core.decoding.search import BeamState, beam_search, greedy_or_sample

BUILT = native_library.load()
needs_library = pytest.mark.skipif(not BUILT, reason="the compiled decoding step is not built here "
                                                      "(python -m nmt_desktop.core.decoding.native_library builds it)")


def test_setup_builds_the_library_in_ci():
    """.ci/setup.sh builds the library; in CI it must be there and loaded (elsewhere it is optional)."""
    if not os.environ.get("CI"):
        pytest.skip("only CI guarantees a compiler and a setup.sh run")
    assert native_library.library_path() is not None and BUILT


def _python_step(fast):
    """The same prepared weights with the compiled step left out (the Python fused step runs)."""
    return dataclasses.replace(fast, step=dataclasses.replace(fast.step, native=None))


def _twin_caches(model, src):
    """Caches of one source batch for the compiled step and for the Python fused step."""
    enc = model.encode(src)
    fast = model.fast_weights()
    assert fast.step.native is not None
    python = _python_step(fast)
    return model.start_cache(enc, capacity=2, fast=fast), model.start_cache(enc, capacity=2, fast=python)


@needs_library
@pytest.mark.parametrize("int8", [False, True], ids=["float32", "int8"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_native_step_equals_python_fused_step(variant, int8):
    model, src = variant_batch(variant, int8)
    cfg = model.config
    with torch.inference_mode():
        native, python = _twin_caches(model, src)
        tokens = torch.full((3, 1), cfg.decoder_start_id)
        for step in range(12):
            need_cross, need_self = step % 3 != 2, step % 2 == 0
            a = model.decode(tokens, cache=native, need_cross=need_cross, need_self=need_self)
            b = model.decode(tokens, cache=python, need_cross=need_cross, need_self=need_self)
            torch.testing.assert_close(a.logits, b.logits, atol=1e-5, rtol=1e-5)
            if need_self:
                assert a.self_attention.shape == b.self_attention.shape == (tokens.shape[0], cfg.decoder_layers,
                                                                            cfg.n_heads, 1, step + 1)
                torch.testing.assert_close(a.self_attention, b.self_attention, atol=1e-6, rtol=1e-5)
            else:
                assert a.self_attention is None and b.self_attention is None
            if need_cross:
                assert a.cross_attention.shape == b.cross_attention.shape == (tokens.shape[0], cfg.decoder_layers,
                                                                              cfg.n_heads, 1, src.shape[1])
                torch.testing.assert_close(a.cross_attention, b.cross_attention, atol=1e-6, rtol=1e-5)
            else:
                assert a.cross_attention is None and b.cross_attention is None
            tokens = a.logits[:, -1].argmax(-1, keepdim=True)
            if step in (4, 8):  # a finished sentence leaves; then beam-style duplication of a row
                keep = torch.tensor([0, 2]) if step == 4 else torch.tensor([1, 1])
                for cache in (native, python):
                    cache.reorder(keep, cross=step == 4)
                tokens = tokens.index_select(0, keep)
        assert native.length == python.length == 12
        for kv_a, kv_b in zip(native.layers, python.layers):  # the caches were filled alike
            torch.testing.assert_close(kv_a.self_k[:, :, :12], kv_b.self_k[:, :, :12], atol=1e-5, rtol=1e-5)


def _wide_model():
    """Wide enough for oneDNN's blocked weights (several rows) and padding in the batch."""
    cfg = ModelConfig(src_vocab_size=600, tgt_vocab_size=600, d_model=256, n_heads=4, encoder_layers=1,
                      decoder_layers=2, ffn_dim=512, max_positions=64)
    model = perturbed_model(cfg, seed=3)
    return model, padded([[5, 6, 7, 8, 9, cfg.eos_id], [10, 11, cfg.eos_id]], cfg.pad_id)


def _search(model, src, beam, fast):
    decode = DecodeConfig(beam_size=beam, max_len_a=0.0, max_len_b=12, alternatives=3, self_attention=True)
    if beam == 1:
        return [(s.token_ids, s.logprobs, s.cross_attention, s.alt_ids, s.self_attention)
                for s in greedy_or_sample(model, src, decode, fast=fast)]
    state = BeamState()
    list(beam_search(model, src, decode, state, fast=fast))
    return [(h.token_ids, h.token_logprobs, h.cross_attention, h.alt_ids, h.self_attention)
            for hyps in state.results for h in hyps]


def _assert_same_search(a, b, tol=1e-4):
    """Same tokens and alternatives; log-probs and attention within `tol`."""
    assert len(a) == len(b) > 0
    for (tokens_a, lp_a, attn_a, alt_a, *self_a), (tokens_b, lp_b, attn_b, alt_b, *self_b) in zip(a, b):
        assert tokens_a == tokens_b and (alt_a == alt_b).all()
        assert lp_a == pytest.approx(lp_b, abs=tol)
        assert abs(attn_a - attn_b).max() < tol
        for sa, sb in zip(self_a, self_b):  # beam hypotheses: the self-attention too
            assert sa is not None and abs(sa - sb).max() < tol


# int8 products quantise their input per call: a float rounding difference that moves one
# activation across a quantisation step changes the product by that step, and over a dozen
# positions of cached keys the scores drift by up to ~0.1 on this random model. Tokens must agree.
INT8_TOL = 0.25


@needs_library
@pytest.mark.parametrize("beam", [1, 4])
@pytest.mark.parametrize("int8", [False, True], ids=["float32", "int8"])
def test_searches_equal_with_and_without_the_native_step(beam, int8):
    model, src = _wide_model()
    if int8:
        model = quantize_int8(model)
    fast = model.fast_weights()
    python = _python_step(fast)
    _assert_same_search(_search(model, src, beam, fast), _search(model, src, beam, python), INT8_TOL if int8 else 1e-4)


@needs_library
def test_two_threads_share_one_native_step():
    """Beam searches in two threads on one prepared step (its oneDNN weights are made on first use,
    under a lock) give what one search alone gives."""
    model, src = _wide_model()
    expected = _search(model, src, 4, model.fast_weights())
    fast = model.fast_weights()  # fresh: no blocked weights made yet
    results, errors = [None] * 4, []

    def work(i):
        try:
            results[i] = _search(model, src, 4, fast)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for result in results:
        _assert_same_search(result, expected)


_CHILD = """
import sys, torch
from nmt_desktop.core.decoding import native_library
torch.ops.load_library(sys.argv[1])
native_library._loaded = True
sys.path[:0] = [sys.argv[2], sys.argv[2] + '/..']
from test_transformer import random_model
model = random_model()
step = model.fast_weights().step
assert step.native is not None
cfg = model.config
with torch.inference_mode():
    cache = model.start_cache(model.encode(torch.tensor([[5, 6, 7, cfg.eos_id]])), capacity=2)
    out = model.decode(torch.full((1, 1), cfg.decoder_start_id), cache=cache, need_cross=True)
print(tuple(out.logits.shape), round(float(out.cross_attention.sum()), 4))
"""


def test_library_builds_from_source_and_runs(tmp_path):
    """The setup command compiles the source into a fresh folder; a child process loads that file and steps."""
    build = subprocess.run([sys.executable, "-m", "nmt_desktop.core.decoding.native_library", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and "no C++ compiler" in build.stderr:
        pytest.skip(build.stderr.strip())
    assert build.returncode == 0, build.stderr
    built = tmp_path / build.stdout.strip().rsplit("/", 1)[-1]
    assert built.is_file() and built.name.startswith("decode_step-") and torch.__version__ in built.name
    env = dict(os.environ, NMT_DESKTOP_NATIVE="1")
    child = subprocess.run([sys.executable, "-c", _CHILD, str(built), os.path.dirname(__file__)],
                           capture_output=True, text=True, timeout=120, env=env)
    assert child.returncode == 0, child.stderr
    logits_shape, cross_sum = child.stdout.split(")")
    cfg = random_model().config
    assert logits_shape == f"(1, 1, {cfg.tgt_vocab_size}"
    assert float(cross_sum) == pytest.approx(cfg.decoder_layers * cfg.n_heads)  # each head's row sums to 1


def test_missing_compiler_is_one_clear_line(tmp_path):
    env = dict(os.environ, CXX="no-such-compiler-xyz")
    result = subprocess.run([sys.executable, "-m", "nmt_desktop.core.decoding.native_library", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == ("error: no C++ compiler: 'no-such-compiler-xyz' is not on PATH "
                                     "(Debian: apt-get install g++)")
    assert not list(tmp_path.iterdir())


def test_disabled_by_environment():
    """NMT_DESKTOP_NATIVE=0 keeps the Python fused step (a child process: loading is once per process)."""
    code = ("import torch; from nmt_desktop.core.decoding import native_library; import sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/..']; "
            "from test_transformer import random_model; "
            "print(native_library.load(), random_model().fast_weights().step.native)")
    result = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True,
                            text=True, timeout=120, env=dict(os.environ, NMT_DESKTOP_NATIVE="0"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "None"]
