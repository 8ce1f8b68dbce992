"""Training data (core/training/corpus*, tmx, encoding, batching): readers, validation, encoding, batching, position."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.training.batching import (Batch, DataPosition, EpochBatches, batches_for_epoch, iter_batches,
                                                make_batches, padding_fraction, shard_batches)
from nmt_desktop.core.training.corpus import Corpus, CorpusSpec, CorpusStats, read_corpus, split_dev
from nmt_desktop.core.training.corpus_formats import CorpusError, normalize_space
from nmt_desktop.core.training.encoding import encode_pairs, train_tokenizers
from nmt_desktop.core.tokenizer import TokenizerPair

WORDS = "the a cat dog house tree runs sleeps big small red blue green water sun moon and or".split()


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        path.write_bytes(text.encode("utf-8"))
    else:
        path.write_bytes(text)
    return path


def tmx(body: str, header: str = '<header srclang="en-US" datatype="plaintext"/>') -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4">\n{header}\n<body>\n{body}\n</body>\n</tmx>\n'


def random_pairs(n: int, seed: int = 0, max_words: int = 30) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        k = rng.randint(1, max_words)
        m = max(1, k + rng.randint(-3, 3))
        pairs.append((" ".join(rng.choices(WORDS, k=k)), " ".join(rng.choices(WORDS, k=m))))
    return pairs


@pytest.fixture(scope="module")
def toks() -> TokenizerPair:
    pairs = random_pairs(300, seed=1)
    return train_tokenizers(pairs, vocab_size=300, joint=True)


@pytest.fixture(scope="module")
def cfg(toks: TokenizerPair) -> ModelConfig:
    v = toks.source.vocab_size
    return ModelConfig(src_vocab_size=v, tgt_vocab_size=v, d_model=32, n_heads=2, ffn_dim=64, max_positions=128)


@pytest.fixture(scope="module")
def encoded(toks, cfg):
    return encode_pairs(random_pairs(600, seed=2), toks, cfg)


# -- readers --------------------------------------------------------------------------------------


def test_tsv_reads_first_two_columns_and_ignores_extra(tmp_path):
    path = write(tmp_path / "train.tsv", "Hello .\tHallo .\tscore=0.9\textra\nGood  morning\t Guten Morgen \n")
    corpus = read_corpus(CorpusSpec(path=path))
    assert corpus.pairs == [("Hello .", "Hallo ."), ("Good morning", "Guten Morgen")]
    assert corpus.stats == CorpusStats(read=2, kept=2, source_files=[str(path)])
    assert corpus.preview(1) == [("Hello .", "Hallo .")]
    assert corpus.sources() == ["Hello .", "Good morning"] and len(corpus) == 2
    assert "2 kept" in corpus.stats.summary()


def test_tsv_reverse_swaps_columns(tmp_path):
    path = write(tmp_path / "en-de.tsv", "I am.\tIch bin.\tx\n")
    assert read_corpus(CorpusSpec(path=path, reverse=True)).pairs == [("Ich bin.", "I am.")]


def test_two_aligned_files(tmp_path):
    src = write(tmp_path / "train.en", "one\ntwo\nthree\n")
    tgt = write(tmp_path / "train.de", "eins\nzwei\ndrei")  # no final newline
    corpus = read_corpus(CorpusSpec(src_path=src, tgt_path=tgt))
    assert corpus.pairs == [("one", "eins"), ("two", "zwei"), ("three", "drei")]
    assert corpus.stats.source_files == [str(src), str(tgt)]
    assert read_corpus(CorpusSpec(src_path=src, tgt_path=tgt, reverse=True)).pairs[0] == ("eins", "one")


def test_aligned_files_split_only_on_newline(tmp_path):
    src = write(tmp_path / "a.en", "one\u2028still one\x85and\rmore\nline two\n")
    tgt = write(tmp_path / "a.de", "eins\nzwei\n")
    corpus = read_corpus(CorpusSpec(src_path=src, tgt_path=tgt))
    assert corpus.pairs == [("one\u2028still one\x85and more", "eins"), ("line two", "zwei")]


TMX_INLINE = tmx("""
<tu tuid="1">
  <tuv xml:lang="en-US"><seg>Click <bpt i="1" x="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept> to <hi type="em">store</hi>
      the <ph x="2">&lt;br/&gt;</ph>file<it pos="begin">&lt;i&gt;</it>.</seg></tuv>
  <tuv xml:lang="de-DE"><prop type="x">ignored</prop><seg>  Klicken Sie auf <bpt i="1">{b}</bpt>Speichern<ept i="1">{/b}</ept>.  </seg></tuv>
</tu>
<tu tuid="2">
  <tuv xml:lang="en-GB"><seg>See <ph>&lt;img alt="<sub>the logo</sub>"/&gt;</ph>here.</seg></tuv>
  <tuv lang="DE-at"><seg>Siehe hier.</seg></tuv>
</tu>
""")


def test_tmx_inline_markup_and_whitespace(tmp_path):
    corpus = read_corpus(CorpusSpec(path=write(tmp_path / "tm.tmx", TMX_INLINE), src_lang="en", tgt_lang="de"))
    assert corpus.pairs == [("Click Save to store the file.", "Klicken Sie auf Speichern."),
                            ("See the logo here.", "Siehe hier.")]


def test_tmx_languages_by_code_prefix_and_case(tmp_path):
    path = write(tmp_path / "tm.tmx", TMX_INLINE)
    de_en = read_corpus(CorpusSpec(path=path, src_lang="DE", tgt_lang="en"))
    assert de_en.pairs[1] == ("Siehe hier.", "See the logo here.")
    only_gb = read_corpus(CorpusSpec(path=path, src_lang="en-gb", tgt_lang="de-AT"))
    assert only_gb.pairs == [("See the logo here.", "Siehe hier.")]
    assert only_gb.stats.skipped_empty == 1  # unit 1 has no en-GB / de-AT side
    assert read_corpus(CorpusSpec(path=path, src_lang="en_US", tgt_lang="de")).pairs[0][0].startswith("Click")
    reverse = read_corpus(CorpusSpec(path=path, src_lang="en", tgt_lang="de", reverse=True))
    assert reverse.pairs[0] == ("Klicken Sie auf Speichern.", "Click Save to store the file.")


def test_tmx_default_languages_come_from_header_then_first_unit(tmp_path):
    body = """<tu><tuv xml:lang="fr"><seg>Bonjour</seg></tuv><tuv xml:lang="en-US"><seg>Hello</seg></tuv></tu>"""
    assert read_corpus(CorpusSpec(path=write(tmp_path / "a.tmx", tmx(body)))).pairs == [("Hello", "Bonjour")]
    no_header = tmx(body, header='<header srclang="*all*"/>')
    assert read_corpus(CorpusSpec(path=write(tmp_path / "b.tmx", no_header))).pairs == [("Bonjour", "Hello")]
    only_src = read_corpus(CorpusSpec(path=write(tmp_path / "c.tmx", no_header), src_lang="en"))
    assert only_src.pairs == [("Hello", "Bonjour")]


def test_tmx_languages_not_found_lists_languages(tmp_path):
    path = write(tmp_path / "tm.tmx", TMX_INLINE)
    message = r"no usable sentence pairs .*'fr'.*languages found: DE-at, de-DE, en-GB, en-US"
    with pytest.raises(CorpusError, match=message):
        read_corpus(CorpusSpec(path=path, src_lang="fr", tgt_lang="de"))


def test_tmx_detected_without_extension(tmp_path):
    body = """<tu><tuv xml:lang="en"><seg>Hi</seg></tuv><tuv xml:lang="de"><seg>Hallo</seg></tuv></tu>"""
    assert read_corpus(CorpusSpec(path=write(tmp_path / "memory.xml", tmx(body)))).pairs == [("Hi", "Hallo")]


def test_txt_with_tabs_is_tsv_and_without_is_refused(tmp_path):
    assert read_corpus(CorpusSpec(path=write(tmp_path / "a.txt", "\nx\ty\n"))).pairs == [("x", "y")]
    with pytest.raises(CorpusError, match="cannot tell the corpus format"):
        read_corpus(CorpusSpec(path=write(tmp_path / "b.txt", "just one side\n")))
    assert read_corpus(CorpusSpec(path=write(tmp_path / "c.dat", "x\ty\n"), format="tsv")).pairs == [("x", "y")]


def test_spec_errors(tmp_path):
    path = write(tmp_path / "a.tsv", "x\ty\n")
    with pytest.raises(CorpusError, match="not both"):
        read_corpus(CorpusSpec(path=path, src_path=path, tgt_path=path))
    with pytest.raises(CorpusError, match="no corpus given"):
        read_corpus(CorpusSpec(src_path=path))
    with pytest.raises(CorpusError, match="unknown corpus format"):
        read_corpus(CorpusSpec(path=path, format="csv"))  # type: ignore[arg-type]


# -- validation errors ----------------------------------------------------------------------------


def test_line_count_mismatch_names_both_files_and_counts(tmp_path):
    src = write(tmp_path / "train.en", "a\nb\nc\nd\n")
    tgt = write(tmp_path / "train.de", "a\nb\nc\n")
    with pytest.raises(CorpusError) as err:
        read_corpus(CorpusSpec(src_path=src, tgt_path=tgt))
    assert str(err.value) == f"{src} has 4 lines but {tgt} has 3; aligned files must have the same number of lines."
    with pytest.raises(CorpusError, match=rf"{tgt.name} has 3 lines but .*{src.name} has 4"):
        read_corpus(CorpusSpec(src_path=tgt, tgt_path=src))


def test_invalid_utf8_names_file_line_and_offset(tmp_path):
    path = write(tmp_path / "train.tsv", b"ok\tgut\nfine\tgut\nbad \xff\tschlecht\n")
    with pytest.raises(CorpusError) as err:
        read_corpus(CorpusSpec(path=path))
    assert str(err.value) == f"{path}, line 3: invalid UTF-8 (byte 0xFF at byte offset 20 of the file)."


def test_utf16_text_is_refused_with_advice(tmp_path):
    path = write(tmp_path / "train.tsv", "a\tb\n".encode("utf-16"))
    with pytest.raises(CorpusError, match="line 1: the file is UTF-16 text.*save it as UTF-8"):
        read_corpus(CorpusSpec(path=path))


def test_tsv_line_without_tab_names_line(tmp_path):
    path = write(tmp_path / "train.tsv", "a\tb\n" * 16 + "no tab here\n")
    with pytest.raises(CorpusError) as err:
        read_corpus(CorpusSpec(path=path))
    assert str(err.value) == f"{path}, line 17: expected at least 2 tab-separated columns, found 1."


@pytest.mark.parametrize("spec", [
    lambda d: CorpusSpec(path=d / "missing.tsv"),
    lambda d: CorpusSpec(path=d / "missing.tmx"),
    lambda d: CorpusSpec(src_path=write(d / "ok.en", "a\n"), tgt_path=d / "missing.de"),
], ids=["tsv", "tmx", "aligned"])
def test_missing_file(tmp_path, spec):
    with pytest.raises(CorpusError, match=r"missing\.\w+: file not found\.$"):
        read_corpus(spec(tmp_path))


@pytest.mark.parametrize("text", ["", "\n\n", " \t \n\t\n"], ids=["empty", "blank-lines", "blank-sides"])
def test_empty_corpus(tmp_path, text):
    with pytest.raises(CorpusError, match="no usable sentence pairs"):
        read_corpus(CorpusSpec(path=write(tmp_path / "train.tsv", text)))


def test_tmx_external_doctype_is_accepted(tmp_path):
    """OmegaT and other tools write a plain external DOCTYPE; expat never fetches it."""
    text = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE tmx SYSTEM "tmx11.dtd">\n<tmx version="1.4">'
            '<header srclang="en"/><body><tu><tuv xml:lang="en"><seg>Hello</seg></tuv>'
            '<tuv xml:lang="de"><seg>Hallo</seg></tuv></tu></body></tmx>\n')
    assert read_corpus(CorpusSpec(path=write(tmp_path / "tm.tmx", text))).pairs == [("Hello", "Hallo")]


@pytest.mark.parametrize("text,line,word", [
    ('<?xml version="1.0"?>\n<tmx version="1.4"/>\n<!DOCTYPE tmx SYSTEM "tmx14.dtd">\n', 3, "<!DOCTYPE"),
    ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n]>\n<tmx>&lol;</tmx>\n', 2, "<!DOCTYPE"),
    ('<?xml version="1.0"?>\n<tmx>\n\n<!ENTITY x SYSTEM "file:///etc/passwd">\n</tmx>\n', 4, "<!ENTITY"),
], ids=["doctype", "billion-laughs", "entity"])
def test_tmx_doctype_and_entity_refused(tmp_path, text, line, word):
    path = write(tmp_path / "tm.tmx", text)
    with pytest.raises(CorpusError, match=rf"tm\.tmx, line {line}: {word} declarations are not allowed"):
        read_corpus(CorpusSpec(path=path))


def test_tmx_doctype_refused_in_utf16(tmp_path):
    text = '<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE tmx [<!ENTITY a "b">]>\n<tmx/>\n'
    with pytest.raises(CorpusError, match="line 2: <!DOCTYPE"):
        read_corpus(CorpusSpec(path=write(tmp_path / "tm.tmx", text.encode("utf-16"))))


def test_tmx_malformed_xml_names_line(tmp_path):
    body = """<tu><tuv xml:lang="en"><seg>Hi</seg></tuv>
<tuv xml:lang="de"><seg>Hallo</tuv></tu>"""
    path = write(tmp_path / "tm.tmx", tmx(body))
    with pytest.raises(CorpusError, match=r"tm\.tmx, line 6: malformed XML \(mismatched tag, column \d+\)\.$"):
        read_corpus(CorpusSpec(path=path))


@pytest.mark.parametrize("encoding", ["foo", "utf-32"])
def test_tmx_unreadable_encoding_declaration(tmp_path, encoding):
    path = write(tmp_path / "tm.tmx", f'<?xml version="1.0" encoding="{encoding}"?>\n<tmx/>\n')
    with pytest.raises(CorpusError, match="cannot read the XML encoding"):
        read_corpus(CorpusSpec(path=path))


def test_tmx_latin1_declaration_is_read(tmp_path):
    body = '<tu><tuv xml:lang="en"><seg>Size</seg></tuv><tuv xml:lang="de"><seg>Größe</seg></tuv></tu>'
    text = tmx(body).replace('encoding="UTF-8"', 'encoding="ISO-8859-1"')
    path = write(tmp_path / "tm.tmx", text.encode("latin-1"))
    assert read_corpus(CorpusSpec(path=path)).pairs == [("Size", "Größe")]


def test_tmx_other_xml_refused(tmp_path):
    with pytest.raises(CorpusError, match="not a TMX file"):
        read_corpus(CorpusSpec(path=write(tmp_path / "page.tmx", "<html><body/></html>")))


# -- silent fixes and filters ---------------------------------------------------------------------


def test_bom_and_crlf_are_stripped_silently(tmp_path):
    plain = read_corpus(CorpusSpec(path=write(tmp_path / "plain.tsv", "Hello\tHallo\nBye\tTschüss\n")))
    dos = read_corpus(CorpusSpec(path=write(tmp_path / "dos.tsv", "\ufeffHello\tHallo\r\nBye\tTschüss\r\n")))
    assert dos.pairs == plain.pairs
    src = write(tmp_path / "a.en", "\ufeffHello\r\nBye\r\n")
    tgt = write(tmp_path / "a.de", "\ufeffHallo\r\nTschüss")
    assert read_corpus(CorpusSpec(src_path=src, tgt_path=tgt)).pairs == plain.pairs
    body = """<tu><tuv xml:lang="en"><seg>Hello</seg></tuv><tuv xml:lang="de"><seg>Hallo</seg></tuv></tu>"""
    bom_tmx = write(tmp_path / "a.tmx", "\ufeff" + tmx(body).replace("\n", "\r\n"))
    assert read_corpus(CorpusSpec(path=bom_tmx)).pairs == plain.pairs[:1]


def test_empty_sides_are_skipped_and_counted(tmp_path):
    path = write(tmp_path / "train.tsv", "a\tb\n\tb\na\t  \n\n c \t d \n")
    corpus = read_corpus(CorpusSpec(path=path))
    assert corpus.pairs == [("a", "b"), ("c", "d")]
    assert (corpus.stats.read, corpus.stats.kept, corpus.stats.skipped_empty) == (5, 2, 3)


def test_long_pairs_are_filtered_and_counted(tmp_path):
    path = write(tmp_path / "train.tsv", "short\tkurz\n" + "x" * 11 + "\ty\nx\t" + "y" * 11 + "\n" + "x" * 10 + "\ty\n")
    corpus = read_corpus(CorpusSpec(path=path, max_chars=10))
    assert corpus.pairs == [("short", "kurz"), ("x" * 10, "y")]
    assert (corpus.stats.kept, corpus.stats.skipped_long) == (2, 2)


def test_normalize_space_keeps_unicode_spaces():
    assert normalize_space(" a \t b\n\nc\r ") == "a b c"
    assert normalize_space("10\u00a0km") == "10\u00a0km"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.text(max_size=20), max_size=8), suffix=st.sampled_from([".tsv", ".txt", ".tmx", ".dat"]))
def test_random_text_reads_or_raises_corpus_error(lines, suffix):
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d) / f"corpus{suffix}", "\n".join(lines))
        try:
            corpus = read_corpus(CorpusSpec(path=path))
        except CorpusError:
            return
        assert corpus.pairs and all(s and t for s, t in corpus.pairs)


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".tsv", ".txt", ".tmx"]))
def test_random_bytes_read_or_raise_corpus_error(data, suffix):
    with tempfile.TemporaryDirectory() as d:
        try:
            read_corpus(CorpusSpec(path=write(Path(d) / f"corpus{suffix}", data)))
        except CorpusError:
            pass


# -- dev split and tokenizers ---------------------------------------------------------------------


def test_split_dev_is_deterministic_and_disjoint():
    corpus = Corpus([(f"s{i}", f"t{i}") for i in range(100)], CorpusStats(read=100, kept=100))
    train, dev = split_dev(corpus, 0.1, seed=3)
    assert (len(train), len(dev)) == (90, 10) and (train.stats.kept, dev.stats.kept) == (90, 10)
    assert set(train.pairs).isdisjoint(dev.pairs) and set(train.pairs) | set(dev.pairs) == set(corpus.pairs)
    assert dev.pairs == sorted(dev.pairs, key=corpus.pairs.index)  # file order kept
    assert split_dev(corpus, 0.1, seed=3) == (train, dev)
    assert split_dev(corpus, 0.1, seed=4)[1].pairs != dev.pairs
    assert len(split_dev(Corpus(corpus.pairs[:2], CorpusStats()), 0.01)[1]) == 1
    with pytest.raises(ValueError):
        split_dev(corpus, 1.0)


def test_train_tokenizers_joint_and_separate():
    pairs = random_pairs(50)
    joint = train_tokenizers(pairs, vocab_size=280, joint=True)
    assert joint.joint and joint.source is joint.target
    separate = train_tokenizers(Corpus(pairs, CorpusStats()), vocab_size=280, joint=False)
    assert not separate.joint and separate.source is not separate.target
    assert separate.target.decode(separate.target.encode(pairs[0][1])) == pairs[0][1]


# -- encoding -------------------------------------------------------------------------------------


def test_encode_pairs_builds_model_sequences(toks, cfg):
    pairs = [("the cat runs", "a dog sleeps"), ("sun", "moon and water")]
    enc = encode_pairs(pairs, toks, cfg)
    assert len(enc) == 2 and enc.pair_index.tolist() == [0, 1]
    assert enc.source(0) == toks.source.encode("the cat runs") + [cfg.eos_id]
    assert enc.target(1) == [cfg.decoder_start_id, *toks.target.encode("moon and water"), cfg.eos_id]
    assert enc.tgt_lengths.tolist() == [len(enc.target(i)) - 1 for i in range(2)]
    no_eos = ModelConfig(**{**cfg.to_dict(), "src_add_eos": False})
    assert encode_pairs(pairs, toks, no_eos).source(0) == toks.source.encode("the cat runs")


def test_encode_pairs_drops_long_pairs_and_counts(toks, cfg):
    long_side = " ".join(["hippopotamus"] * 40)
    pairs = [("the cat", "a dog"), (long_side, "a"), ("a", long_side), ("", "x")]
    enc = encode_pairs(pairs, toks, cfg, max_tokens=20)
    assert enc.pair_index.tolist() == [0] and (enc.dropped_long, enc.dropped_empty) == (2, 1)
    small = ModelConfig(**{**cfg.to_dict(), "max_positions": 8})
    words = {k: " ".join(["a"] * k) for k in (7, 8)}
    assert [len(toks.source.encode(words[k])) for k in (7, 8)] == [7, 8]
    # source: 7 tokens + </s> fits 8 positions, 8 + </s> does not; target: 7 + 1 decoder steps fit, 8 + 1 do not
    pairs = [(words[7], "dog"), (words[8], "dog"), ("dog", words[7]), ("dog", words[8])]
    enc = encode_pairs(pairs, toks, small)
    assert enc.pair_index.tolist() == [0, 2] and enc.dropped_long == 2
    assert enc.src_lengths.tolist() == [8, 2] and enc.tgt_lengths.tolist() == [2, 8]
    with pytest.raises(CorpusError, match="no usable sentence pairs after tokenisation"):
        encode_pairs([(long_side, long_side)], toks, cfg, max_tokens=5)


# -- batches --------------------------------------------------------------------------------------


def test_batches_respect_token_budget(encoded):
    batches = make_batches(encoded, 400, seed=0, epoch=0)
    assert batches
    for b in batches:
        assert b.rows * max(b.src.shape[1], b.tgt_in.shape[1]) <= 400


def test_pair_wider_than_budget_is_a_batch_of_its_own(encoded):
    widest = int(torch.maximum(encoded.src_lengths, encoded.tgt_lengths).max())
    batches = make_batches(encoded, widest - 1, seed=0, epoch=0)
    assert sum(b.rows for b in batches) == len(encoded)
    assert all(b.rows == 1 for b in batches if max(b.src.shape[1], b.tgt_in.shape[1]) > widest - 1)


def test_length_bucketing_reduces_padding(encoded):
    bucketed = padding_fraction(make_batches(encoded, 500, seed=0, epoch=0))
    unsorted = padding_fraction(make_batches(encoded, 500, seed=0, epoch=0, pool_factor=0))
    assert bucketed < 0.5 * unsorted


def _signature(batches) -> list[list[int]]:
    return [b.pair_index.tolist() for b in batches]


def test_batches_are_deterministic_per_seed_and_epoch(encoded):
    first = _signature(make_batches(encoded, 400, seed=7, epoch=3))
    assert _signature(make_batches(encoded, 400, seed=7, epoch=3)) == first
    assert _signature(make_batches(encoded, 400, seed=7, epoch=4)) != first
    assert _signature(make_batches(encoded, 400, seed=8, epoch=3)) != first
    assert _signature(batches_for_epoch(encoded, 400, seed=7, epoch=3)) == first


def test_every_pair_appears_once_per_epoch(encoded):
    for epoch in range(3):
        rows = [i for b in make_batches(encoded, 300, seed=1, epoch=epoch) for i in b.pair_index.tolist()]
        assert sorted(rows) == encoded.pair_index.tolist()
    unshuffled = [i for b in make_batches(encoded, 300, shuffle=False, pool_factor=0) for i in b.pair_index.tolist()]
    assert unshuffled == encoded.pair_index.tolist()


def test_batch_tensors_shapes_padding_and_shift(encoded, cfg):
    for b in make_batches(encoded, 300, seed=2, epoch=0)[:10]:
        assert isinstance(b, Batch)
        B, S = b.src.shape
        assert b.tgt_in.shape == b.tgt_out.shape and b.tgt_in.shape[0] == B == len(b.pair_index)
        assert b.src.dtype == b.tgt_in.dtype == b.tgt_out.dtype == torch.int64
        real_tgt = b.tgt_out != cfg.pad_id  # (B, T); pad never occurs as a real id here
        assert int(real_tgt.sum()) == b.n_tgt_tokens and int((b.src != cfg.pad_id).sum()) == b.n_src_tokens
        assert (b.tgt_in[:, 0] == cfg.decoder_start_id).all()
        shifted_ok = b.tgt_in[:, 1:] == b.tgt_out[:, :-1]  # (B, T-1)
        assert shifted_ok[real_tgt[:, 1:]].all()
        lengths = real_tgt.sum(1)  # (B,)
        assert (b.tgt_out[torch.arange(B), lengths - 1] == cfg.eos_id).all()
        assert (b.src[torch.arange(B), (b.src != cfg.pad_id).sum(1) - 1] == cfg.eos_id).all()
        assert (b.tgt_in[~real_tgt] == cfg.pad_id).all()  # right-padded, same real positions as tgt_out
        total = b.src.numel() + b.tgt_out.numel()
        assert b.padding_fraction == pytest.approx(1 - (b.n_src_tokens + b.n_tgt_tokens) / total)
        assert b.to("cpu").src.equal(b.src)


def test_padding_fraction_over_batches():
    one = Batch(torch.tensor([[5, 2]]), torch.tensor([[1, 6]]), torch.tensor([[6, 2]]), 2, 2, torch.tensor([0]))
    half = Batch(torch.tensor([[5, 0]]), torch.tensor([[1, 0]]), torch.tensor([[2, 0]]), 1, 1, torch.tensor([1]))
    assert one.padding_fraction == 0.0 and half.padding_fraction == 0.5
    assert padding_fraction([one, half]) == 0.25 and padding_fraction([]) == 0.0


def test_decoder_start_equal_to_pad_still_counts_targets(toks, cfg):
    marian = ModelConfig(**{**cfg.to_dict(), "decoder_start_id": cfg.pad_id})
    enc = encode_pairs([("the cat", "a dog"), ("sun", "moon")], toks, marian)
    (batch,) = make_batches(enc, 1000, shuffle=False)
    assert (batch.tgt_in[:, 0] == cfg.pad_id).all()
    assert batch.n_tgt_tokens == sum(len(enc.target(i)) - 1 for i in range(2))


def test_shard_batches_are_disjoint_and_equal_sized(encoded):
    batches = make_batches(encoded, 300, seed=0, epoch=0)
    world = 3
    shards = [shard_batches(batches, rank, world) for rank in range(world)]
    assert len({len(s) for s in shards}) == 1 and len(shards[0]) == len(batches) // world
    seen = [tuple(b.pair_index.tolist()) for s in shards for b in s]
    assert len(seen) == len(set(seen)) == len(shards[0]) * world
    with pytest.raises(ValueError):
        shard_batches(batches, 3, 3)
    lazy = shard_batches(batches_for_epoch(encoded, 300, seed=0, epoch=0), 1, world)
    assert isinstance(lazy, EpochBatches) and _signature(lazy) == _signature(shards[1])


def test_iter_batches_resumes_at_exact_position(encoded):
    n0 = len(batches_for_epoch(encoded, 400, seed=5, epoch=0))
    run = iter_batches(encoded, 400, seed=5)
    walked = [next(run) for _ in range(n0 + 3)]
    assert walked[n0][0] == DataPosition(1, 0)
    pos, batch = walked[n0 - 2]
    resumed = iter_batches(encoded, 400, seed=5, start=pos.next())
    for expected_pos, expected in walked[n0 - 1:]:
        got_pos, got = next(resumed)
        assert got_pos == expected_pos and got.pair_index.equal(expected.pair_index)
    ranks = [next(iter_batches(encoded, 400, seed=5, rank=r, world_size=2))[1] for r in range(2)]
    assert not ranks[0].pair_index.equal(ranks[1].pair_index)
