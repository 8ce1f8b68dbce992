"""What a word is: the one rule that groups subword pieces into words, used by core, CLI and GUI alike.

Pieces are the tokenizer's display strings (`Tokenizer.pieces`): a space shows as `WORD_START` ("▁"),
in byte-level BPE as in SentencePiece vocabularies. A piece begins a new word when it is

- the first piece, a special token, or the piece after a special token;
- a piece that begins with "▁" or whitespace, or the piece after one that ends with "▁" or whitespace;
- for WordPiece vocabularies (`continuing_prefix`, e.g. "##"): a piece without that prefix.

Special tokens (`<s>`, `</s>`, `<pad>`, `<unk>` and target-language tokens such as `>>fra<<`) are never
joined with a neighbour: each is a group of its own (`word_groups`, the merged heatmap shows them) and
belongs to no numbered word (`word_ids`: None, as word alignments count only real words).

`merge_attention` turns piece attention into word attention (summed over a source word's pieces,
averaged over a target word's pieces, so rows still sum to 1); `join_pieces` spells pieces as text.

`display_piece` is how a person reads one piece (axes, tables, chips, images; machine exports keep the
raw pieces): a piece that starts a word shows a leading `WORD_MARK` ("·") instead of "▁" (an underscore
lookalike that reads as part of the word); a continuation piece shows as it is (a WordPiece "##" prefix
dropped); specials and `>>lang<<` tokens as they are; a blank piece as "␣", newline and tab as "\\n", "\\t".
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from nmt_desktop.core.formats.marian import is_language_token
from nmt_desktop.core.tokenizer import SPECIAL_TOKENS, WORD_START


def is_special(piece: str) -> bool:
    """A special token (`</s>`, `<unk>`, ...) or a target-language token (`>>fra<<`): never part of a word."""
    return piece in SPECIAL_TOKENS or is_language_token(piece)


def _breaks(piece: str, side: int) -> bool:
    """Whether the piece's first (side 0) or last (side -1) character is a word break ("▁" or whitespace)."""
    char = piece[side] if piece else ""
    return char == WORD_START or char.isspace()


def word_starts(pieces: Sequence[str], continuing_prefix: str | None = None) -> list[bool]:
    """True where a piece begins a new word (the rule in the module docstring)."""
    starts, after_break = [], True
    for piece in pieces:
        special = is_special(piece)
        if continuing_prefix is not None:
            start = after_break or special or not piece.startswith(continuing_prefix)
        else:
            start = after_break or special or _breaks(piece, 0)
        starts.append(start)
        after_break = special or _breaks(piece, -1)
    return starts


def word_groups(pieces: Sequence[str], continuing_prefix: str | None = None) -> list[list[int]]:
    """Indices of the pieces of each word, in order; every special token is a group of its own."""
    groups: list[list[int]] = []
    for i, start in enumerate(word_starts(pieces, continuing_prefix)):
        if start:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def real_words(pieces: Sequence[str], continuing_prefix: str | None = None) -> list[list[int]]:
    """Indices of the pieces of each real word (special tokens left out): word k of `word_ids`."""
    return [g for g in word_groups(pieces, continuing_prefix) if not is_special(pieces[g[0]])]


def word_ids(pieces: Sequence[str], continuing_prefix: str | None = None) -> list[int | None]:
    """Word index of each piece, counting real words only; None for special tokens."""
    out: list[int | None] = [None] * len(pieces)
    for word, group in enumerate(real_words(pieces, continuing_prefix)):
        for i in group:
            out[i] = word
    return out


WORD_MARK = "·"  # shown before a piece that starts a word
BLANK_MARK = "␣"  # a space that is not a word start (a piece of blanks, a space inside a piece)


def display_piece(piece: str, continuing_prefix: str | None = None) -> str:
    """One piece as a person reads it (the rule in the module docstring); idempotent on its own output."""
    if is_special(piece):
        return piece
    text = piece.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    if continuing_prefix and not text.startswith(WORD_MARK):
        if text.startswith(continuing_prefix) and len(text) > len(continuing_prefix):
            return text[len(continuing_prefix):]
        return WORD_MARK + text
    if _breaks(text, 0) and text.strip(WORD_START + " "):
        text = WORD_MARK + text[1:]
    return text.replace(WORD_START, BLANK_MARK).replace(" ", BLANK_MARK)


def display_pieces(pieces: Sequence[str], continuing_prefix: str | None = None) -> list[str]:
    """`display_piece` of each piece."""
    return [display_piece(p, continuing_prefix) for p in pieces]


SHOWN_BYTES = re.compile(r"<([0-9A-F]{2}(?: [0-9A-F]{2})*)>")  # how Tokenizer.pieces shows bytes of a partial character


def piece_bytes(piece: str) -> bytes:
    """The UTF-8 bytes of text a piece stands for ("▁" as a space); a byte-level piece shown as "<E2 80>" (bytes of
    a character split across pieces) gives those bytes back, so joined pieces decode to the text."""
    body = piece.lstrip(WORD_START)
    shown = SHOWN_BYTES.fullmatch(body)
    if shown:
        return b" " * (len(piece) - len(body)) + bytes.fromhex(shown.group(1))
    return piece.replace(WORD_START, " ").encode("utf-8")


def join_pieces(pieces: Sequence[str]) -> str:
    """Pieces as text: "▁" becomes a space, none at either end (["▁New", "▁Yo", "rk"] -> "New York")."""
    return "".join(pieces).replace(WORD_START, " ").strip()


def join_word(pieces: Sequence[str]) -> str:
    """One word's label: its pieces joined; a word of blanks only (a space or newline piece) stays visible as is."""
    return join_pieces(pieces) or "".join(pieces)


def words_of(pieces: Sequence[str], continuing_prefix: str | None = None) -> list[str]:
    """The real words (special tokens left out), numbered as `word_ids` numbers them."""
    return [join_word([pieces[i] for i in g]) for g in real_words(pieces, continuing_prefix)]


def word_spans(text: str, pieces: Sequence[str]) -> list[tuple[int, int] | None]:
    """The character span in `text` of the word each piece belongs to: what a source box lights up for a token.
    None for a special token, or a word the text does not hold as it reads (one the tokenizer normalised)."""
    out: list[tuple[int, int] | None] = [None] * len(pieces)
    pos = 0
    for group in real_words(pieces):
        word = join_word([pieces[i] for i in group]).strip()
        at = text.find(word, pos) if word else -1
        if at < 0:
            continue
        pos = at + len(word)
        for i in group:
            out[i] = (at, pos)
    return out


def merge_attention(weights: np.ndarray, source_groups: Sequence[Sequence[int]],
                    target_groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Piece attention (..., T, S) -> word attention (..., len(target_groups), len(source_groups)).

    Summed over the source pieces of a word (a word receives what its pieces receive) and averaged
    over the target pieces of a word (a word attends as its pieces do on average). Groups are
    consecutive runs of indices as `word_groups` returns them; pieces in no group are dropped.
    """
    w = np.asarray(weights)
    T, S = w.shape[-2:]
    src = np.zeros((S, len(source_groups)), dtype=np.float64)  # (S, Ws) piece -> word
    for k, group in enumerate(source_groups):
        src[list(group), k] = 1.0
    tgt = np.zeros((len(target_groups), T), dtype=np.float64)  # (Wt, T) word <- mean of its pieces
    for k, group in enumerate(target_groups):
        tgt[k, list(group)] = 1.0 / len(group)
    return (tgt @ w.astype(np.float64) @ src).astype(w.dtype if w.dtype.kind == "f" else np.float64)


def word_matrix(attn: np.ndarray, source_pieces: Sequence[str], target_pieces: Sequence[str],
                continuing_prefix: str | None = None) -> np.ndarray:
    """Piece attention (T, S) -> real-word attention (target words, source words); special tokens left out,
    so row j and column i are the words `word_ids` numbers j and i."""
    return merge_attention(attn, real_words(source_pieces, continuing_prefix),
                           real_words(target_pieces, continuing_prefix))
