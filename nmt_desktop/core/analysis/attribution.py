"""Token attributions of a translation, and how faithful they are (issue 31, core part; numpy/torch, no Qt).

For a `Translation` (the model's own, or a given one scored by teacher forcing with `Translator.score`), each
method gives, per target token y_t, a score for every source token (S,) and for every earlier target token
y_0..y_{t-1}: one `Attribution` with `source` (T, S) and `prefix` (T, T), strictly lower-triangular
(`prefix[t, j]`, j < t; the decoder's start token gets no score). T counts the translation's tokens
(`</s>` included when it ended normally), S the source tokens (`</s>` and a `>>lang<<` token included).

What is explained is f_t = log p(y_t | x, y_<t), the teacher-forced log-probability of the given token,
computed in one teacher-forced pass (`Transformer.encode` / `decode`) in eval mode, in float32. "Embedding"
below is the output of the model's embedding modules (`Transformer.source_embedding`, `tgt_embed`): the
table row, before the `embed_scale` factor and the sinusoidal positions are applied. Gradients are taken with
forward hooks on those modules that swap their output for a leaf tensor; `torch.autograd.grad` asks for those
leaves only, so no parameter's `.grad` is touched and the weights never change.

- `saliency`: ||d f_t / d e_i||_2 per token i (>= 0; with `scale_embedding` the gradient is w.r.t. the
  unscaled row, i.e. sqrt(d_model) times the gradient w.r.t. the scaled one).
- `input_x_gradient`: sum_d e_i,d * d f_t / d e_i,d, SIGNED (positive: the token raises log p(y_t)); the
  same value whether read before or after `embed_scale`.
- `integrated_gradients`: sum_d e_i,d * mean_k d f_t / d e_i,d at (k + 1/2)/N * e (midpoint Riemann sum,
  N = `steps`, default 16), SIGNED, against a baseline whose source embeddings and target prefix
  embeddings (y_<t) are all zero (positions kept; the decoder start token is kept as it is: it is no input).
  Completeness: sum(source[t]) + sum(prefix[t]) ~= f_t(x) - f_t(baseline); both are in the result
  (`logprobs`, `baseline_logprobs`).
- `leave_one_out`: f_t(x) - f_t(x with token i replaced by `<unk>`), SIGNED, for every source token and every
  target prefix token (one batched pass each side).
- `attention_rollout`: Abnar & Zuidema (2020) on the encoder: per layer the head mean A_l of the encoder
  self-attention, Â_l = (A_l + I) / 2 (rows still sum to 1), R = Â_L ... Â_1 (S, S); then
  source[t] = C[t] @ R with C the last decoder layer's cross-attention averaged over heads (T, S): rows
  sum to 1. The prefix is the same rollout over the decoder self-attention (positions 0..t of the decoder
  input), prefix[t, j] = R_dec[t, j + 1] (the start token's share is dropped, so prefix rows sum to < 1).
- `attention`: the plain baseline: the cross-attention averaged over all decoder layers and heads (T, S), rows
  summing to 1; the prefix from the decoder self-attention averaged the same way (its own distribution).
- `alti_plus`: ALTI+ (Ferrando et al. 2022; `alti.py`): per target token one distribution over the source
  tokens, the prefix and the decoder start token (`start`): source + prefix + start rows sum to 1.
- `value_zeroing`: Mohebbi et al. 2023, all layers at once (`value_zeroing.py`): the cosine distance of the
  final decoder state when one token's value vectors are zeroed, rows normalised like ALTI+'s.

`start` (T,) holds the decoder start token's share where a method gives it one (the rollout, ALTI+, value
zeroing, attention); the start token is no input of the translation, so it is never in `prefix`.

`Attribution.words` sums a token attribution into words (`words.word_groups`: each special token is a word of
its own): source columns summed; target rows summed (a word's log-probability is the sum of its pieces', and
the gradient and leave-one-out methods are additive in f), the rows of the `DISTRIBUTIONS` methods averaged
(they stay distributions). At word level
a prefix row may have a diagonal entry: what a word's later pieces owe its earlier ones.

`faithfulness` measures ferret's comprehensiveness and sufficiency (DeYoung et al. 2020) per target token: for
k in 10%..50%, remove the top ceil(k * n) of the n non-special source tokens by the token's own attribution row
(replaced by `<unk>`) and take the drop of f_t (comprehensiveness, higher is more faithful), or keep only them
and replace the rest (sufficiency, lower is more faithful); averaged over the target tokens, AOPC = mean over k.
A seeded random ranking of the same tokens is the baseline.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from nmt_desktop.core.analysis.alti import alti_plus
from nmt_desktop.core.analysis.value_zeroing import value_zeroing_scores
from nmt_desktop.core.analysis.words import is_special, join_word, word_groups
from nmt_desktop.core.decoding.results import Translation
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.model.transformer import Transformer

METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention_rollout",
           "attention", "alti_plus", "value_zeroing")
SIGNED = {"saliency": False, "input_x_gradient": True, "integrated_gradients": True, "leave_one_out": True,
          "attention_rollout": False, "attention": False, "alti_plus": False, "value_zeroing": False}
DISTRIBUTIONS = frozenset({"attention_rollout", "attention", "alti_plus", "value_zeroing"})  # rows: shares
SHARES = frozenset({"alti_plus", "value_zeroing"})  # source + prefix + start rows: one distribution
FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)
ROW_CHUNK = 64  # rows of one batched forward pass (perturbations)


@dataclass
class Attribution:
    """One method's attribution of a translation's target tokens (see the module docstring)."""

    method: str
    source_tokens: list[str]
    target_tokens: list[str]
    source: np.ndarray  # (T, S) float32
    prefix: np.ndarray  # (T, T) float32, strictly lower-triangular (at word level: lower-triangular)
    seconds: float
    logprobs: np.ndarray  # (T,) float32: f_t = log p(y_t | x, y_<t), teacher-forced
    baseline_logprobs: np.ndarray | None = None  # (T,) integrated gradients: f_t at the all-zero baseline
    signed: bool = True  # whether scores may be negative
    level: str = "token"  # "token" or "word"
    start: np.ndarray | None = None  # (T,) float32: the decoder start token's share (module docstring)

    @property
    def source_share(self) -> np.ndarray | None:
        """(T,) the source's share of each target token (Ferrando et al.'s source contribution), for the methods
        whose source + prefix + start rows are one distribution (ALTI+, value zeroing); None for the others."""
        if self.method not in SHARES:
            return None
        start = 0.0 if self.start is None else self.start
        total = self.source.sum(1) + self.prefix.sum(1) + start
        return (self.source.sum(1) / np.maximum(total, 1e-30)).astype(np.float32)

    def words(self, continuing_prefix: str | None = None) -> "Attribution":
        """This attribution summed into words (module docstring); token-level fields of the result describe
        words: `logprobs` summed per target word. Idempotent only at token level (raises at word level)."""
        if self.level != "token":
            raise ValueError("this attribution is already at word level")
        src_groups = word_groups(self.source_tokens, continuing_prefix)
        tgt_groups = word_groups(self.target_tokens, continuing_prefix)
        S, T = len(self.source_tokens), len(self.target_tokens)
        src_sum = _group_matrix(src_groups, S).T  # (S, Ws)
        tgt_sum = _group_matrix(tgt_groups, T)  # (Wt, T)
        rows = tgt_sum / tgt_sum.sum(1, keepdims=True) if self.method in DISTRIBUTIONS else tgt_sum  # (Wt, T)
        source = rows @ self.source.astype(np.float64) @ src_sum
        prefix = rows @ self.prefix.astype(np.float64) @ tgt_sum.T
        base = None if self.baseline_logprobs is None else (tgt_sum @ self.baseline_logprobs).astype(np.float32)
        start = None if self.start is None else (rows @ self.start).astype(np.float32)
        return Attribution(self.method, [_label(self.source_tokens, g) for g in src_groups],
                           [_label(self.target_tokens, g) for g in tgt_groups], source.astype(np.float32),
                           np.tril(prefix).astype(np.float32), self.seconds,
                           (tgt_sum @ self.logprobs).astype(np.float32), base, self.signed, "word", start)


@dataclass
class Faithfulness:
    """Comprehensiveness / sufficiency of one attribution against a seeded random ranking (module docstring).
    Arrays are (K,), one value per fraction, each the mean over target tokens of a drop of log p(y_t)."""

    method: str
    fractions: tuple[float, ...]
    comprehensiveness: np.ndarray
    sufficiency: np.ndarray
    random_comprehensiveness: np.ndarray
    random_sufficiency: np.ndarray
    full_logprob: float  # sum over t of f_t(x), the unperturbed target log-probability
    seed: int
    seconds: float
    per_token: dict[str, np.ndarray] = field(default_factory=dict)  # each (K, T): the drops before averaging

    @property
    def aopc_comprehensiveness(self) -> float:
        return float(np.mean(self.comprehensiveness))

    @property
    def aopc_sufficiency(self) -> float:
        return float(np.mean(self.sufficiency))

    @property
    def random_aopc_comprehensiveness(self) -> float:
        return float(np.mean(self.random_comprehensiveness))

    @property
    def random_aopc_sufficiency(self) -> float:
        return float(np.mean(self.random_sufficiency))


# --- the pieces every method shares ------------------------------------------------------------------


@dataclass
class _Inputs:
    model: Transformer
    src: Tensor  # (1, S)
    tgt_in: Tensor  # (1, T): decoder start, y_0 .. y_{T-2}
    targets: Tensor  # (T,): y_0 .. y_{T-1}
    source_tokens: list[str]
    target_tokens: list[str]
    source_unk: int
    target_unk: int


def _inputs(translator: Translator, translation: Translation) -> _Inputs:
    if translation.segments:
        raise ValueError("this translation joins several units: explain each of its `segments`")
    if translator.int8:
        raise ValueError("attributions need the float model: load the Translator without int8")
    model = translator.model
    if any(p.dtype != torch.float32 for p in model.parameters()):
        raise ValueError("attributions are computed in float32: the model's weights are not float32")
    source_ids, target_ids = list(translation.source_ids), list(translation.target_ids)
    if not source_ids or not target_ids:
        raise ValueError("nothing to explain: the translation has no source or no target tokens")
    cfg = translator.config
    device = translator.device
    src = torch.tensor([source_ids], dtype=torch.long, device=device)
    tgt_in = torch.tensor([[cfg.decoder_start_id] + target_ids[:-1]], dtype=torch.long, device=device)
    targets = torch.tensor(target_ids, dtype=torch.long, device=device)
    source_tokens = list(translation.source_tokens) or translator.source_pieces(source_ids)
    target_tokens = list(translation.target_tokens) or translator.target_pieces(target_ids)
    if len(source_tokens) != len(source_ids):
        source_tokens = translator.source_pieces(source_ids)
    if len(target_tokens) != len(target_ids):
        target_tokens = translator.target_pieces(target_ids)
    return _Inputs(model, src, tgt_in, targets, source_tokens, target_tokens,
                   _unk(translator.tokenizers.source, cfg.unk_id), _unk(translator.tokenizers.target, cfg.unk_id))


def _unk(tokenizer, default: int) -> int:
    found = tokenizer.token_to_id("<unk>")
    return default if found is None else int(found)


@contextmanager
def _eval_mode(model: nn.Module) -> Iterator[None]:
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


class _EmbeddingTap:
    """Forward hooks on the embedding modules: the source / target embedding output, when the ids passed are
    exactly `src` / `tgt`, is replaced by `edit(side, output)` (shared vocabularies: one module, one hook)."""

    def __init__(self, model: Transformer, src: Tensor, tgt: Tensor,
                 edit: Callable[[str, Tensor], Tensor]):
        self.src, self.tgt, self.edit = src, tgt, edit
        modules = {id(m): m for m in (model.source_embedding, model.tgt_embed)}
        self.handles = [m.register_forward_hook(self._hook) for m in modules.values()]

    def _hook(self, module: nn.Module, args: tuple, output: Tensor) -> Tensor | None:
        ids = args[0]
        if ids is self.src:
            return self.edit("src", output)
        if ids is self.tgt:
            return self.edit("tgt", output)
        return None

    def close(self) -> None:
        for handle in self.handles:
            handle.remove()


def _last_logprob(model: Transformer, src: Tensor, tgt: Tensor, target: int) -> Tensor:
    """log p(target) at the last decoder position, per row: (B,)."""
    logits = model.decode(tgt, model.encode(src), last_only=True).logits[:, -1].float()  # (B, V)
    return torch.log_softmax(logits, dim=-1)[:, target]


def _all_logprobs(model: Transformer, src: Tensor, tgt_in: Tensor, targets: Tensor) -> Tensor:
    """f_t of each row: src (B, S), tgt_in (B, T) -> (B, T), in chunks of ROW_CHUNK rows, without gradients."""
    out = []
    with torch.no_grad():
        for start in range(0, src.shape[0], ROW_CHUNK):
            s, t = src[start:start + ROW_CHUNK], tgt_in[start:start + ROW_CHUNK]
            logp = torch.log_softmax(model(s, t).float(), dim=-1)  # (b, T, V)
            out.append(logp.gather(-1, targets.expand(s.shape[0], -1)[..., None])[..., 0])
    return torch.cat(out)


def _gradients(inp: _Inputs, scales: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """Gradients of f_t w.r.t. the embeddings scaled by each of `scales` (the target prefix only, not the start
    token), one forward/backward per target token, batched over the scales.

    Returns (src_emb (S, D), tgt_emb (T, D) of the decoder input, src_grad (T, n, S, D),
    tgt_grad (T, n, T, D) zero at positions > t, f (T, n) at each scale)."""
    model = inp.model
    scale = torch.tensor(list(scales), dtype=torch.float32, device=inp.src.device)  # (n,)
    n, S, T = len(scale), inp.src.shape[1], inp.tgt_in.shape[1]
    D = model.config.d_model
    src_grad = np.zeros((T, n, S, D), dtype=np.float32)
    tgt_grad = np.zeros((T, n, T, D), dtype=np.float32)
    values = np.zeros((T, n), dtype=np.float32)
    embs: dict[str, Tensor] = {}
    leaves: dict[str, Tensor] = {}

    def edit(side: str, output: Tensor) -> Tensor:
        base = output.detach()[:1].float()  # (1, len, D): every row holds the same ids
        embs[side] = base[0]
        factor = scale[:, None, None].expand(n, base.shape[1], 1).clone()  # (n, len, 1)
        if side == "tgt":
            factor[:, 0] = 1.0  # the decoder start token is not an input: never scaled
        leaf = (factor * base).requires_grad_(True)
        leaves[side] = leaf
        return leaf

    with _eval_mode(model), torch.enable_grad():
        for t in range(T):
            src = inp.src.expand(n, -1).contiguous()
            tgt = inp.tgt_in[:, :t + 1].expand(n, -1).contiguous()
            tap = _EmbeddingTap(model, src, tgt, edit)
            try:
                f = _last_logprob(model, src, tgt, int(inp.targets[t]))  # (n,)
            finally:
                tap.close()
            g_src, g_tgt = torch.autograd.grad(f.sum(), [leaves["src"], leaves["tgt"]])
            src_grad[t] = g_src.cpu().numpy()
            tgt_grad[t, :, :t + 1] = g_tgt.cpu().numpy()
            values[t] = f.detach().cpu().numpy()
    # the last pass (t = T - 1) saw the whole decoder input: its embeddings are every position's
    return embs["src"].cpu().numpy(), embs["tgt"].cpu().numpy(), src_grad, tgt_grad, values


def _prefix_of(per_input: np.ndarray) -> np.ndarray:
    """Scores over the decoder input positions (T, T) -> over the target prefix (T, T): position j + 1 of the
    decoder input is y_j; only j < t kept (strictly lower-triangular)."""
    T = per_input.shape[0]
    out = np.zeros((T, T), dtype=np.float32)
    out[:, :T - 1] = per_input[:, 1:]
    return np.tril(out, k=-1)


def _result(method: str, inp: _Inputs, source: np.ndarray, prefix_input: np.ndarray, started: float,
            logprobs: np.ndarray, baseline: np.ndarray | None = None, start: np.ndarray | None = None) -> Attribution:
    return Attribution(method, inp.source_tokens, inp.target_tokens, np.ascontiguousarray(source, np.float32),
                       _prefix_of(prefix_input), time.perf_counter() - started, logprobs.astype(np.float32),
                       None if baseline is None else baseline.astype(np.float32), SIGNED[method],
                       start=None if start is None else np.asarray(start, np.float32))


# --- the methods ---------------------------------------------------------------------------------------


def saliency(translator: Translator, translation: Translation) -> Attribution:
    """||d log p(y_t) / d embedding||_2 of each source and target prefix token."""
    started = time.perf_counter()
    inp = _inputs(translator, translation)
    _, _, g_src, g_tgt, f = _gradients(inp, [1.0])
    return _result("saliency", inp, np.linalg.norm(g_src[:, 0], axis=-1), np.linalg.norm(g_tgt[:, 0], axis=-1),
                   started, f[:, 0])


def input_x_gradient(translator: Translator, translation: Translation) -> Attribution:
    """sum over the embedding dimension of embedding * gradient (signed)."""
    started = time.perf_counter()
    inp = _inputs(translator, translation)
    e_src, e_tgt, g_src, g_tgt, f = _gradients(inp, [1.0])
    return _result("input_x_gradient", inp, (g_src[:, 0] * e_src).sum(-1), (g_tgt[:, 0] * e_tgt).sum(-1),
                   started, f[:, 0])


def integrated_gradients(translator: Translator, translation: Translation, steps: int = 16) -> Attribution:
    """Integrated gradients from the all-zero embedding baseline, `steps`-point midpoint rule (signed)."""
    if steps < 1:
        raise ValueError("integrated gradients needs at least one step")
    started = time.perf_counter()
    inp = _inputs(translator, translation)
    scales = [(k + 0.5) / steps for k in range(steps)] + [0.0, 1.0]  # the last two: f at the baseline and at x
    e_src, e_tgt, g_src, g_tgt, f = _gradients(inp, scales)
    mean_src, mean_tgt = g_src[:, :steps].mean(1), g_tgt[:, :steps].mean(1)  # (T, S, D), (T, T, D)
    return _result("integrated_gradients", inp, (mean_src * e_src).sum(-1), (mean_tgt * e_tgt).sum(-1),
                   started, f[:, -1], f[:, -2])


def leave_one_out(translator: Translator, translation: Translation) -> Attribution:
    """Drop of log p(y_t) when one token (source, or target prefix) is replaced by `<unk>` (signed)."""
    started = time.perf_counter()
    inp = _inputs(translator, translation)
    S, T = inp.src.shape[1], inp.tgt_in.shape[1]
    src = inp.src.repeat(S + 1, 1)  # row 0: the source as it is; row i + 1: token i replaced
    src[torch.arange(1, S + 1), torch.arange(S)] = inp.source_unk
    tgt = inp.tgt_in.repeat(T, 1)  # row j (j >= 1): decoder input position j (y_{j-1}) replaced
    tgt[torch.arange(1, T), torch.arange(1, T)] = inp.target_unk
    with _eval_mode(inp.model):
        on_source = _all_logprobs(inp.model, src, inp.tgt_in.expand(S + 1, -1), inp.targets).cpu().numpy()
        on_prefix = _all_logprobs(inp.model, inp.src.expand(T - 1, -1), tgt[1:], inp.targets).cpu().numpy() \
            if T > 1 else np.zeros((0, T), dtype=np.float32)
    full = on_source[0]  # (T,)
    source = full[:, None] - on_source[1:].T  # (T, S)
    prefix_input = np.zeros((T, T), dtype=np.float32)
    prefix_input[:, 1:] = full[:, None] - on_prefix.T  # (T, T - 1): column j for decoder input position j
    return _result("leave_one_out", inp, source, prefix_input, started, full)


def _rollout(attention: np.ndarray) -> np.ndarray:
    """Per-layer head-mean attention (L, N, N) -> Abnar & Zuidema's rollout Â_L ... Â_1, Â = (A + I) / 2."""
    L, N, _ = attention.shape
    result = np.eye(N, dtype=np.float64)
    for layer in range(L):
        result = (0.5 * attention[layer].astype(np.float64) + 0.5 * np.eye(N)) @ result
    return result


def attention_rollout(translator: Translator, translation: Translation) -> Attribution:
    """Encoder self-attention rollout read through the last decoder layer's head-mean cross-attention (module
    docstring); the prefix from the rollout of the decoder self-attention."""
    started = time.perf_counter()
    inp = _inputs(translator, translation)
    model = inp.model
    with _eval_mode(model), torch.no_grad():
        enc = model.encode(inp.src, need_weights=True)
        dec = model.decode(inp.tgt_in, enc, need_cross=True, need_self=True)
        logp = torch.log_softmax(dec.logits[0].float(), dim=-1).gather(-1, inp.targets[:, None])[:, 0]
    enc_self = enc.self_attention[0].float().mean(1).cpu().numpy()  # (L, S, S)
    cross = dec.cross_attention[0, -1].float().mean(0).cpu().numpy()  # (T, S)
    dec_self = dec.self_attention[0].float().mean(1).cpu().numpy()  # (L, T, T)
    source = cross.astype(np.float64) @ _rollout(enc_self)
    dec_rollout = _rollout(dec_self)  # (T, T): column 0 the start token
    return _result("attention_rollout", inp, source, dec_rollout, started, logp.cpu().numpy(),
                   start=dec_rollout[:, 0])


def attention(translator: Translator, translation: Translation) -> Attribution:
    """The plain baseline: cross-attention averaged over every decoder layer and head (rows sum to 1); the
    prefix from the decoder self-attention averaged the same way (the start token's share in `start`)."""
    started = time.perf_counter()
    inp = _inputs(translator, translation)
    model = inp.model
    with _eval_mode(model), torch.no_grad():
        dec = model.decode(inp.tgt_in, model.encode(inp.src), need_cross=True, need_self=True)
        logp = torch.log_softmax(dec.logits[0].float(), dim=-1).gather(-1, inp.targets[:, None])[:, 0]
    cross = dec.cross_attention[0].float().mean((0, 1)).cpu().numpy()  # (T, S)
    dec_self = dec.self_attention[0].float().mean((0, 1)).cpu().numpy()  # (T, T)
    return _result("attention", inp, cross, dec_self, started, logp.cpu().numpy(), start=dec_self[:, 0])


def _shares(method: str, scores: Callable[[Transformer, Tensor, Tensor, Tensor], Any]) -> Callable[..., Attribution]:
    """An Attribution method from a share method's tensor code (alti.py, value_zeroing.py): `scores(model, src,
    tgt_in, targets)` gives `.source` (T, S), `.decoder_input` (T, T) whose column 0 is the decoder start
    token's share (`Attribution.start`), and `.logprobs`."""

    def run(translator: Translator, translation: Translation) -> Attribution:
        started = time.perf_counter()
        inp = _inputs(translator, translation)
        with _eval_mode(inp.model):
            result = scores(inp.model, inp.src, inp.tgt_in, inp.targets)
        return _result(method, inp, result.source, result.decoder_input, started, result.logprobs,
                       start=result.decoder_input[:, 0])

    run.__name__ = method
    run.__doc__ = f"{method} as an Attribution: source + prefix + start rows sum to 1"
    return run


alti = _shares("alti_plus", alti_plus)  # ALTI+ (alti.py)
value_zeroing = _shares("value_zeroing", value_zeroing_scores)  # value zeroing (value_zeroing.py)


_METHODS: dict[str, Callable[..., Attribution]] = {
    "saliency": saliency, "input_x_gradient": input_x_gradient, "integrated_gradients": integrated_gradients,
    "leave_one_out": leave_one_out, "attention_rollout": attention_rollout, "attention": attention,
    "alti_plus": alti, "value_zeroing": value_zeroing,
}


def attribute(translator: Translator, translation: Translation, method: str, **options) -> Attribution:
    """The attribution of `translation` by `method` (one of METHODS); options go to the method
    (`steps` for integrated gradients)."""
    try:
        run = _METHODS[method]
    except KeyError:
        raise ValueError(f"unknown attribution method {method!r}; choose one of {', '.join(METHODS)}") from None
    return run(translator, translation, **options)


# --- word level ------------------------------------------------------------------------------------------


def _group_matrix(groups: Sequence[Sequence[int]], n: int) -> np.ndarray:
    out = np.zeros((len(groups), n), dtype=np.float64)
    for k, group in enumerate(groups):
        out[k, list(group)] = 1.0
    return out


def _label(pieces: Sequence[str], group: Sequence[int]) -> str:
    return join_word([pieces[i] for i in group])


# --- faithfulness ------------------------------------------------------------------------------------------


def _eligible(source_tokens: Sequence[str]) -> np.ndarray:
    """Indices of the source tokens a ranking may remove: every token but the special ones (`</s>`, `>>lang<<`)."""
    return np.array([i for i, piece in enumerate(source_tokens) if not is_special(piece)], dtype=np.int64)


def _perturbation_drops(inp: _Inputs, eligible: np.ndarray, rankings: np.ndarray, fractions: Sequence[float],
                        full: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """rankings (T, n): per target token, the eligible source positions best first. Returns the drops of f_t
    (comprehensiveness, sufficiency), each (K, T)."""
    T, n = rankings.shape
    K = len(fractions)
    counts = [min(n, max(1, math.ceil(frac * n))) for frac in fractions]
    removed = inp.src.repeat(K * T, 1)  # row k * T + t: the top counts[k] of row t's ranking replaced
    kept = inp.src.repeat(K * T, 1)  # the same row: every eligible token but those replaced
    for k, count in enumerate(counts):
        for t in range(T):
            top = torch.as_tensor(rankings[t, :count])
            rest = torch.as_tensor(np.setdiff1d(eligible, rankings[t, :count]))
            removed[k * T + t, top] = inp.source_unk
            if len(rest):
                kept[k * T + t, rest] = inp.source_unk
    rows = torch.cat([removed, kept]).view(2, K, T, -1)  # row (side, k, t): (S,) ids
    own = np.zeros((2, K, T), dtype=np.float32)  # f_t of row (side, k, t)
    # row (., ., t) needs f_t only: decode y_<t and project the last position (one vocabulary row, not T)
    with _eval_mode(inp.model), torch.no_grad():
        for t in range(T):
            src = rows[:, :, t].reshape(2 * K, -1)  # (2K, S)
            tgt = inp.tgt_in[:, :t + 1].expand(2 * K, -1)  # (2K, t + 1)
            own[:, :, t] = _last_logprob(inp.model, src, tgt, int(inp.targets[t])).view(2, K).cpu().numpy()
    return full[None] - own[0], full[None] - own[1]


def faithfulness(translator: Translator, translation: Translation, attribution: Attribution,
                 fractions: Sequence[float] = FRACTIONS, seed: int = 0) -> Faithfulness:
    """Comprehensiveness and sufficiency of a token-level attribution of this translation, and of a seeded random
    ranking of the same tokens (module docstring). Higher comprehensiveness and lower sufficiency than random:
    the attribution points at tokens the model does use."""
    if attribution.level != "token":
        raise ValueError("faithfulness needs a token-level attribution (not .words())")
    started = time.perf_counter()
    inp = _inputs(translator, translation)
    T, S = attribution.source.shape
    if (S, T) != (inp.src.shape[1], inp.tgt_in.shape[1]):
        raise ValueError("this attribution is of another translation (its shape differs)")
    eligible = _eligible(inp.source_tokens)
    if not len(eligible):
        raise ValueError("the source has no token but special ones: nothing to remove")
    with _eval_mode(inp.model):
        full = _all_logprobs(inp.model, inp.src, inp.tgt_in, inp.targets).cpu().numpy()[0]  # (T,)
    scores = attribution.source[:, eligible]  # (T, n)
    order = np.argsort(-scores, axis=1, kind="stable")  # ties: the earlier token first
    ranked = eligible[order]  # (T, n)
    rng = np.random.default_rng(seed)
    random_ranked = np.stack([rng.permutation(eligible) for _ in range(T)])
    comp, suff = _perturbation_drops(inp, eligible, ranked, fractions, full)
    r_comp, r_suff = _perturbation_drops(inp, eligible, random_ranked, fractions, full)
    return Faithfulness(attribution.method, tuple(fractions), comp.mean(1), suff.mean(1), r_comp.mean(1),
                        r_suff.mean(1), float(full.sum()), seed, time.perf_counter() - started,
                        {"comprehensiveness": comp, "sufficiency": suff, "random_comprehensiveness": r_comp,
                         "random_sufficiency": r_suff})


deletion_aopc = faithfulness  # the name issue 31 uses


__all__ = ["Attribution", "Faithfulness", "METHODS", "DISTRIBUTIONS", "FRACTIONS", "attribute", "saliency",
           "input_x_gradient", "integrated_gradients", "leave_one_out", "attention_rollout", "attention", "alti",
           "value_zeroing", "faithfulness", "deletion_aopc"]
