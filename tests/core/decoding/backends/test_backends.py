"""The decoding backends (core/decoding/backends/step_backend.py) against each other.

The reference backend (the model's modules) is the reference: the Python backend (fused step) must
give the same logits and cross- and self-attention on every architecture variant, in float32 and
int8, through cache growth, dropped rows and beam reordering; the compiled backend what the Python
one gives (int8 included); searches the same tokens on every backend, also when two threads share
one compiled backend. The compiled token choice (native/search_ops.cpp) equals selection.py's, and
the library builds from its source with the command `.ci/setup.sh` runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
import random_models
from random_models import VARIANTS, padded, random_model
from tiny_models import perturbed_model

from nmt_desktop.core.config import DecodeConfig, ModelConfig
from nmt_desktop.core.decoding.backends import choice as backend_choice, native_library
from nmt_desktop.core.decoding.backends.choice import BackendUnavailableError, backend_for_search, choose_backend
from nmt_desktop.core.decoding.backends.compiled import CompiledBackend
from nmt_desktop.core.decoding.int8 import quantize_int8
from nmt_desktop.core.decoding.backends.python import FusedState, PythonBackend
from nmt_desktop.core.decoding.backends.reference import ReferenceBackend
from nmt_desktop.core.decoding.search import BeamState, beam_search, greedy_or_sample, masked_ids
from nmt_desktop.core.decoding.selection import beam_candidates, log_probs

BUILT = native_library.load()
needs_library = pytest.mark.skipif(not BUILT, reason="the compiled library is not built here "
                                                      "(python -m nmt_desktop.core.decoding.backends.native_library builds it)")
BACKENDS = {"reference": ReferenceBackend, "python": PythonBackend, "compiled": CompiledBackend}
FAST = [pytest.param("python"), pytest.param("compiled", marks=needs_library)]
ops = torch.ops.nmt_desktop if BUILT else None
ATOL = 1e-5
# tests/, where a child process finds the test helpers (random_models, tiny_models)
TESTS_DIR = os.path.dirname(random_models.__file__)


def test_setup_builds_the_library_in_ci():
    """.ci/setup.sh builds the library; in CI it must be there and loaded (elsewhere it is optional)."""
    if not os.environ.get("CI"):
        pytest.skip("only CI guarantees a compiler and a setup.sh run")
    assert native_library.library_path() is not None and BUILT


def variant_batch(variant: str, int8: bool):
    """A random model of one architecture variant (int8 copy if asked) and a padded 3-sentence batch."""
    model = random_model(**VARIANTS[variant])
    if int8:
        model = quantize_int8(model)
    cfg = model.config
    return model, padded([[5, 6, 7, 8, 9, cfg.eos_id], [10, 11, cfg.eos_id], [12, 13, 14, 15, cfg.eos_id]], cfg.pad_id)


# --- the step ------------------------------------------------------------------------------------


# (backend, its reference, the steps that return self-attention, the row kept twice at step 8)
PAIRS = [pytest.param("python", "reference", 1, 0, id="python-vs-reference"),
         pytest.param("compiled", "python", 0, 1, id="compiled-vs-python", marks=needs_library)]


@pytest.mark.parametrize("int8", [False, True], ids=["float32", "int8"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name,reference,self_steps,twice", PAIRS)
def test_steps_equal_on_every_backend(name, reference, self_steps, twice, variant, int8):
    """Lockstep through growth from capacity 2, a dropped row and a duplicated one: python vs reference
    within float rounding, compiled vs python closer still (int8: the same kernels)."""
    model, src = variant_batch(variant, int8)
    cfg = model.config
    compiled = name == "compiled"
    tol = 1e-5 if compiled else 1e-4 if int8 else ATOL
    attn_atol, attn_rtol = (1e-6, 1e-5) if compiled else (tol, tol)
    backend, expected = BACKENDS[name](model), BACKENDS[reference](model)
    with torch.inference_mode():
        enc = model.encode(src)
        state, ref_state = backend.start(enc, capacity=2), expected.start(enc, capacity=2)  # buffers must grow
        tokens = torch.full((3,), cfg.decoder_start_id)
        for step in range(12):
            need_cross = step % 3 != 2 if compiled else True
            need_self = step % 2 == self_steps
            a = backend.step(state, tokens, need_cross, need_self)
            b = expected.step(ref_state, tokens, need_cross, need_self)
            assert isinstance(state, FusedState) and state.cross is not None  # the fused layout was made
            assert a.logits.shape == b.logits.shape == (tokens.shape[0], cfg.tgt_vocab_size)
            torch.testing.assert_close(a.logits, b.logits, atol=tol, rtol=tol)
            if need_self:
                assert a.self_attention.shape == b.self_attention.shape == (
                    tokens.shape[0], cfg.decoder_layers, cfg.n_heads, step + 1)
                torch.testing.assert_close(a.self_attention, b.self_attention, atol=attn_atol, rtol=attn_rtol)
            else:
                assert a.self_attention is None and b.self_attention is None
            if need_cross:
                assert a.cross_attention.shape == b.cross_attention.shape == (
                    tokens.shape[0], cfg.decoder_layers, cfg.n_heads, src.shape[1])
                torch.testing.assert_close(a.cross_attention, b.cross_attention, atol=attn_atol, rtol=attn_rtol)
            else:
                assert a.cross_attention is None and b.cross_attention is None
            tokens = a.logits.argmax(-1)
            if step in (4, 8):  # a finished sentence leaves; then beam-style duplication of a row
                keep = torch.tensor([0, 2]) if step == 4 else torch.tensor([twice, twice])
                backend.reorder(state, keep, cross=step == 4)
                expected.reorder(ref_state, keep, cross=step == 4)
                tokens = tokens.index_select(0, keep)
        assert state.cache.length == ref_state.cache.length == 12
        for kv_a, kv_b in zip(state.cache.layers, ref_state.cache.layers):  # the caches were filled alike
            torch.testing.assert_close(kv_a.self_k[:, :, :12], kv_b.self_k[:, :, :12], atol=1e-5 if compiled else
                                       1e-3, rtol=1e-5 if compiled else 1e-3)


@pytest.mark.parametrize("name", FAST)
def test_fused_steps_mask_source_padding(name):
    """Padding positions get exactly zero cross-attention and do not change the padded row's logits."""
    model = random_model()
    cfg = model.config
    short = [10, 11, cfg.eos_id]
    backend = BACKENDS[name](model)
    with torch.inference_mode():
        alone = backend.start(model.encode(torch.tensor([short])), capacity=2)
        batch = backend.start(model.encode(padded([short, [5, 6, 7, 8, 9, 10, cfg.eos_id]], cfg.pad_id)), capacity=2)
        start = torch.full((1,), cfg.decoder_start_id)
        a = backend.step(alone, start, True, False)
        b = backend.step(batch, start.expand(2), True, False)
    torch.testing.assert_close(b.logits[0], a.logits[0], atol=ATOL, rtol=ATOL)
    assert torch.all(b.cross_attention[0, ..., len(short):] == 0)


def test_interventions_run_on_the_reference_backend():
    """A head mask or a head override makes a search use the reference backend (same logits with a
    mask of ones); context capture is the model's own (`decode(need_context=True)`)."""
    model = random_model()
    cfg = model.config
    src = torch.tensor([[5, 6, 7, cfg.eos_id]])
    start = torch.full((1,), cfg.decoder_start_id)
    fast = PythonBackend(model)
    assert backend_for_search(model, fast) is fast
    ones = torch.ones(cfg.decoder_layers, cfg.n_heads)
    masked = backend_for_search(model, fast, head_mask=ones)
    assert isinstance(masked, ReferenceBackend) and masked.head_mask is ones
    with torch.inference_mode():
        enc = model.encode(src)
        expected = fast.step(fast.start(enc, 2), start, False, False).logits
        torch.testing.assert_close(masked.step(masked.start(enc, 2), start, False, False).logits, expected,
                                   atol=ATOL, rtol=ATOL)
        out = model.decode(start[:, None], cache=model.start_cache(enc), need_context=True)
    torch.testing.assert_close(out.logits[:, -1], expected, atol=ATOL, rtol=ATOL)
    assert out.cross_context is not None


@pytest.mark.parametrize("name", ["reference"] + FAST)
def test_steps_refuse_positions_beyond_the_model(name):
    model = random_model(max_positions=4)
    cfg = model.config
    backend = BACKENDS[name](model)
    with torch.inference_mode():
        state = backend.start(model.encode(torch.tensor([[5, cfg.eos_id]])), capacity=2)
        token = torch.full((1,), cfg.decoder_start_id)
        for _ in range(4):
            backend.step(state, token, False, False)
        with pytest.raises(ValueError, match="exceeds the model's max_positions \\(4\\)"):
            backend.step(state, token, False, False)


# --- choosing a backend --------------------------------------------------------------------------


def test_choose_backend(monkeypatch):
    model = random_model()
    monkeypatch.delenv("NMT_DESKTOP_BACKEND", raising=False)
    assert choose_backend(model).name == ("compiled" if BUILT else "python")
    for name in ("reference", "python"):
        assert choose_backend(model, name).name == name
        monkeypatch.setenv("NMT_DESKTOP_BACKEND", name)  # honoured when the caller leaves it to "auto"
        assert choose_backend(model).name == choose_backend(model, None).name == name
        assert choose_backend(model, "python").name == "python"
    with pytest.raises(ValueError, match="unknown decoding backend 'fast'"):
        choose_backend(model, "fast")
    monkeypatch.setattr(backend_choice, "compiled_step_applies", lambda weight: False)
    with pytest.raises(BackendUnavailableError, match="^the compiled decoding backend needs the compiled library"):
        choose_backend(model, "compiled")
    monkeypatch.delenv("NMT_DESKTOP_BACKEND")
    assert choose_backend(model).name == "python"


def test_disabled_by_environment():
    """NMT_DESKTOP_NATIVE=0 keeps the library unloaded and "auto" on the Python backend (a child
    process: loading is once per process)."""
    code = ("import torch; from nmt_desktop.core.decoding.backends import native_library; import sys; "
            "sys.path[:0] = [sys.argv[1]]; "
            "from nmt_desktop.core.decoding.backends.choice import choose_backend; "
            "from random_models import random_model; "
            "print(native_library.load(), choose_backend(random_model()).name)")
    env = {k: v for k, v in os.environ.items() if k != "NMT_DESKTOP_BACKEND"}
    result = subprocess.run([sys.executable, "-c", code, TESTS_DIR], capture_output=True,
                            text=True, timeout=120, env=dict(env, NMT_DESKTOP_NATIVE="0"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "python"]


# --- searches ------------------------------------------------------------------------------------


def _wide_model():
    """Wide enough for oneDNN's blocked weights (several rows) and padding in the batch."""
    cfg = ModelConfig(src_vocab_size=600, tgt_vocab_size=600, d_model=256, n_heads=4, encoder_layers=1,
                      decoder_layers=2, ffn_dim=512, max_positions=64)
    model = perturbed_model(cfg, seed=3)
    return model, padded([[5, 6, 7, 8, 9, cfg.eos_id], [10, 11, cfg.eos_id]], cfg.pad_id)


def _search(model, src, beam, backend):
    decode = DecodeConfig(beam_size=beam, max_len_a=0.0, max_len_b=12, alternatives=3, self_attention=True)
    if beam == 1:
        return [([s.token_id for s in p], [s.logprob for s in p], np.stack([s.cross_attention for s in p]),
                 np.array([[a.token_id for a in s.alternatives] for s in p]), np.stack([s.self_attention for s in p]))
                for p in greedy_or_sample(model, src, decode, backend=backend)]
    state = BeamState()
    list(beam_search(model, src, decode, state, backend=backend))
    return [(h.token_ids, h.token_logprobs, h.attention, np.array([[a.token_id for a in alts] for alts in h.alternatives]),
             h.self_attention)
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


@pytest.mark.parametrize("beam", [1, 4])
@pytest.mark.parametrize("name", FAST)
def test_searches_equal_on_every_backend(name, beam):
    """float32: the same tokens, scores and attention as the reference backend."""
    model, src = _wide_model()
    expected = _search(model, src, beam, ReferenceBackend(model))
    _assert_same_search(_search(model, src, beam, BACKENDS[name](model)), expected)


@needs_library
@pytest.mark.parametrize("beam", [1, 4])
def test_int8_searches_equal_compiled_and_python(beam):
    model = quantize_int8(_wide_model()[0])
    src = _wide_model()[1]
    _assert_same_search(_search(model, src, beam, CompiledBackend(model)),
                        _search(model, src, beam, PythonBackend(model)), INT8_TOL)


@needs_library
def test_two_threads_share_one_compiled_backend():
    """Beam searches in two threads on one backend (its oneDNN weights are made on first use, under
    a lock) give what one search alone gives."""
    model, src = _wide_model()
    expected = _search(model, src, 4, CompiledBackend(model))
    backend = CompiledBackend(model)  # fresh: no blocked weights made yet
    results, errors = [None] * 4, []

    def work(i):
        try:
            results[i] = _search(model, src, 4, backend)
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


# --- token choice: the compiled kernels against selection.py --------------------------------------

EOS, PAD = 0, 3


def _logits(rows: int, vocab: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(rows, vocab, generator=g) * 4


@needs_library
@pytest.mark.parametrize("rows,vocab,k", [(1, 8000, 1), (4, 8000, 8), (3, 37, 5), (2, 70, 70), (1, 33, 12)])
@pytest.mark.parametrize("min_length", [0, 5])
def test_top_logprobs_equal_log_softmax_and_topk(rows, vocab, k, min_length):
    logits = _logits(rows, vocab, seed=vocab + k)
    logits[:, PAD] = 50.0  # the best logit, but <pad> is never generated
    cfg = DecodeConfig(min_length=min_length)
    expected = log_probs(logits, masked_ids(0, cfg, EOS, PAD))
    masked = 2 if min_length else 1
    values, ids = ops.top_logprobs(logits, min(k, vocab - masked), *masked_ids(0, cfg, EOS, PAD))
    top = torch.topk(expected, min(k, vocab - masked), dim=-1)
    assert torch.equal(ids, top.indices)
    torch.testing.assert_close(values, top.values, atol=1e-5, rtol=1e-6)
    assert PAD not in ids and (EOS not in ids or not min_length)
    tokens, chosen, alt_ids, _ = CompiledBackend(random_model()).pick(logits, 1, masked_ids(0, cfg, EOS, PAD))
    reference = ReferenceBackend(random_model()).pick(logits, 1, masked_ids(0, cfg, EOS, PAD))
    assert torch.equal(tokens, reference[0]) and np.array_equal(alt_ids, reference[2])
    torch.testing.assert_close(chosen, reference[1], atol=1e-5, rtol=1e-6)


@needs_library
def test_top_logprobs_ranks_equal_values_by_index_and_pads_short_rows():
    logits = torch.tensor([[1.0, 3.0, 3.0, 0.5, 3.0, 2.0]])
    values, ids = ops.top_logprobs(logits, 4, -1, -1)
    assert ids.tolist() == [[1, 2, 4, 5]]
    assert values[0, 0] == values[0, 2] and values[0, 0] > values[0, 3]
    values, ids = ops.top_logprobs(torch.tensor([[1.0, 2.0, 0.0]]), 3, 1, 0)  # two of three ids masked
    assert ids[0, 0] == 2 and values[0, 1:].tolist() == [float("-inf")] * 2
    with pytest.raises(RuntimeError, match="k = 4 for rows of 3"):
        ops.top_logprobs(torch.zeros(1, 3), 4, -1, -1)


@needs_library
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
    k_alt = max(1, min(alternatives, vocab))
    top_scores, top_idx, top_lps, alt_ids, alt_lp = beam_candidates(
        log_probs(logits, masked_ids(3, cfg, EOS, PAD)), scores, k_alt)
    got = CompiledBackend(random_model()).beam_candidates(logits, scores, k_alt, masked_ids(3, cfg, EOS, PAD))
    live = torch.isfinite(top_scores)  # the order of -inf candidates is arbitrary in torch.topk
    assert torch.equal(torch.isfinite(got[0]), live)
    assert torch.equal(got[1][live], top_idx[live])
    torch.testing.assert_close(got[0][live], top_scores[live], atol=1e-4, rtol=1e-6)
    torch.testing.assert_close(got[2][live], top_lps[live], atol=1e-5, rtol=1e-6)
    assert np.array_equal(got[3], alt_ids)
    np.testing.assert_allclose(got[4], alt_lp, atol=1e-5)


@needs_library
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


@needs_library
def test_reorder_filled_rejects_bad_rows():
    buffers = [torch.zeros(2, 1, 4, 2)]
    with pytest.raises(RuntimeError, match="row 2 of 2"):
        ops.reorder_filled(buffers, torch.tensor([0, 2]), 1)
    with pytest.raises(RuntimeError, match="3 rows from 2"):
        ops.reorder_filled(buffers, torch.tensor([0, 1, 1]), 1)
    with pytest.raises(RuntimeError, match=">= 5 positions"):
        ops.reorder_filled(buffers, torch.tensor([1, 0]), 5)


# --- the library ---------------------------------------------------------------------------------

_CHILD = """
import sys, torch
from nmt_desktop.core.decoding.backends import native_library
torch.ops.load_library(sys.argv[1])
native_library._loaded = True
sys.path[:0] = [sys.argv[2]]
from random_models import random_model
from nmt_desktop.core.decoding.backends.compiled import CompiledBackend
model = random_model()
backend = CompiledBackend(model)
cfg = model.config
with torch.inference_mode():
    state = backend.start(model.encode(torch.tensor([[5, 6, 7, cfg.eos_id]])), capacity=2)
    out = backend.step(state, torch.full((1,), cfg.decoder_start_id), True, False)
print(tuple(out.logits.shape), round(float(out.cross_attention.sum()), 4))
"""


def test_library_builds_from_source_and_runs(tmp_path):
    """The setup command compiles the source into a fresh folder; a child process loads that file and steps."""
    build = subprocess.run([sys.executable, "-m", "nmt_desktop.core.decoding.backends.native_library", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and "no C++ compiler" in build.stderr:
        pytest.skip(build.stderr.strip())
    assert build.returncode == 0, build.stderr
    built = tmp_path / build.stdout.strip().rsplit("/", 1)[-1]
    assert built.is_file() and built.name.startswith("decode_step-") and torch.__version__ in built.name
    env = dict(os.environ, NMT_DESKTOP_NATIVE="1")
    child = subprocess.run([sys.executable, "-c", _CHILD, str(built), TESTS_DIR],
                           capture_output=True, text=True, timeout=120, env=env)
    assert child.returncode == 0, child.stderr
    logits_shape, cross_sum = child.stdout.split(")")
    cfg = random_model().config
    assert logits_shape == f"(1, {cfg.tgt_vocab_size}"
    assert float(cross_sum) == pytest.approx(cfg.decoder_layers * cfg.n_heads)  # each head's row sums to 1


def test_missing_compiler_is_one_clear_line(tmp_path):
    env = dict(os.environ, CXX="no-such-compiler-xyz")
    result = subprocess.run([sys.executable, "-m", "nmt_desktop.core.decoding.backends.native_library", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == ("error: no C++ compiler: 'no-such-compiler-xyz' is not on PATH "
                                     "(Debian: apt-get install g++)")
    assert not list(tmp_path.iterdir())
