"""User-facing decoding: text in, streamed `Step`s and a `Translation` out.

`Translator` pairs a model with its tokenizers. `stream(text)` yields one `Step` per target token
(token, readable piece, log-prob, top-k alternatives, cross-attention `[layers, heads, source_len]`);
`translate(text)` returns the finished `Translation` with attention `[layers, heads, target_len,
source_len]` and an n-best list where each hypothesis carries its own attention. A whole text
(lines, each sentence a unit: document.py) is `translate_batch(lines)` or, streamed,
`stream_document(text)`, which yields `(unit index, Step)`.

Multilingual models (OPUS-MT's en-ROMANCE, en-mul, ...) pick the target language by a `>>fra<<`
token at the start of the source: `target_languages` lists the model's, and `target_language`
(the chosen one) is put first in the source ids of every input that does not start with one.

Analysis hooks (all plain arguments): `prefix` / `prefix_text` force the first target tokens
(see search.py), `head_mask` zeroes cross-attention heads and `head_override` replaces them by
fixed means (see analysis.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.document import DocumentStream, check_length, line_units
from nmt_desktop.core.formats.marian import is_language_token, split_language_code
from nmt_desktop.core.decoding.search import (BatchStep, BeamState, Hyp, beam_search, capture_return as _capture_return,
                                              collect_greedy, greedy_or_sample)
from nmt_desktop.core.tokenizer import Tokenizer, TokenizerPair
from nmt_desktop.core.model.transformer import HeadOverride, Transformer
from nmt_desktop.core.decoding.backend import StepBackend
from nmt_desktop.core.decoding.backend_choice import backend_for_search, choose_backend
from nmt_desktop.core.decoding.scoring import score_batch


class TargetLanguageError(ValueError):
    """A target language the model does not have (or a model that has none to choose)."""


def language_tokens(tokenizer: Tokenizer) -> list[str]:
    """The `>>code<<` tokens of a vocabulary in id order: a multilingual model's target languages."""
    vocab = tokenizer.hf.get_vocab(with_added_tokens=True)
    return [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if is_language_token(t)]


def language_code(token: str) -> str:
    """`>>fra<<` -> `fra`: the code a user types to choose a target language."""
    return token[2:-2] if is_language_token(token) else token


def list_codes(tokens: Sequence[str], limit: int = 8) -> str:
    """A few codes of `tokens` for a message: "fra, spa, por" or "fra, spa, ... (300 in all)"."""
    codes = [language_code(t) for t in tokens]
    return ", ".join(codes) if len(codes) <= limit else f"{', '.join(codes[:limit])}, ... ({len(codes)} in all)"


@dataclass
class Alternative:
    token_id: int
    piece: str
    prob: float


@dataclass
class Step:
    """One generated target token, as soon as it is chosen."""

    index: int  # 0-based target position
    token_id: int
    piece: str  # readable display text of the token
    logprob: float
    alternatives: list[Alternative]  # the step's top-k tokens, most probable first
    cross_attention: np.ndarray | None  # (layers, heads, source_len) float32
    self_attention: np.ndarray | None = None  # (layers, heads, index + 1) float32, on request
    prefix_ids: list[int] | None = None  # beam search: the current best hypothesis, ending in this token
    is_eos: bool = False
    forced: bool = False  # a token of the forced prefix (fed, not chosen)


@dataclass
class Hypothesis:
    text: str
    token_ids: list[int]
    tokens: list[str]  # readable pieces, "</s>" included when the hypothesis ended normally
    score: float  # length-normalised log-probability
    token_logprobs: list[float]
    alternatives: list[list[Alternative]]  # per target position
    attention: np.ndarray | None  # (layers, heads, target_len, source_len)
    self_attention: np.ndarray | None = None  # (layers, heads, target_len, target_len)
    finished: bool = True  # False when cut off at the maximum length
    forced: bool = False  # a given translation scored by teacher forcing (scoring.py), not the model's choice

    @property
    def logprob(self) -> float:
        """The sentence log-probability: the sum of the token log-probabilities (</s> included)."""
        return float(sum(self.token_logprobs))

    @property
    def perplexity(self) -> float:
        """exp(-logprob / tokens): 1 when every token was certain."""
        n = len(self.token_logprobs)
        return float(np.exp(-self.logprob / n)) if n else float("nan")

    def steps(self, eos_id: int | None = None) -> list[Step]:
        """This hypothesis as the `Step`s of a stream (for beam search: the final hypothesis, where the
        streamed steps followed the best one of each moment). eos_id: else "</s>" marks the end."""
        out = []
        for t, (token_id, piece) in enumerate(zip(self.token_ids, self.tokens)):
            cross = None if self.attention is None or t >= self.attention.shape[2] else self.attention[:, :, t]
            out.append(Step(t, int(token_id), piece, self.token_logprobs[t] if t < len(self.token_logprobs) else 0.0,
                            self.alternatives[t] if t < len(self.alternatives) else [], cross,
                            is_eos=int(token_id) == eos_id if eos_id is not None else piece == "</s>"))
        return out

    def to_json(self, attention: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"translation": self.text, "score": round(self.score, 6), "tokens": self.tokens,
                               "token_logprobs": [round(float(x), 6) for x in self.token_logprobs]}
        if attention:
            out["attention"] = None if self.attention is None else np.round(self.attention.astype(np.float64), 5).tolist()
        return out


@dataclass
class Translation:
    source: str
    source_ids: list[int]
    source_tokens: list[str]
    nbest: list[Hypothesis]  # best first
    encoder_attention: np.ndarray | None = None  # (layers, heads, source_len, source_len)
    segments: list["Translation"] = field(default_factory=list)  # set when a long input was split

    @property
    def best(self) -> Hypothesis:
        return self.nbest[0]

    @property
    def text(self) -> str:
        return self.best.text

    @property
    def target_tokens(self) -> list[str]:
        return self.best.tokens

    @property
    def target_ids(self) -> list[int]:
        return self.best.token_ids

    @property
    def score(self) -> float:
        return self.best.score

    @property
    def attention(self) -> np.ndarray | None:
        return self.best.attention

    def to_json(self, attention: bool = True) -> dict[str, Any]:
        """The CLI's `--json` object. Each array appears once: the top level holds the best hypothesis'
        scalar and token shortcuts, its attention ([layers][heads][target][source]) is only in `nbest[0]`."""
        out: dict[str, Any] = {
            "source": self.source,
            "translation": self.text,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "score": round(self.score, 6),
            "nbest": [h.to_json(attention) for h in self.nbest],
        }
        if self.segments:
            out["segments"] = [s.to_json(attention) for s in self.segments]
        return out


class Translator:
    """A model and its tokenizers, ready to decode."""

    def __init__(self, model: Transformer, tokenizers: TokenizerPair, name: str = "", int8: bool = False,
                 target_language: str | None = None, backend: str | None = "auto"):
        """int8: decode with an int8 copy of the model's linear layers (CPU only; see core/decoding/int8.py).
        target_language: as the `target_language` property (multilingual models only).
        backend: where decoding runs, "auto", "reference", "python" or "compiled" (backend_choice.py)."""
        if int8:
            from nmt_desktop.core.decoding.int8 import quantize_int8

            model = quantize_int8(model)
        self.model = model.eval()
        self.tokenizers = tokenizers
        self.config = model.config
        self.name = name
        self.int8 = int8
        self.device = next(model.parameters()).device
        # chosen once; it prepares its weights at the first search and keeps them (a snapshot: after
        # changing the model's weights, make a new Translator, as the trainer does per evaluation)
        self.backend: StepBackend = choose_backend(self.model, backend)
        self._languages: list[str] | None = None  # >>code<< tokens of the source vocabulary, read when first needed
        self._target_language: str | None = None
        self.target_language = target_language
        self.card: dict[str, Any] = {}  # the model folder's card.json (load() sets it): e.g. its alignment reading

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu", int8: bool = False,
             target_language: str | None = None, backend: str | None = "auto") -> "Translator":
        """Load a model folder or zip (see model_dir) and wrap it; int8, target_language, backend as in
        `__init__`."""
        from nmt_desktop.core.formats.model_dir import load_model

        loaded = load_model(path, device=device)
        translator = cls(loaded.model, loaded.tokenizers, loaded.name, int8=int8, target_language=target_language,
                         backend=backend)
        translator.card = dict(loaded.card)
        return translator

    # --- target language (multilingual models) ----------------------------------------------

    @property
    def target_languages(self) -> list[str]:
        """The model's `>>code<<` target-language tokens, in id order; empty for an ordinary model."""
        return list(self._codes())

    def _codes(self) -> list[str]:
        if self._languages is None:
            self._languages = language_tokens(self.tokenizers.source)
        return self._languages

    @property
    def target_language(self) -> str | None:
        """The chosen `>>code<<` token, put first in every source that does not start with one; None: none."""
        return self._target_language

    @target_language.setter
    def target_language(self, code: str | None) -> None:
        self._target_language = self.language_token(code) if code else None

    def language_token(self, code: str) -> str:
        """The model's token for `code` (`fra` or `>>fra<<`); TargetLanguageError if it has none."""
        languages = self._codes()
        if not languages:
            raise TargetLanguageError(f"this model is not multilingual (it has no target-language tokens "
                                      f"such as >>fra<<), so target language {code!r} cannot be chosen")
        token = code.strip()
        token = token if is_language_token(token) else f">>{token}<<"
        if token not in languages:
            raise TargetLanguageError(f"unknown target language {code!r} (this model's target languages: "
                                      f"{list_codes(languages)})")
        return token

    # --- tokens -----------------------------------------------------------------------------

    def source_ids(self, text: str) -> list[int]:
        """Source token ids of `text` (with </s> if the model adds it); multilingual: led by a >>code<<."""
        ids = self._encode_source(text)
        return ids + [self.config.eos_id] if self.config.src_add_eos else ids

    def _encode_source(self, text: str) -> list[int]:
        if not self._codes():
            return self.tokenizers.source.encode(text)
        # as MarianTokenizer: a leading >>...<< is one token (<unk> if unknown), the rest is segmented
        code, rest = split_language_code(text)
        code = code or self._target_language
        if code is None:
            return self.tokenizers.source.encode(text)
        token_id = self.tokenizers.source.token_to_id(code)
        return [self.config.unk_id if token_id is None else token_id] + self.tokenizers.source.encode(rest)

    def source_pieces(self, ids: Sequence[int]) -> list[str]:
        return self.tokenizers.source.pieces(ids)

    def target_pieces(self, ids: Sequence[int]) -> list[str]:
        return self.tokenizers.target.pieces(ids)

    def target_prefix_ids(self, prefix_text: str) -> list[int]:
        """Target-side ids of a text to force as the start of the translation (no </s>)."""
        return self.tokenizers.target.encode(prefix_text)

    def _prefix(self, prefix: Sequence[int] | None, prefix_text: str | None) -> list[int] | None:
        if prefix is not None and prefix_text is not None:
            raise ValueError("give a forced prefix as ids or as text, not both")
        if prefix_text is not None:
            return self.target_prefix_ids(prefix_text)
        return None if prefix is None else list(prefix)

    def _check_length(self, ids: list[int], text: str) -> None:
        check_length(ids, text, self.config.max_positions)

    def _batch(self, ids_list: Sequence[list[int]]) -> torch.Tensor:
        """Right-pad token id lists into (B, S)."""
        width = max(len(ids) for ids in ids_list)
        batch = torch.full((len(ids_list), width), self.config.pad_id, dtype=torch.long)
        for i, ids in enumerate(ids_list):
            batch[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        return batch.to(self.device)

    # --- scoring a given translation (scoring.py) ---------------------------------------------

    def score(self, source: str, target: str | Sequence[int], cfg: DecodeConfig | None = None) -> Translation:
        """How the model reads a given translation of `source` (text or target ids): a Translation whose
        one hypothesis is that target, with log-probs, alternatives and attention (teacher forcing)."""
        return self.score_batch([(source, target)], cfg)[0]

    def score_batch(self, pairs: Sequence[tuple[str, str | Sequence[int]]], cfg: DecodeConfig | None = None,
                    batch_size: int = 16) -> list[Translation]:
        """`score` of many (source, target) pairs in length-sorted batches; results in input order."""
        return score_batch(self, pairs, cfg, batch_size)

    # --- streaming --------------------------------------------------------------------------

    def stream(self, text: str, cfg: DecodeConfig | None = None, head_mask: torch.Tensor | None = None,
               prefix: Sequence[int] | None = None, prefix_text: str | None = None,
               head_override: HeadOverride | None = None) -> "TranslationStream":
        """Decode one sentence step by step; iterate for `Step`s, then read `.result`.

        prefix (target ids) or prefix_text (target text): forced start, reported as ordinary steps.
        """
        cfg = cfg or DecodeConfig()
        ids = self.source_ids(text)
        self._check_length(ids, text)
        return TranslationStream(self, text, ids, cfg, head_mask, self._prefix(prefix, prefix_text), head_override)

    def translate(self, text: str, cfg: DecodeConfig | None = None, head_mask: torch.Tensor | None = None,
                  prefix: Sequence[int] | None = None, prefix_text: str | None = None,
                  head_override: HeadOverride | None = None) -> Translation:
        """Translate one input; an input of several sentences is translated sentence by sentence (document.py).

        prefix (target ids) or prefix_text (target text): forced start of the translation.
        """
        cfg = cfg or DecodeConfig()
        return self.translate_batch([text], cfg, head_mask=head_mask, prefix=prefix, prefix_text=prefix_text,
                                    head_override=head_override)[0]

    def translate_batch(self, texts: Sequence[str], cfg: DecodeConfig | None = None, batch_size: int = 16,
                        head_mask: torch.Tensor | None = None, prefix: Sequence[int] | None = None,
                        prefix_text: str | None = None, head_override: HeadOverride | None = None,
                        whole_lines: bool = False) -> list[Translation]:
        """Translate many inputs in length-sorted batches; results come back in input order.

        Empty (or whitespace-only) inputs give empty translations; an input of several sentences is
        split into them, each translated, and joined (`Translation.segments`; document.py's policy).
        `whole_lines`: an input that fits the model is translated whole, as peers do (parity and speed
        against transformers and CTranslate2). A forced prefix applies to every input (to each segment
        of a split input).
        """
        cfg = cfg or DecodeConfig()
        forced = self._prefix(prefix, prefix_text)
        batch_size = max(1, batch_size)
        if head_mask is not None and head_mask.dim() == 3 and head_mask.shape[0] != len(texts):
            raise ValueError(f"a per-input head mask needs one (layers, heads) mask per input: got "
                             f"{head_mask.shape[0]} for {len(texts)} inputs")
        units: list[tuple[int, str, list[int]]] = []  # (input index, text, source ids)
        for i, text in enumerate(texts):
            for part in self._segments(text, whole_lines):
                units.append((i, part, self.source_ids(part)))
        done: dict[int, Translation] = {}
        order = sorted(range(len(units)), key=lambda u: len(units[u][2]))
        for start in range(0, len(order), batch_size):
            picked = order[start: start + batch_size]
            chunk = [units[u] for u in picked]
            hm = head_mask
            if hm is not None and hm.dim() == 3:  # rows follow the inputs, not the length-sorted batch
                hm = hm.index_select(0, torch.tensor([units[u][0] for u in picked], device=hm.device))
            for u, tr in zip(picked, self._decode_batch(chunk, cfg, hm, forced, head_override)):
                done[u] = tr
        results: list[Translation] = []
        for i, text in enumerate(texts):
            parts = [done[u] for u in range(len(units)) if units[u][0] == i]
            results.append(self._join(text, parts))
        return results

    def stream_document(self, text: str, cfg: DecodeConfig | None = None, head_mask: torch.Tensor | None = None,
                        prefix: Sequence[int] | None = None, prefix_text: str | None = None,
                        head_override: HeadOverride | None = None) -> DocumentStream:
        """Decode a whole text unit by unit (document.py: each sentence of each line); iterate for
        `(unit index, Step)`. Raises InputTooLongError before decoding anything."""
        return DocumentStream(self, text, cfg or DecodeConfig(), head_mask, prefix, prefix_text, head_override)

    def _segments(self, text: str, whole: bool = False) -> list[str]:
        """The units of one input line (document.py's policy): its sentences (`whole`: itself if it fits)."""
        return [part for part, _ in line_units(text, self.source_ids, self.config.max_positions, whole)]

    def _join(self, text: str, parts: list[Translation]) -> Translation:
        if len(parts) == 1:
            return parts[0]
        if not parts:
            empty = Hypothesis("", [], [], 0.0, [], [], None)
            return Translation(text, [], [], [empty])
        joined = Hypothesis(" ".join(p.text for p in parts), [], [], sum(p.score for p in parts), [], [], None)
        return Translation(text, [], [], [joined], segments=parts)

    def _decode_batch(self, units: list[tuple[int, str, list[int]]], cfg: DecodeConfig,
                      head_mask: torch.Tensor | None, prefix: list[int] | None = None,
                      head_override: HeadOverride | None = None) -> list[Translation]:
        src = self._batch([ids for _, _, ids in units])
        if cfg.beam_size > 1:
            state = BeamState()
            for _ in beam_search(self.model, src, cfg, state, prefix, self._search_backend(head_mask, head_override)):
                pass
            hyps_per_row, enc_attn = state.results, state.encoder_attention
        else:
            steps = greedy_or_sample(self.model, src, cfg, prefix, self._search_backend(head_mask, head_override))
            enc_holder: list = []
            hyps = collect_greedy(_capture_return(steps, enc_holder), len(units), cfg, self.config.eos_id)
            hyps_per_row, enc_attn = [[h] for h in hyps], (enc_holder[0] if enc_holder else None)
        out = []
        for b, (_, text, ids) in enumerate(units):
            enc = None if enc_attn is None else enc_attn[b, :, :, : len(ids), : len(ids)]
            out.append(self._translation(text, ids, hyps_per_row[b], enc))
        return out

    def _translation(self, text: str, ids: list[int], hyps: list[Hyp], enc_attn: np.ndarray | None) -> Translation:
        S = len(ids)
        nbest = [self._hypothesis(h, S) for h in hyps]
        return Translation(text, ids, self.source_pieces(ids), nbest, enc_attn)

    def _hypothesis(self, h: Hyp, source_len: int) -> Hypothesis:
        alts = [self._alternatives(i, lp) for i, lp in zip(h.alt_ids, h.alt_logprobs)]
        attn = None if h.cross_attention is None else h.cross_attention[..., :source_len]
        return Hypothesis(self.tokenizers.target.decode(h.token_ids), list(h.token_ids),
                          self.target_pieces(h.token_ids), h.score, list(h.token_logprobs), alts,
                          attn, h.self_attention, h.finished)

    def _alternatives(self, ids: np.ndarray, logprobs: np.ndarray) -> list[Alternative]:
        pieces = self.target_pieces([int(i) for i in ids])
        return [Alternative(int(i), p, float(np.exp(lp))) for i, p, lp in zip(ids, pieces, logprobs)
                if np.isfinite(lp)]

    def _search_backend(self, head_mask: torch.Tensor | None, head_override: HeadOverride | None) -> StepBackend:
        """The translator's backend, or the reference one with these interventions (the only one that has them)."""
        return backend_for_search(self.model, self.backend, head_mask, head_override)

    def step_from_batch(self, bs: BatchStep, j: int, source_len: int) -> Step:
        """The user-facing `Step` for entry j of a search's `BatchStep`."""
        token = bs.token_ids[j]
        # fresh arrays the Step owns: it may cross to another thread while the search goes on
        cross = None if bs.cross_attention is None else bs.cross_attention[j, :, :, :source_len].copy()
        return Step(bs.index, token, self.target_pieces([token])[0], bs.logprobs[j],
                    self._alternatives(bs.alt_ids[j], bs.alt_logprobs[j]), cross,
                    None if bs.self_attention is None else bs.self_attention[j].copy(),
                    None if bs.prefixes is None else bs.prefixes[j], token == self.config.eos_id)


class TranslationStream:
    """Iterate to receive `Step`s as tokens are chosen; `.result` holds the `Translation` after.

    Stopping early (break, or `close()`) is safe: the search's state is simply dropped.
    """

    def __init__(self, translator: Translator, text: str, ids: list[int], cfg: DecodeConfig,
                 head_mask: torch.Tensor | None, prefix: list[int] | None = None,
                 head_override: HeadOverride | None = None):
        self.translator, self.text, self.ids, self.cfg, self.head_mask = translator, text, ids, cfg, head_mask
        self.prefix, self.head_override = prefix, head_override
        self.result: Translation | None = None
        self.beam_state: BeamState | None = None  # beam search only: the search state with its tree
        self._closed = False

    def close(self) -> None:
        self._closed = True

    def __iter__(self) -> Iterator[Step]:
        tr, cfg = self.translator, self.cfg
        if not self.text.strip():  # like translate(): an empty input has an empty translation
            self.result = tr._join(self.text, [])
            return
        src = tr._batch([self.ids])
        backend = tr._search_backend(self.head_mask, self.head_override)
        if cfg.beam_size > 1:
            state = self.beam_state = BeamState()
            search = beam_search(tr.model, src, cfg, state, self.prefix, backend)
        else:
            search = greedy_or_sample(tr.model, src, cfg, self.prefix, backend)
        records: list[BatchStep] = []
        enc_holder: list = []
        for bs in _capture_return(search, enc_holder):
            if self._closed:
                return
            records.append(bs)
            if bs.rows:
                step = tr.step_from_batch(bs, 0, len(self.ids))
                step.forced = bs.index < len(self.prefix or ())
                yield step
        if self._closed:
            return
        if cfg.beam_size > 1:
            hyps, enc = state.results[0], state.encoder_attention
        else:
            hyps = collect_greedy(iter(records), 1, cfg, tr.config.eos_id)
            enc = enc_holder[0] if enc_holder else None
        enc = None if enc is None else enc[0]
        self.result = tr._translation(self.text, self.ids, hyps, enc)

