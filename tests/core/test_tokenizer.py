"""Tests for nmt_desktop.core.tokenizer: training, round trips, display pieces, storage, errors."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers

from nmt_desktop.core.analysis.words import word_starts
from nmt_desktop.core.tokenizer import (
    SPECIAL_TOKENS,
    WORD_START,
    Tokenizer,
    TokenizerError,
    TokenizerPair,
)

SRC = [
    "The weather is nice today.",
    "I would like a cup of coffee, please.",
    "Where is the train station?",
    "The children are playing in the garden.",
    "She reads a book every evening.",
    "We are going to the cinema tomorrow.",
    "My brother lives in Berlin.",
    "Can you help me with my homework?",
    "The museum opens at nine o'clock.",
    "He has been working here for ten years.",
    "This translation is not quite right.",
    "Please close the window, it is cold.",
    "The size of the house surprised us.",
    "Déjà vu is a French expression.",
    "It was a naïve mistake.",
    "The café on the corner sells croissants.",
    "Der Größe nach sortiert, bitte.",
    "I love you. 我爱你。",
    "Japanese text: 日本語のテキストです。",
    "I ❤️ machine translation 🚀",
    "Great job 👍 and thanks 🙏",
    "The model translates sentences quickly.",
    "Our vocabulary has eight thousand pieces.",
    "Training takes a few hours on a laptop.",
    "Tokenizers split words into subwords.",
    "Hello world, hello again.",
    "Attention is all you need.",
    "The decoder predicts one token at a time.",
    "The encoder reads the whole source sentence.",
    "Beam search keeps several hypotheses.",
]
TGT = [
    "Das Wetter ist heute schön.",
    "Ich hätte gerne eine Tasse Kaffee, bitte.",
    "Wo ist der Bahnhof?",
    "Die Kinder spielen im Garten.",
    "Sie liest jeden Abend ein Buch.",
    "Wir gehen morgen ins Kino.",
    "Mein Bruder wohnt in Berlin.",
    "Kannst du mir bei meinen Hausaufgaben helfen?",
    "Das Museum öffnet um neun Uhr.",
    "Er arbeitet seit zehn Jahren hier.",
    "Diese Übersetzung ist nicht ganz richtig.",
    "Bitte schließ das Fenster, es ist kalt.",
    "Die Größe des Hauses überraschte uns.",
    "Déjà vu ist ein französischer Ausdruck.",
    "Es war ein naiver Fehler, ein Ärger.",
    "Le café du coin vend des croissants.",
    "Nach Größe sortiert, bitte, ohne Ärger.",
    "Ich liebe dich. 我爱你。",
    "Japanischer Text: 日本語のテキストです。",
    "Ich ❤️ maschinelle Übersetzung 🚀",
    "Gute Arbeit 👍 und danke 🙏",
    "Das Modell übersetzt Sätze schnell.",
    "Unser Vokabular hat achttausend Teile.",
    "Das Training dauert ein paar Stunden.",
    "Tokenizer zerlegen Wörter in Teilwörter.",
    "Hallo Welt, hallo nochmal.",
    "La traduction automatique est très utile.",
    "Où est la gare, s'il vous plaît ?",
    "Les enfants jouent dans le jardin.",
    "Elle lit un livre chaque soir.",
]
CORPUS = SRC + TGT
VOCAB = 800
HEX_PIECE = re.compile(r"<[0-9A-F]{2}(?: [0-9A-F]{2})*>")
ROUND_TRIP = [
    "The weather is nice today.",
    "Größe, Ärger, déjà vu, naïve",
    "我爱你。日本語のテキスト",
    "I ❤️ NMT 🚀👍🏽",
    "  two  spaces,\ttabs and\nnewlines ",
    "Unseen: 🦜 Ωμέγα ẞ",
    "",
]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train(iter(CORPUS), vocab_size=VOCAB)


@pytest.fixture(scope="module")
def joint() -> TokenizerPair:
    return TokenizerPair.train(SRC, TGT, vocab_size=VOCAB, joint=True)


@pytest.fixture(scope="module")
def separate() -> TokenizerPair:
    return TokenizerPair.train(iter(SRC), iter(TGT), vocab_size=VOCAB, joint=False)


# -- training ----------------------------------------------------------------------------------


def test_specials_first(tok: Tokenizer, joint: TokenizerPair, separate: TokenizerPair) -> None:
    for t in (tok, joint.source, joint.target, separate.source, separate.target):
        assert [t.token_to_id(s) for s in SPECIAL_TOKENS] == [0, 1, 2, 3]
        assert [t.id_to_token(i) for i in range(4)] == list(SPECIAL_TOKENS)
    assert joint.joint and joint.source is joint.target
    assert not separate.joint and separate.source is not separate.target


def test_training_is_deterministic_and_files_match_texts(tok: Tokenizer, tmp_path: Path) -> None:
    assert Tokenizer.train((s for s in CORPUS), vocab_size=VOCAB).to_str() == tok.to_str()
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    assert Tokenizer.train(files=[path], vocab_size=VOCAB).to_str() == tok.to_str()


def test_tiny_corpus_and_vocab_size() -> None:
    t = Tokenizer.train(["a b", "a b"], vocab_size=8000)
    assert 4 + 256 <= t.vocab_size < 8000
    assert t.decode(t.encode("a b c 🙂")) == "a b c 🙂"


def test_training_errors(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="missing.txt"):
        Tokenizer.train(files=[tmp_path / "missing.txt"])
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Größe\n".encode("latin-1"))
    with pytest.raises(TokenizerError, match="latin1.txt"):
        Tokenizer.train(files=[latin1])
    with pytest.raises(TokenizerError):
        Tokenizer.train()


def test_per_side_vocabularies_differ(separate: TokenizerPair) -> None:
    assert separate.source.token_to_id("Ġthe") is not None
    assert separate.target.token_to_id("Ġthe") is None
    assert separate.target.token_to_id("Ġist") is not None
    assert separate.source.token_to_id("Ġist") is None


# -- encoding and decoding ---------------------------------------------------------------------


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip_exact(tok: Tokenizer, text: str) -> None:
    ids = tok.encode(text)
    assert tok.decode(ids) == text  # byte-exact: no normalisation, spaces kept
    assert tok.token_to_id("<unk>") not in ids


def test_encode_batch_and_no_specials_added(tok: Tokenizer) -> None:
    batch = tok.encode_batch(ROUND_TRIP)
    assert batch == [tok.encode(t) for t in ROUND_TRIP]
    assert not any(i < 4 for ids in batch for i in ids)


def test_decode_skips_specials(tok: Tokenizer) -> None:
    ids = tok.encode("Hello world.")
    assert tok.decode([1, *ids, 2, 0, 0]) == "Hello world."


# -- display -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_pieces_have_no_byte_glyphs(tok: Tokenizer, text: str) -> None:
    pieces = tok.pieces(tok.encode(text))
    assert not any(g in p for p in pieces for g in ("Ġ", "Ã", "Ċ", "ĉ"))


@pytest.mark.parametrize("text", [
    "The weather is nice today.", "Déjà vu, die Größe des Hauses.", "I love you. 我爱你。"
])
def test_pieces_reconstruct_text(tok: Tokenizer, text: str) -> None:
    pieces = tok.pieces(tok.encode(text))
    assert not any(HEX_PIECE.search(p) for p in pieces)
    assert "".join(pieces).replace(WORD_START, " ") == text
    if " " in text:
        assert any(p.startswith(WORD_START) for p in pieces)


def test_fragments_shown_in_hex(tok: Tokenizer) -> None:
    parrot = "🦜"  # not in the corpus: split into byte pieces
    pieces = tok.pieces(tok.encode(parrot))
    assert len(pieces) > 1 and all(HEX_PIECE.fullmatch(p) for p in pieces)
    shown = bytes(int(h, 16) for p in pieces for h in p[1:-1].split())
    assert shown == parrot.encode("utf-8")


def test_specials_and_unknown_ids_display(tok: Tokenizer) -> None:
    assert tok.pieces([0, 1, 2, 3]) == list(SPECIAL_TOKENS)
    assert tok.pieces([10**6]) == ["<id 1000000>"]
    assert tok.id_to_token(10**6) is None


def test_word_starts(tok: Tokenizer) -> None:
    text = "The children are playing in the garden."
    ids = tok.encode(text)
    pieces = tok.pieces(ids)
    starts = word_starts(pieces, tok.continuing_prefix)
    assert len(starts) == len(ids)
    words: list[str] = []
    for piece, start in zip(pieces, starts):
        if start:
            words.append(piece)
        else:
            words[-1] += piece
    assert [w.lstrip(WORD_START) for w in words] == ["The", "children", "are", "playing", "in", "the", "garden."]
    with_specials = word_starts(tok.pieces([1, *ids, 2]))
    assert with_specials[:2] == [True, True] and with_specials[-1] is True
    assert word_starts([]) == []


def test_metaspace_tokenizer() -> None:
    vocab = [("<pad>", 0.0), ("<s>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁Hel", -1.0), ("lo", -1.0),
             ("▁world", -1.0), ("▁", -2.0), ("<0xE4>", -3.0)] + [(c, -5.0) for c in "Helowrd"]
    hf = HFTokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    hf.add_special_tokens(list(SPECIAL_TOKENS))
    t = Tokenizer.from_str(hf.to_str())
    ids = t.encode("Hello world")
    assert t.pieces(ids) == ["▁Hel", "lo", "▁world"]
    assert word_starts(t.pieces(ids), t.continuing_prefix) == [True, False, True]
    assert t.decode([1, *ids, 2]) == "Hello world"
    assert t.pieces([t.token_to_id("<0xE4>"), 2]) == ["<0xE4>", "</s>"]


def test_wordpiece_tokenizer() -> None:
    hf = HFTokenizer(models.WordPiece({"[UNK]": 0, "the": 1, "play": 2, "##ing": 3}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.decoder = decoders.WordPiece()
    t = Tokenizer(hf)
    ids = t.encode("the playing")
    assert t.pieces(ids) == ["the", "play", "##ing"]
    assert t.continuing_prefix == "##"
    assert word_starts(t.pieces(ids), t.continuing_prefix) == [True, True, False]


# -- storage -----------------------------------------------------------------------------------


def test_save_and_load(tok: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    tok.save(path)
    text = ROUND_TRIP[3]
    for loaded in (Tokenizer.from_file(path), Tokenizer.from_str(tok.to_str())):
        assert loaded.encode(text) == tok.encode(text)
        assert loaded.pieces(loaded.encode(text)) == tok.pieces(tok.encode(text))
        assert loaded.vocab_size == tok.vocab_size


def _same(a: TokenizerPair, b: TokenizerPair) -> None:
    assert a.joint == b.joint and (b.source is b.target) == b.joint
    for text in ROUND_TRIP:
        assert a.source.encode(text) == b.source.encode(text)
        assert a.target.encode(text) == b.target.encode(text)


def test_pair_layouts(joint: TokenizerPair, separate: TokenizerPair, tmp_path: Path) -> None:
    assert joint.save(tmp_path / "j") == ["tokenizer.json"]
    assert sorted(p.name for p in (tmp_path / "j").iterdir()) == ["tokenizer.json"]
    _same(joint, TokenizerPair.load(tmp_path / "j"))
    assert separate.save(tmp_path / "s") == ["source.tokenizer.json", "target.tokenizer.json"]
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["source.tokenizer.json", "target.tokenizer.json"]
    _same(separate, TokenizerPair.load(tmp_path / "s"))
    separate.save(tmp_path / "j")  # switching layout removes the stale file
    assert not (tmp_path / "j" / "tokenizer.json").exists()
    _same(separate, TokenizerPair.load(tmp_path / "j"))


def test_pair_from_files(joint: TokenizerPair, separate: TokenizerPair, tmp_path: Path) -> None:
    for pair in (joint, separate):
        archive = tmp_path / f"{pair.joint}.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            for name in pair.save(tmp_path / str(pair.joint)):
                zf.write(tmp_path / str(pair.joint) / name, name)
            zf.writestr("config.json", "{}")
        with zipfile.ZipFile(archive) as zf:
            files = {n: zf.read(n).decode("utf-8") for n in zf.namelist()}
        _same(pair, TokenizerPair.from_files(files))
    with pytest.raises(TokenizerError, match="tokenizer.json"):
        TokenizerPair.from_files({"config.json": "{}"})


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [None, b"\xff\xfe\x00garbage", b"{not json", b"{}", b"[1, 2, 3]"])
def test_file_errors_name_the_file(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "broken.tokenizer.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(TokenizerError) as info:
        Tokenizer.from_file(path)
    message = str(info.value)
    assert str(path) in message and message.count("\n") == 0
    if content is not None:
        assert "not a valid tokenizers JSON file" in message


def test_from_str_error_uses_name() -> None:
    with pytest.raises(TokenizerError, match=r"^model\.json: not a valid tokenizers JSON file \(.+\)\.$"):
        Tokenizer.from_str("{}", name="model.json")


def test_folder_errors(joint: TokenizerPair, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TokenizerError, match=re.escape(str(empty))):
        TokenizerPair.load(empty)
    half = tmp_path / "half"
    half.mkdir()
    joint.source.save(half / TokenizerPair.FILE_SOURCE)
    with pytest.raises(TokenizerError, match=re.escape(str(half))):
        TokenizerPair.load(half)
    (empty / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(TokenizerError, match=re.escape(str(empty / "tokenizer.json"))):
        TokenizerPair.load(empty)
