"""How a person reads a piece (core/analysis/words.display_piece): a word start is "·word", never "▁word"
or "_word"; continuations, specials and >>lang<< tokens as they are; blanks and control characters visible."""

from __future__ import annotations

import pytest
import tokenizers
from tokenizers import decoders, models, pre_tokenizers

from nmt_desktop.core.analysis.words import BLANK_MARK, WORD_MARK, display_piece, display_pieces
from nmt_desktop.core.tokenizer import WORD_START, Tokenizer

from tiny_models import tiny_tokenizers


@pytest.mark.parametrize("piece, shown", [
    ("▁Bruder", "·Bruder"), ("ein", "ein"), ("rk", "rk"), (".", "."),
    ("</s>", "</s>"), ("<pad>", "<pad>"), ("<unk>", "<unk>"), ("<s>", "<s>"), (">>fra<<", ">>fra<<"),
    ("▁", BLANK_MARK), ("▁▁", BLANK_MARK * 2), ("\n", "\\n"), ("\t", "\\t"), ("▁\n", "·\\n"),
    ("a▁b", f"a{BLANK_MARK}b"), (" x", "·x"), ("_ein", "_ein"),  # a real underscore is text, kept
])
def test_display_piece(piece, shown):
    assert display_piece(piece) == shown
    assert display_piece(shown) == shown  # idempotent: callers may pass labels already shown
    assert WORD_START not in display_piece(piece)


def test_wordpiece_prefix():
    assert display_pieces(["New", "##ark", "is", "##"], "##") == ["·New", "ark", "·is", "·##"]
    assert display_piece("·New", "##") == "·New"
    assert display_piece("</s>", "##") == "</s>"


def test_real_tokenizers_show_no_marker():
    tok = tiny_tokenizers().source
    pieces = tok.pieces(tok.encode("red cat  runs.\nbig dog") + [2])
    assert WORD_START in "".join(pieces)
    shown = display_pieces(pieces)
    assert not any(WORD_START in s or s.startswith("_") for s in shown)
    assert shown[:4] == ["red", f"{WORD_MARK}cat", BLANK_MARK, f"{WORD_MARK}runs"]
    assert shown[-1] == "</s>"

    vocab = [("</s>", 0.0), ("<unk>", 0.0), ("<pad>", 0.0), ("▁red", -1.0), ("▁ca", -2.0), ("ts", -2.0)] + \
        [(c, -5.0) for c in "redcats▁"]
    hf = tokenizers.Tokenizer(models.Unigram(vocab, unk_id=1, byte_fallback=False))
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    hf.add_special_tokens([tokenizers.AddedToken(t, special=True, normalized=False) for t in ("</s>", ">>fra<<")])
    sp = Tokenizer.from_str(hf.to_str())
    pieces = sp.pieces([sp.token_to_id(">>fra<<")] + sp.encode("red cats"))
    assert display_pieces(pieces) == [">>fra<<", "·red", "·ca", "ts"]
