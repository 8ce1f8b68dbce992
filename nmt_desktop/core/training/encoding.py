"""Text pairs to model sequences: training the vocabularies and encoding the kept pairs.

`encode_pairs` turns text pairs into id sequences: source tokens (+ </s> when `cfg.src_add_eos`) and
the decoder sequence [decoder_start] + tokens + [</s>], dropping (and counting) pairs over
`max_tokens` per side or beyond `cfg.max_positions`.
"""

from __future__ import annotations

import array
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.tokenizer import TokenizerPair
from nmt_desktop.core.training.corpus import Corpus
from nmt_desktop.core.training.corpus_formats import CorpusError, Pair

_ENCODE_CHUNK = 10_000  # pairs tokenised per encode_batch call


def train_tokenizers(pairs: Corpus | Sequence[Pair], vocab_size: int = 8000, joint: bool = True,
                     min_frequency: int = 2) -> TokenizerPair:
    """Train the vocabularies on a corpus's sides (one joint vocabulary, or one per side)."""
    rows = pairs.pairs if isinstance(pairs, Corpus) else pairs
    return TokenizerPair.train((s for s, _ in rows), (t for _, t in rows), vocab_size=vocab_size,
                               joint=joint, min_frequency=min_frequency)


@dataclass
class EncodedCorpus:
    """Id sequences of the kept pairs, concatenated into flat int32 tensors (compact for millions).

    Pair i's source is `src_ids[src_offsets[i]:src_offsets[i + 1]]` (tokens + </s> if
    src_add_eos); its target is the decoder sequence [decoder_start] + tokens + [</s>].
    """

    src_ids: Tensor  # (total source tokens,) int32
    src_offsets: Tensor  # (N + 1,) int64
    tgt_ids: Tensor  # (total target tokens,) int32
    tgt_offsets: Tensor  # (N + 1,) int64
    pair_index: Tensor  # (N,) int64: index of each kept pair in the pairs given to encode_pairs
    pad_id: int
    dropped_long: int = 0  # over max_tokens on a side, or beyond max_positions
    dropped_empty: int = 0  # a side with no tokens

    def __len__(self) -> int:
        return len(self.pair_index)

    @property
    def src_lengths(self) -> Tensor:
        """(N,) source sequence lengths (the width each needs in `Batch.src`)."""
        return self.src_offsets[1:] - self.src_offsets[:-1]

    @property
    def tgt_lengths(self) -> Tensor:
        """(N,) decoder steps: the width each needs in `Batch.tgt_in` / `tgt_out` (tokens + 1)."""
        return self.tgt_offsets[1:] - self.tgt_offsets[:-1] - 1

    def source(self, i: int) -> list[int]:
        return self.src_ids[self.src_offsets[i]:self.src_offsets[i + 1]].tolist()

    def target(self, i: int) -> list[int]:
        """The full decoder sequence [decoder_start] + tokens + [</s>]."""
        return self.tgt_ids[self.tgt_offsets[i]:self.tgt_offsets[i + 1]].tolist()


def encode_pairs(pairs: Corpus | Sequence[Pair], tokenizers: TokenizerPair, cfg: ModelConfig,
                 max_tokens: int | None = None) -> EncodedCorpus:
    """Tokenise pairs into model sequences, dropping pairs that are empty or too long.

    A pair is too long when a side has more than `max_tokens` subword tokens (special tokens not
    counted; None: no limit) or its source or decoder sequence exceeds `cfg.max_positions`.
    Raises CorpusError if pairs were given but none is kept.
    """
    rows = pairs.pairs if isinstance(pairs, Corpus) else pairs
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    src_ids, tgt_ids = array.array("i"), array.array("i")
    src_off, tgt_off, kept = array.array("q", [0]), array.array("q", [0]), array.array("q")
    dropped_long = dropped_empty = 0
    for start in range(0, len(rows), _ENCODE_CHUNK):
        chunk = rows[start:start + _ENCODE_CHUNK]
        src_tok = tokenizers.source.encode_batch([s for s, _ in chunk])
        tgt_tok = tokenizers.target.encode_batch([t for _, t in chunk])
        for j, (a, b) in enumerate(zip(src_tok, tgt_tok)):
            src = a + [cfg.eos_id] if cfg.src_add_eos else a
            tgt = [cfg.decoder_start_id, *b, cfg.eos_id]
            if not a or not b:
                dropped_empty += 1
            elif _too_long(len(a), len(b), len(src), len(tgt) - 1, max_tokens, cfg.max_positions):
                dropped_long += 1
            else:
                src_ids.extend(src)
                tgt_ids.extend(tgt)
                src_off.append(len(src_ids))
                tgt_off.append(len(tgt_ids))
                kept.append(start + j)
    if rows and not kept:
        raise CorpusError(f"no usable sentence pairs after tokenisation ({dropped_long} of {len(rows)} longer than "
                          f"{max_tokens or cfg.max_positions} tokens, {dropped_empty} empty).")
    return EncodedCorpus(_tensor(src_ids, torch.int32), _tensor(src_off, torch.int64), _tensor(tgt_ids, torch.int32),
                         _tensor(tgt_off, torch.int64), _tensor(kept, torch.int64), cfg.pad_id,
                         dropped_long, dropped_empty)


def _too_long(n_src_tokens: int, n_tgt_tokens: int, src_len: int, tgt_steps: int, max_tokens: int | None,
              max_positions: int) -> bool:
    over_budget = max_tokens is not None and max(n_src_tokens, n_tgt_tokens) > max_tokens
    return over_budget or src_len > max_positions or tgt_steps > max_positions


def _tensor(values: array.array, dtype: torch.dtype) -> Tensor:
    if not values:
        return torch.zeros(0, dtype=dtype)
    return torch.frombuffer(bytearray(values.tobytes()), dtype=dtype)
