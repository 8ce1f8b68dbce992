"""The Transformer itself: cached decoding vs. teacher forcing, padding, attention, configuration.

All checks run in float32 on CPU on small random models built with `build_model` (every parameter
perturbed, so LayerNorm gains/biases, linear biases and the final logits bias take part).

Padding: sources are right-padded. The key-padding mask works for pads anywhere in the source
(left padding included: no attention ever lands on a pad), but positions are counted from the
first column, so a left-padded sentence sees shifted positions and its outputs legitimately differ
from the unpadded ones. Only right padding is promised (and tested) to leave outputs unchanged.
"""

from __future__ import annotations

import json
import math

import pytest
import torch

from random_models import BASE, VARIANTS, padded, random_model

from nmt_desktop.core.config import ConfigError, DecodeConfig, ModelConfig, PRESETS
from nmt_desktop.core.decoding.backends.python import PythonBackend
from nmt_desktop.core.model.layers import causal_mask, sinusoidal_positions
from nmt_desktop.core.model.transformer import build_model, count_parameters

ATOL = 1e-5


def random_batch(model, src_lens, tgt_lens, seed=0):
    """Right-padded sources ending in </s> and decoder inputs starting with decoder_start_id."""
    cfg = model.config
    gen = torch.Generator().manual_seed(seed)
    srcs = [torch.randint(4, cfg.src_vocab_size, (n - 1,), generator=gen).tolist() + [cfg.eos_id] for n in src_lens]
    tgts = [[cfg.decoder_start_id] + torch.randint(4, cfg.tgt_vocab_size, (n - 1,), generator=gen).tolist()
            for n in tgt_lens]
    return srcs, tgts, padded(srcs, cfg.pad_id), padded(tgts, cfg.pad_id)


# --- cached decoding == teacher forcing --------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_cached_decoding_equals_full_pass_with_padding(variant):
    model = random_model(**VARIANTS[variant])
    srcs, tgts, src, tgt = random_batch(model, src_lens=[7, 3, 5], tgt_lens=[5, 8, 2])
    L = model.config.decoder_layers
    with torch.no_grad():
        enc = model.encode(src)
        assert enc.src_mask is not None and enc.src_mask.shape == (3, 1, 1, 7)
        full = model.decode(tgt, enc, need_cross=True, need_self=True)
        B, T, V = full.logits.shape
        assert (B, T, V) == (3, 8, model.config.tgt_vocab_size)
        assert full.cross_attention.shape == (3, L, 4, 8, 7)
        assert full.self_attention.shape == (3, L, 4, 8, 8)
        torch.testing.assert_close(model(src, tgt), full.logits, atol=ATOL, rtol=0)
        # The weight-free (fused) path computes the same logits.
        torch.testing.assert_close(model.decode(tgt, enc).logits, full.logits, atol=ATOL, rtol=0)

        cache = model.start_cache(enc, capacity=2)  # small: the buffers must grow on the way
        fused = PythonBackend(model)  # the fused single-position step
        fused_state = fused.start(enc, capacity=2)
        for t in range(T):
            step = model.decode(tgt[:, t: t + 1], cache=cache, need_cross=True, need_self=True)
            fast = fused.step(fused_state, tgt[:, t], need_cross=False, need_self=False)
            assert step.logits.shape == (3, 1, V)
            assert cache.length == t + 1
            torch.testing.assert_close(step.logits[:, 0], full.logits[:, t], atol=ATOL, rtol=0)
            torch.testing.assert_close(fast.logits, full.logits[:, t], atol=ATOL, rtol=0)
            torch.testing.assert_close(step.cross_attention[:, :, :, 0], full.cross_attention[:, :, :, t],
                                       atol=ATOL, rtol=0)
            assert step.self_attention.shape == (3, L, 4, 1, t + 1)
            torch.testing.assert_close(step.self_attention[:, :, :, 0], full.self_attention[:, :, :, t, : t + 1],
                                       atol=ATOL, rtol=0)
        # The real (unpadded) target positions of each row, compared once more row by row.
        for b, tg in enumerate(tgts):
            assert torch.isfinite(full.logits[b, : len(tg)]).all()


@pytest.mark.parametrize("variant", ["post-relu-shared-tied", "pre-gelu-separate-untied"])
def test_prefill_then_incremental_equals_full_pass(variant):
    """A multi-token first call (fused causal path), a multi-token later call (explicit causal mask
    with a past), then single tokens: every route gives the teacher-forced logits."""
    model = random_model(seed=3, **VARIANTS[variant])
    _, _, src, tgt = random_batch(model, src_lens=[6, 2], tgt_lens=[9, 4], seed=5)
    with torch.no_grad():
        enc = model.encode(src)
        full = model.decode(tgt, enc, need_cross=True)
        for need in (False, True):
            cache = model.start_cache(enc, capacity=1)
            pieces = [(0, 3), (3, 5), (5, 6), (6, 9)]
            for a, b in pieces:
                out = model.decode(tgt[:, a:b], cache=cache, need_cross=need, need_self=need)
                torch.testing.assert_close(out.logits, full.logits[:, a:b], atol=ATOL, rtol=0)
                if need:
                    torch.testing.assert_close(out.cross_attention, full.cross_attention[:, :, :, a:b],
                                               atol=ATOL, rtol=0)
                    assert out.self_attention.shape[-2:] == (b - a, b)
            assert cache.length == 9
            last = model.decode(tgt, enc, last_only=True)
            torch.testing.assert_close(last.logits[:, 0], full.logits[:, -1], atol=ATOL, rtol=0)


# --- an independent reference implementation of the paper's equations ----------------------------


def _linear(x, lin):
    return x @ lin.weight.T + (0.0 if lin.bias is None else lin.bias)


def _layer_norm(x, ln, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * ln.weight + (0.0 if ln.bias is None else ln.bias)


def _mha(xq, xkv, wq, bq, wk, bk, wv, bv, out, n_heads, allowed):
    """Textbook multi-head attention, one sentence, head by head; allowed: (Tq, Tk) bool."""
    D = xq.shape[-1]
    dh = D // n_heads
    q, k, v = xq @ wq.T + bq, xkv @ wk.T + bk, xkv @ wv.T + bv
    heads = []
    for h in range(n_heads):
        sl = slice(h * dh, (h + 1) * dh)
        scores = q[:, sl] @ k[:, sl].T / math.sqrt(dh)
        scores = scores.masked_fill(~allowed, float("-inf"))
        heads.append(torch.softmax(scores, -1) @ v[:, sl])
    return _linear(torch.cat(heads, -1), out)


def _split(lin, n):
    D = lin.weight.shape[1]
    ws = [lin.weight[i * D:(i + 1) * D] for i in range(n)]
    bs = [0.0 if lin.bias is None else lin.bias[i * D:(i + 1) * D] for i in range(n)]
    return [x for pair in zip(ws, bs) for x in pair]


def reference_logits(model, src_ids, tgt_ids):
    """Logits (T, V) for one unpadded sentence, written out from the paper's equations."""
    cfg = model.config
    act = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu}[cfg.activation]
    pre = cfg.norm == "pre"
    pos = torch.zeros(cfg.max_positions, cfg.d_model, dtype=torch.float64)
    for p in range(cfg.max_positions):
        for i in range(cfg.d_model // 2):
            angle = p / 10000 ** (2 * i / cfg.d_model)
            if cfg.pos_layout == "interleaved":
                pos[p, 2 * i], pos[p, 2 * i + 1] = math.sin(angle), math.cos(angle)
            else:
                pos[p, i], pos[p, cfg.d_model // 2 + i] = math.sin(angle), math.cos(angle)
    pos = pos.float()
    scale = math.sqrt(cfg.d_model) if cfg.scale_embedding else 1.0
    src_table = model.tgt_embed.weight if cfg.shared_vocab else model.src_embed.weight
    S, T = len(src_ids), len(tgt_ids)

    def sublayer(x, res, f):
        if pre:
            return x + f(_layer_norm(x, res.norm, cfg.layer_norm_eps))
        return _layer_norm(x + f(x), res.norm, cfg.layer_norm_eps)

    def ffn(m):
        return lambda h: _linear(act(_linear(h, m.fc1)), m.fc2)

    x = src_table[torch.tensor(src_ids)] * scale + pos[:S]
    full = torch.ones(S, S, dtype=torch.bool)
    for layer in model.encoder_layers:
        a = layer.self_attn
        x = sublayer(x, layer.attn_res, lambda h: _mha(h, h, *_split(a.qkv_proj, 3), a.out_proj, cfg.n_heads, full))
        x = sublayer(x, layer.ffn_res, ffn(layer.ffn))
    if pre:
        x = _layer_norm(x, model.encoder_norm, cfg.layer_norm_eps)
    memory = x

    y = model.tgt_embed.weight[torch.tensor(tgt_ids)] * scale + pos[:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    cross_ok = torch.ones(T, S, dtype=torch.bool)
    for layer in model.decoder_layers:
        a, c = layer.self_attn, layer.cross_attn
        y = sublayer(y, layer.self_res, lambda h: _mha(h, h, *_split(a.qkv_proj, 3), a.out_proj, cfg.n_heads, causal))
        wq, bq = c.q_proj.weight, 0.0 if c.q_proj.bias is None else c.q_proj.bias
        y = sublayer(y, layer.cross_res,
                     lambda h: _mha(h, memory, wq, bq, *_split(c.kv_proj, 2), c.out_proj, cfg.n_heads, cross_ok))
        y = sublayer(y, layer.ffn_res, ffn(layer.ffn))
    if pre:
        y = _layer_norm(y, model.decoder_norm, cfg.layer_norm_eps)
    out_w = model.tgt_embed.weight if cfg.tie_output else model.out_proj.weight
    logits = y @ out_w.T
    return logits + model.logits_bias if cfg.final_logits_bias else logits


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_model_matches_reference_equations(variant):
    """Not only self-consistent: the batched, padded model computes the textbook Transformer."""
    model = random_model(seed=21, **VARIANTS[variant])
    srcs, tgts, src, tgt = random_batch(model, src_lens=[6, 3], tgt_lens=[4, 7], seed=8)
    with torch.no_grad():
        logits = model(src, tgt)
        for b in range(2):
            ref = reference_logits(model, srcs[b], tgts[b])
            torch.testing.assert_close(logits[b, : len(tgts[b])], ref, atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("how", ["in-place", "load_state_dict", ".data"])
def test_decoding_follows_weight_changes(how):
    """Whatever speeds the output projection up, the logits must come from the current weights:
    after an in-place update (optimizer step), a state-dict load, or a `.data` write (legacy
    weight averaging), a small decoding step equals the reference equations."""
    model = random_model(seed=31, tie_output=False, final_logits_bias=True)
    srcs, tgts, src, tgt = random_batch(model, src_lens=[5], tgt_lens=[3], seed=2)
    with torch.no_grad():
        model.decode(tgt, model.encode(src))  # warm any cache
        if how == "in-place":
            for p in model.parameters():
                p.mul_(1.5)
        elif how == "load_state_dict":
            model.load_state_dict({k: v * 1.5 for k, v in model.state_dict().items()})
        else:
            for p in model.parameters():
                p.data.mul_(1.5)
        for ctx in (torch.no_grad, torch.inference_mode):
            with ctx():
                logits = model.decode(tgt, model.encode(src)).logits
            torch.testing.assert_close(logits[0], reference_logits(model, srcs[0], tgts[0]), atol=1e-4, rtol=1e-5)


def test_model_built_under_inference_mode_decodes():
    """Parameters that are inference tensors (model created inside torch.inference_mode()) work."""
    with torch.inference_mode():
        model = random_model(seed=32, tie_output=False)
        srcs, tgts, src, tgt = random_batch(model, src_lens=[4, 6], tgt_lens=[3, 2], seed=3)
        enc = model.encode(src)
        full = model.decode(tgt, enc)
        cache = model.start_cache(enc)
        for t in range(tgt.shape[1]):
            step = model.decode(tgt[:, t: t + 1], cache=cache)
            torch.testing.assert_close(step.logits[:, 0], full.logits[:, t], atol=ATOL, rtol=0)
        torch.testing.assert_close(full.logits[0, :3], reference_logits(model, srcs[0], tgts[0]), atol=1e-4,
                                   rtol=1e-5)


# --- padding invariance --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["post-relu-shared-tied", "pre-relu-concat-logitsbias", "marian-like"])
def test_right_padding_never_changes_unpadded_outputs(variant):
    model = random_model(seed=7, **VARIANTS[variant])
    srcs, tgts, src, tgt = random_batch(model, src_lens=[9, 4, 6], tgt_lens=[3, 7, 5], seed=11)
    with torch.no_grad():
        enc = model.encode(src, need_weights=True)
        out = model.decode(tgt, enc, need_cross=True, need_self=True)
        for b in range(3):
            S, T = len(srcs[b]), len(tgts[b])
            alone_src, alone_tgt = torch.tensor([srcs[b]]), torch.tensor([tgts[b]])
            alone_enc = model.encode(alone_src, need_weights=True)
            assert alone_enc.src_mask is None  # nothing padded
            alone = model.decode(alone_tgt, alone_enc, need_cross=True, need_self=True)
            torch.testing.assert_close(enc.memory[b, :S], alone_enc.memory[0], atol=ATOL, rtol=0)
            torch.testing.assert_close(enc.self_attention[b, :, :, :S, :S], alone_enc.self_attention[0],
                                       atol=ATOL, rtol=0)
            assert float(enc.self_attention[b, :, :, :, S:].abs().sum()) == 0.0
            torch.testing.assert_close(out.logits[b, :T], alone.logits[0], atol=ATOL, rtol=0)
            torch.testing.assert_close(out.cross_attention[b, :, :, :T, :S], alone.cross_attention[0],
                                       atol=ATOL, rtol=0)
            assert float(out.cross_attention[b, :, :, :, S:].abs().sum()) == 0.0
            torch.testing.assert_close(out.self_attention[b, :, :, :T, :T], alone.self_attention[0],
                                       atol=ATOL, rtol=0)


def test_left_padding_is_masked_but_shifts_positions():
    """Pads anywhere get no attention; outputs are only promised equal for right padding (see module doc)."""
    model = random_model(seed=2)
    srcs, tgts, _, tgt = random_batch(model, src_lens=[8, 3], tgt_lens=[4, 4], seed=4)
    left = padded(srcs, model.config.pad_id, left=True)
    with torch.no_grad():
        enc = model.encode(left, need_weights=True)
        out = model.decode(tgt, enc, need_cross=True)
    pad = 8 - 3
    assert enc.src_mask[1, 0, 0].tolist() == [False] * pad + [True] * 3
    assert float(enc.self_attention[1, :, :, :, :pad].abs().max()) == 0.0
    assert float(out.cross_attention[1, :, :, :, :pad].abs().max()) == 0.0
    torch.testing.assert_close(out.cross_attention.sum(-1), torch.ones(2, 3, 4, 4), atol=ATOL, rtol=0)
    # The unpadded row is unaffected by the other row's left padding.
    with torch.no_grad():
        alone = model.decode(tgt[:1], model.encode(left[:1]), need_cross=True)
    torch.testing.assert_close(out.logits[0], alone.logits[0], atol=ATOL, rtol=0)


# --- attention shapes and normalisation -------------------------------------------------------------


def test_attention_shapes_rows_sum_to_one_and_causality():
    model = random_model(seed=9, norm="pre")
    _, _, src, tgt = random_batch(model, src_lens=[5, 8], tgt_lens=[6, 3], seed=1)
    L_enc, L_dec, H = model.config.encoder_layers, model.config.decoder_layers, model.config.n_heads
    with torch.no_grad():
        enc = model.encode(src, need_weights=True)
        out = model.decode(tgt, enc, need_cross=True, need_self=True)
    assert enc.self_attention.shape == (2, L_enc, H, 8, 8)
    assert out.cross_attention.shape == (2, L_dec, H, 6, 8)
    assert out.self_attention.shape == (2, L_dec, H, 6, 6)
    for w in (enc.self_attention, out.cross_attention, out.self_attention):
        assert w.dtype == torch.float32
        assert (w >= 0).all()
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=ATOL, rtol=0)
    upper = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    assert float(out.self_attention[..., upper].abs().max()) == 0.0
    assert out.self_attention[..., ~upper].gt(0).all()
    # The encoder's pad columns of row 0 (length 5) get nothing.
    assert float(enc.self_attention[0, ..., 5:].abs().max()) == 0.0


def test_head_mask_switches_cross_attention_heads_off():
    model = random_model(seed=4)
    _, _, src, tgt = random_batch(model, src_lens=[5, 4], tgt_lens=[4, 4], seed=2)
    L, H = model.config.decoder_layers, model.config.n_heads
    with torch.no_grad():
        enc = model.encode(src)
        base = model.decode(tgt, enc).logits
        ones = model.decode(tgt, enc, head_mask=torch.ones(L, H)).logits
        off = torch.ones(L, H)
        off[0, 1] = 0.0
        masked = model.decode(tgt, enc, head_mask=off).logits
        per_row = torch.ones(2, L, H)
        per_row[1, 0, 1] = 0.0
        mixed = model.decode(tgt, enc, head_mask=per_row).logits
    torch.testing.assert_close(ones, base, atol=ATOL, rtol=0)
    assert not torch.allclose(masked, base, atol=1e-3)
    torch.testing.assert_close(mixed[0], base[0], atol=ATOL, rtol=0)
    torch.testing.assert_close(mixed[1], masked[1], atol=ATOL, rtol=0)


def test_sinusoidal_layouts_and_causal_mask():
    inter = sinusoidal_positions(10, 8, "interleaved")
    concat = sinusoidal_positions(10, 8, "concat")
    torch.testing.assert_close(inter[:, 0::2], concat[:, :4])
    torch.testing.assert_close(inter[:, 1::2], concat[:, 4:])
    torch.testing.assert_close(inter[0, 1::2], torch.ones(4))  # cos(0)
    assert causal_mask(1, 5, torch.device("cpu")) is None
    m = causal_mask(2, 5, torch.device("cpu"))
    assert m.tolist() == [[True, True, True, True, False], [True] * 5]
    with pytest.raises(ValueError):
        sinusoidal_positions(4, 8, "spiral")


def test_sequences_longer_than_max_positions_are_refused():
    model = random_model(max_positions=8)
    with pytest.raises(ValueError, match="max_positions"):
        model.encode(torch.full((1, 9), 5))


def test_build_model_is_seeded_and_leaves_global_rng_alone():
    cfg = ModelConfig(**BASE)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a = build_model(cfg, seed=1)
    assert torch.equal(torch.rand(3), expected)
    b = build_model(cfg, seed=1)
    for (na, pa), (nb, pb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert na == nb and torch.equal(pa, pb)
    assert count_parameters(a) > 0
    # One shared vocabulary means one embedding matrix.
    assert a.src_embed is None and a.source_embedding is a.tgt_embed
    assert not any("positions" in k for k in a.state_dict())


# --- configuration ---------------------------------------------------------------------------------


def test_model_config_json_round_trip(tmp_path):
    cfg = ModelConfig(**{**BASE, **VARIANTS["marian-like"]}, src_lang="en", tgt_lang="de")
    again = ModelConfig.from_json(cfg.to_json())
    assert again == cfg
    cfg.save(tmp_path / "config.json")
    data = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    assert data["pos_layout"] == "concat" and data["format_version"] == cfg.format_version
    assert ModelConfig.from_dict(data) == cfg
    for name, preset in PRESETS.items():
        assert ModelConfig(**preset).head_dim * ModelConfig(**preset).n_heads == preset["d_model"], name


@pytest.mark.parametrize("overrides, field", [
    (dict(d_model=30, n_heads=4), "d_model"),
    (dict(n_heads=0), "n_heads"),
    (dict(d_model=-8), "d_model"),
    (dict(activation="tanh"), "activation"),
    (dict(norm="sandwich"), "norm"),
    (dict(pos_layout="spiral"), "pos_layout"),
    (dict(shared_vocab=True, src_vocab_size=40, tgt_vocab_size=41), "shared_vocab"),
    (dict(dropout=1.5), "dropout"),
    (dict(eos_id=99), "eos_id"),
    (dict(encoder_layers=0), "encoder_layers"),
    (dict(format_version=999), "format_version"),
])
def test_model_config_validation_names_the_field(overrides, field):
    with pytest.raises(ConfigError, match=f"'{field}'"):
        ModelConfig(**{**BASE, **overrides})


def test_model_config_refuses_unknown_fields_and_non_objects():
    with pytest.raises(ConfigError, match="unknown field 'dmodel'"):
        ModelConfig.from_dict({**BASE, "dmodel": 64})
    with pytest.raises(ConfigError):
        ModelConfig.from_json("[1, 2]")


@pytest.mark.parametrize("kwargs, words", [
    (dict(beam_size=2, nbest=3), "n-best"),
    (dict(beam_size=0), "beam"),
    (dict(beam_size=4, sample=True), "sampling"),
    (dict(temperature=0), "temperature"),
    (dict(top_k=-1), "top-k"),
    (dict(top_p=0.0), "top-p"),
    (dict(min_length=-1), "minimum length"),
    (dict(max_len_a=0, max_len_b=0), "at least one token"),
])
def test_decode_config_validation(kwargs, words):
    with pytest.raises(ConfigError, match=words):
        DecodeConfig(**kwargs)


def test_decode_config_max_length():
    cfg = DecodeConfig(max_len_a=1.5, max_len_b=3)
    assert cfg.max_length(4, 100) == 9
    assert cfg.max_length(200, 100) == 99  # capped: the start token takes a position
    assert DecodeConfig(max_len_a=0.0, max_len_b=1).max_length(50, 100) == 1


def test_feed_forward_skipping_padding_keeps_the_autocast_dtype() -> None:
    """Training skips padded positions (`rows`): the skipped output must be what the full product gives at
    those rows, zeros elsewhere, in the product's own dtype. Under autocast the products are bfloat16 while
    the residual stream is float32; on CUDA index_copy does not promote, so a float32 buffer stopped every
    GPU training run at its first step (found on an H200). The CPU's autocast shows the dtype the same way."""
    from nmt_desktop.core.model.layers import FeedForward

    torch.manual_seed(0)
    ff = FeedForward(16, 32, "relu", 0.0, True)
    x = torch.randn(2, 5, 16)
    rows = torch.tensor([0, 1, 2, 5, 6])  # (N,) flat positions of B * T kept
    with torch.autocast("cpu", dtype=torch.bfloat16):
        full = ff(x)  # (B, T, D)
        skipped = ff(x, rows)
    assert skipped.dtype == full.dtype == torch.bfloat16
    flat_full, flat_skipped = full.reshape(10, 16), skipped.reshape(10, 16)
    torch.testing.assert_close(flat_skipped[rows], flat_full[rows])
    others = torch.tensor([i for i in range(10) if i not in rows.tolist()])
    assert torch.all(flat_skipped[others] == 0)
    assert ff(x, rows).dtype == torch.float32  # no autocast: float32 as before
