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

from pathlib import Path
from typing import Any, Iterator, Sequence

import torch

from nmt_desktop.core.adaptation.settings import Adaptation
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends.step_backend import StepBackend
from nmt_desktop.core.decoding.backends.choice import backend_for_search, choose_backend
from nmt_desktop.core.adaptation.kept_states import KeptStates, model_fingerprint
from nmt_desktop.core.adaptation.memory_use import MemorySource
from nmt_desktop.core.adaptation.mixture import KnnMixture
from nmt_desktop.core.decoding.document import check_length, document_lines, line_units
from nmt_desktop.core.decoding.memory_states import MemoryKeys, decoded_states, memory_mixture, segment_row
from nmt_desktop.core.decoding.naming import name_step, translation_of
from nmt_desktop.core.decoding.pipeline import Search, length_sorted
from nmt_desktop.core.decoding.results import Alternative, Hypothesis, Step, Translation, Unit
from nmt_desktop.core.decoding.search import BeamState
from nmt_desktop.core.decoding.scoring import target_ids
from nmt_desktop.core.formats.marian import is_language_token, split_language_code
from nmt_desktop.core.model.transformer import HeadOverride, Transformer
from nmt_desktop.core.tokenizer import Tokenizer, TokenizerPair

__all__ = ["Alternative", "Hypothesis", "Step", "TargetLanguageError", "Translation", "TranslationStream",
           "Translator", "Unit", "language_code", "language_tokens", "list_codes"]


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


class Translator:
    """A model and its tokenizers, ready to decode."""

    def __init__(self, model: Transformer, tokenizers: TokenizerPair, name: str = "", int8: bool = False,
                 target_language: str | None = None, backend: str | None = "auto"):
        """int8: decode with an int8 copy of the model's linear layers (CPU only; see core/decoding/int8.py).
        target_language: as the `target_language` property (multilingual models only).
        backend: where decoding runs, "auto", "reference", "python" or "compiled" (backends/choice.py)."""
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
        # the terms the app forces into this model's translations (core/documents/glossary.Glossary; the GUI
        # sets the model's own glossary; None: none). Held, not used, here: decoding stays glossary-free.
        self.glossary: Any = None
        self.path: Path | None = None  # the model folder or zip it was loaded from (load() sets it)
        # instant adaptation from a translation memory (core/adaptation): every search mixes in the nearest
        # neighbours of its sentence's memory matches while `adaptation.enabled`; None: the plain model
        self.adaptation: Adaptation | None = None
        self._memory_keys = MemoryKeys()  # the memory segments' forced states, decoded once (memory_states.py)
        self._fingerprint: str | None = None  # of the model as loaded: names the states kept beside a memory
        self._weights_changed = False  # online learning changed them: nothing more kept beside the memory

    @classmethod
    def load(cls, model: str | Path, device: str = "cpu", int8: bool = False,
             target_language: str | None = None, backend: str | None = "auto") -> "Translator":
        """The one way to load a model, for the CLI, the GUI and the second model of an analysis: `model` is a
        model folder or zip (model_folder.py), an installed or bundled model's name, or a training run's folder
        (its best model; locations.resolve_model_path). int8, target_language, backend as in `__init__`.
        Raises ModelNotFoundError / ModelFolderError, one sentence each."""
        from nmt_desktop.core.formats.model_folder import load_model
        from nmt_desktop.core.locations import resolve_model_path

        loaded = load_model(resolve_model_path(str(model)), device=device)
        translator = cls(loaded.model, loaded.tokenizers, loaded.name, int8=int8, target_language=target_language,
                         backend=backend)
        translator.card = dict(loaded.card)
        translator.path = Path(loaded.path)
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

    def forced_prefix(self, prefix: Sequence[int] | None, prefix_text: str | None) -> list[int] | None:
        """A forced start of the translation, given as target ids or as text (not both)."""
        if prefix is not None and prefix_text is not None:
            raise ValueError("give a forced prefix as ids or as text, not both")
        if prefix_text is not None:
            return self.target_prefix_ids(prefix_text)
        return None if prefix is None else list(prefix)

    def units(self, lines: Sequence[str], whole: bool = False) -> list[Unit]:
        """The units the model translates for these lines (document.py's policy), each tokenized once;
        `Unit.line` is the index in `lines`. InputTooLongError before anything is decoded."""
        limit = self.config.max_positions
        return [Unit(n, part, ids, self.source_pieces(ids)) for n, line in enumerate(lines)
                for part, ids in line_units(line, self.source_ids, limit, whole)]

    def unit(self, text: str) -> Unit:
        """`text` as one unit, whatever its sentences (InputTooLongError when it does not fit the model)."""
        ids = self.source_ids(text)
        check_length(ids, text, self.config.max_positions)
        return Unit(0, text, ids, self.source_pieces(ids))

    def batch_ids(self, ids_list: Sequence[Sequence[int]]) -> torch.Tensor:
        """Right-pad token id lists into (B, S) on the model's device."""
        width = max(len(ids) for ids in ids_list)
        batch = torch.full((len(ids_list), width), self.config.pad_id, dtype=torch.long)
        for i, ids in enumerate(ids_list):
            batch[i, : len(ids)] = torch.tensor(list(ids), dtype=torch.long)
        return batch.to(self.device)

    def search_backend(self, head_mask: torch.Tensor | None = None,
                       head_override: HeadOverride | None = None) -> StepBackend:
        """The translator's backend, or the reference one with these interventions (the only one that has them)."""
        return backend_for_search(self.model, self.backend, head_mask, head_override)

    def memory_mixture(self, texts: Sequence[str], backend: StepBackend
                       ) -> tuple[KnnMixture | None, list[list[MemorySource]]]:
        """The memory's kNN mixture for one search over `texts` and each text's matches that built it
        (memory_states.py); (None, no matches) without `adaptation` or when it finds nothing."""
        self._keep_states()
        return memory_mixture(self.model, self.adaptation, texts, self.source_ids, self._target_ids, self.batch_ids,
                              self._memory_keys)

    def _keep_states(self) -> None:
        """Point the memory segments' states cache at what is kept beside the adaptation's memory file for this
        model (kept_states.py); none for a memory without a file, or once the weights changed in place."""
        path = getattr(self.adaptation.memory, "path", None) if self.adaptation is not None else None
        kept = self._memory_keys.kept
        if path is None or self._weights_changed:
            self._memory_keys.kept = None
        elif kept is None or kept.memory_path != Path(path):
            if self._fingerprint is None:
                self._fingerprint = model_fingerprint(self.model, self.int8)
            self._memory_keys.kept = KeptStates(path, self._fingerprint)

    def _target_ids(self, text: str) -> list[int]:
        """A memory segment's target as ids (no </s>); InputTooLongError when it cannot fit."""
        return target_ids(self.tokenizers.target, self.config, text)

    def remember(self, segments: Sequence[MemorySource]) -> None:
        """Force-decode memory segments now (a segment just confirmed), so that the next sentence matching them
        finds their states ready and its own decoding pays only the lookup and the mixture."""
        rows = [r for r in (segment_row(self.model, 0, s, self.source_ids, self._target_ids) for s in segments)
                if r is not None]
        if rows:
            self._keep_states()
            decoded_states(self.model, rows, self.batch_ids, self._memory_keys)

    def used_segments(self) -> list[MemorySource]:
        """The memory segments this translator holds decoded states of (matched or remembered lately, at most
        `MemoryKeys.size`), as sources of weight 1: what `remember` decodes again under new weights."""
        return [MemorySource(entry_id, source, target, 1.0) for entry_id, source, target in self._memory_keys.segments()]

    def weights_changed(self) -> None:
        """The model's weights were changed in place (online learning, core/adaptation/online_learning.py): the
        backend prepares them anew at the next search. The memory's decoded states are kept, each from the
        weights it was confirmed under (as good as fresh ones at a fraction of the decode time: RESULTS), but an
        exact match's are decoded anew (MemoryKeys.generation: a repeat must meet its own states); from now on
        none is read from or written beside the memory file (they are the loaded model's)."""
        self._weights_changed = True
        self._memory_keys.kept = None
        self._memory_keys.generation += 1
        self.backend = type(self.backend)(self.model)

    def weights_replaced(self) -> None:
        """The model's weights were replaced as a whole (a learned update read from its file, or saved at the end
        of a learning run) and stay so: the backend prepares them anew, the memory's states decoded under the old
        weights are dropped, and the states kept beside the memory are those of the new weights (their own
        fingerprint), read and written again."""
        self._weights_changed = False
        self._fingerprint = None
        self._memory_keys = MemoryKeys()
        self.backend = type(self.backend)(self.model)

    # --- scoring a given translation (scoring.py) ---------------------------------------------

    def score(self, source: str, target: str | Sequence[int], cfg: DecodeConfig | None = None) -> Translation:
        """How the model reads a given translation of `source` (text or target ids): a Translation whose
        one hypothesis is that target, with log-probs, alternatives and attention (teacher forcing)."""
        return self.score_batch([(source, target)], cfg)[0]

    def score_batch(self, pairs: Sequence[tuple[str, str | Sequence[int]]], cfg: DecodeConfig | None = None,
                    batch_size: int = 16) -> list[Translation]:
        """`score` of many (source, target) pairs in length-sorted batches; results in input order.

        cfg: `alternatives` (top-k per position), `attention`, `self_attention` and `length_penalty` (for
        `score`, as in a search) apply; the search options do not.
        """
        cfg = cfg or DecodeConfig()
        units, targets = [], []
        for source, target in pairs:  # checked pair by pair: the first bad one is the one reported
            units.append(self.unit(source))
            targets.append(target_ids(self.tokenizers.target, self.config, target))
        done: list[Translation | None] = [None] * len(units)
        for picked in length_sorted([(len(u.source_ids), len(t)) for u, t in zip(units, targets)], batch_size):
            scored = self.translate_units([units[u] for u in picked], cfg, targets=[targets[u] for u in picked])
            for u, translation in zip(picked, scored):
                done[u] = translation
        for translation in done:
            translation.best.forced = True  # type: ignore[union-attr]  (every pair is scored above)
        return done  # type: ignore[return-value]

    # --- streaming --------------------------------------------------------------------------

    def stream(self, text: str, cfg: DecodeConfig | None = None, head_mask: torch.Tensor | None = None,
               prefix: Sequence[int] | None = None, prefix_text: str | None = None,
               head_override: HeadOverride | None = None) -> "TranslationStream":
        """Decode one sentence step by step; iterate for `Step`s, then read `.result`.

        prefix (target ids) or prefix_text (target text): forced start, reported as ordinary steps.
        """
        return self.stream_unit(self.unit(text), cfg, head_mask, prefix, prefix_text, head_override)

    def stream_unit(self, unit: Unit, cfg: DecodeConfig | None = None, head_mask: torch.Tensor | None = None,
                    prefix: Sequence[int] | None = None, prefix_text: str | None = None,
                    head_override: HeadOverride | None = None) -> "TranslationStream":
        """`stream` of a unit already tokenized (`units`)."""
        return TranslationStream(self, unit, cfg or DecodeConfig(), head_mask, self.forced_prefix(prefix, prefix_text),
                                 head_override)

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
        forced = self.forced_prefix(prefix, prefix_text)
        if head_mask is not None and head_mask.dim() == 3 and head_mask.shape[0] != len(texts):
            raise ValueError(f"a per-input head mask needs one (layers, heads) mask per input: got "
                             f"{head_mask.shape[0]} for {len(texts)} inputs")
        units = self.units(texts, whole_lines)
        done: list[Translation | None] = [None] * len(units)
        for picked in length_sorted([len(u.source_ids) for u in units], batch_size):
            hm = head_mask
            if hm is not None and hm.dim() == 3:  # rows follow the inputs, not the length-sorted batch
                hm = hm.index_select(0, torch.tensor([units[u].line for u in picked], device=hm.device))
            for u, translation in zip(picked, self.translate_units([units[u] for u in picked], cfg, hm, forced,
                                                                    head_override)):
                done[u] = translation
        parts: list[list[Translation]] = [[] for _ in texts]
        for unit, result in zip(units, done):
            parts[unit.line].append(result)  # type: ignore[arg-type]  (every unit is decoded above)
        return [Translation.joined(text, p) for text, p in zip(texts, parts)]

    def translate_units(self, units: Sequence[Unit], cfg: DecodeConfig, head_mask: torch.Tensor | None = None,
                        prefix: Sequence[int] | None = None, head_override: HeadOverride | None = None,
                        targets: Sequence[Sequence[int]] | None = None) -> list[Translation]:
        """One batch of units through one search (teacher forcing when `targets` are given), in their order."""
        backend = self.backend if targets is not None else self.search_backend(head_mask, head_override)
        knn, used = self.memory_mixture([u.text for u in units], backend) if targets is None else (None, [])
        search = Search(self.model, self.batch_ids([u.source_ids for u in units]), cfg, backend,
                        prefix=prefix, targets=targets, knn=knn)
        hyps, enc = search.run(), search.encoder_attention
        done = [translation_of(self.tokenizers.target, unit, hyps[b], None if enc is None else enc[b])
                for b, unit in enumerate(units)]
        for translation, matches in zip(done, used):
            translation.memory_matches = matches
        return done

    def stream_document(self, text: str, cfg: DecodeConfig | None = None, head_mask: torch.Tensor | None = None,
                        prefix: Sequence[int] | None = None, prefix_text: str | None = None,
                        head_override: HeadOverride | None = None) -> DocumentStream:
        """Decode a whole text unit by unit (document.py: each sentence of each line); iterate for
        `(unit index, Step)`. Raises InputTooLongError before decoding anything."""
        return DocumentStream(self, text, cfg or DecodeConfig(), head_mask, prefix, prefix_text, head_override)


class TranslationStream:
    """Iterate to receive `Step`s as tokens are chosen; `.result` holds the `Translation` after.

    Beam search streams its best live hypothesis; where that changes, the step carries the new one's own
    earlier steps, named too (`Step.earlier_steps`): keep what to show with `Step.shown_after`.
    Stopping early (break, or `close()`) is safe: the search's state is simply dropped.
    """

    def __init__(self, translator: Translator, unit: Unit, cfg: DecodeConfig, head_mask: torch.Tensor | None,
                 prefix: list[int] | None = None, head_override: HeadOverride | None = None):
        self.translator, self.unit, self.cfg, self.head_mask = translator, unit, cfg, head_mask
        self.prefix, self.head_override = prefix, head_override
        self.result: Translation | None = None
        self.beam_state: BeamState | None = None  # beam search only: the search state with its tree
        self._closed = False

    @property
    def text(self) -> str:
        return self.unit.text

    def close(self) -> None:
        self._closed = True

    def __iter__(self) -> Iterator[Step]:
        tr, unit = self.translator, self.unit
        if not unit.text.strip():  # like translate(): an empty input has an empty translation
            self.result = Translation.joined(unit.text, [])
            return
        backend = tr.search_backend(self.head_mask, self.head_override)
        knn, used = tr.memory_mixture([unit.text], backend)
        search = Search(tr.model, tr.batch_ids([unit.source_ids]), self.cfg, backend, prefix=self.prefix, knn=knn)
        self.beam_state = search.beam_state
        forced = len(self.prefix or ())
        for steps in search:
            if self._closed:
                return
            if steps:
                step = steps[0]
                for each in [*(step.earlier_steps or ()), step]:  # beam search's switch: the new best's own steps
                    name_step(tr.tokenizers.target, each, len(unit.source_ids))
                    each.forced = each.index < forced
                yield step
        if self._closed:
            return
        assert search.hypotheses is not None
        enc = search.encoder_attention
        self.result = translation_of(tr.tokenizers.target, unit, search.hypotheses[0], None if enc is None else enc[0])
        self.result.memory_matches = used[0]


class DocumentStream:
    """A whole text decoded unit by unit: iterate for `(unit index, Step)` pairs as tokens are chosen.

    `units` is known (and every unit checked against the model's length) before decoding starts;
    `results` holds each unit's `Translation` once it is finished, `translations()` the text's lines
    as `translate_batch` gives them. Steps are the core's own plain data, fresh for every step:
    they may be handed to another thread as they are. `close()` (or leaving the loop) stops.
    """

    def __init__(self, translator: Translator, text: str, cfg: DecodeConfig,
                 head_mask: torch.Tensor | None = None, prefix: Sequence[int] | None = None,
                 prefix_text: str | None = None, head_override: HeadOverride | None = None):
        self.translator, self.cfg = translator, cfg
        self.hooks = dict(head_mask=head_mask, prefix=prefix, prefix_text=prefix_text, head_override=head_override)
        self.lines = document_lines(text)
        self.units = translator.units(self.lines)
        self.results: list[Translation | None] = [None] * len(self.units)
        self._stream: TranslationStream | None = None
        self._closed = False

    def close(self) -> None:
        self._closed = True
        if self._stream is not None:
            self._stream.close()

    def __iter__(self) -> Iterator[tuple[int, Step]]:
        for i, unit in enumerate(self.units):
            if self._closed:
                return
            self._stream = self.translator.stream_unit(unit, self.cfg, **self.hooks)
            for step in self._stream:
                if self._closed:
                    return
                yield i, step
            if self._closed or self._stream.result is None:
                return
            self.results[i] = self._stream.result

    @property
    def finished(self) -> bool:
        return all(r is not None for r in self.results)

    def translations(self) -> list[Translation]:
        """One Translation per line (a split line's sentences joined), once every unit is finished."""
        if not self.finished:
            raise RuntimeError("the document is not translated yet")
        parts: list[list[Translation]] = [[] for _ in self.lines]
        for unit, result in zip(self.units, self.results):
            parts[unit.line].append(result)  # type: ignore[arg-type]  (finished: no None left)
        return [Translation.joined(line, p) for line, p in zip(self.lines, parts)]
