"""Importing a Hugging Face MarianMT folder (core/formats/marian.py) against transformers itself.

A random-weight MarianMTModel with freshly trained unigram SentencePiece models (no download) is
imported; ids, teacher-forced logits, greedy and beam outputs must match transformers exactly.
The parity tests at the end do so on real text (the first 300 English lines of the Tatoeba en-fr
dev set, read from the shared data folder at test time) plus hand-written tricky Unicode, for a
shared-vocabulary, a separate-vocabulary and a multilingual (`>>fra<<`) model.

Beam search: nmt-desktop normalises scores with GNMT's ((5 + len) / 6) ** alpha, transformers with
len ** alpha, so both run with no length penalty (alpha 0 / length_penalty=0.0) and transformers'
early_stopping=True, which is nmt-desktop's rule (a sentence is done with beam_size finished
hypotheses; only </s> ranked within the beam finishes one).
"""

from __future__ import annotations

import itertools
import json
import os
import random

import pytest
import sentencepiece as spm
import torch
from transformers import MarianConfig, MarianMTModel, MarianTokenizer

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.formats.marian import MarianImportError, import_marian
from nmt_desktop.core.formats.model_folder import load_model
from nmt_desktop.core.decoding.translator import TargetLanguageError, Translator

# MarianTokenizer recommends sacremoses; without it (as here) it applies no punctuation normaliser
pytestmark = pytest.mark.filterwarnings("ignore:Recommended. pip install sacremoses")

SENTENCES = [
    "the cat sat on the mat.",
    "Hello, world! How are you?",
    "Café déjà vu — naïve façade.",
    "  extra   spaces\tand tabs  ",
    "numbers 12345 and 3.14",
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ",  # NFKC folds these
    "unknown chars: 漢字 😀 ☃",
    "a",
    "",
    "Dogs, cats & birds; (maybe) \"quoted\" 'text'?",
]

# hand-written lines that stress normalisation and segmentation
TRICKY = [
    "Cafe\u0301 de\u0301ja\u0300 vu, nai\u0308ve",  # combining accents (NFC would compose them)
    "ﬁnance ﬂow Ⅻ ① ㎏ ＡＢＣ ｶﾀｶﾅ ™ ℃",  # NFKC-foldable: ligatures, numerals, squared, full/halfwidth
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 ℌ𝔢𝔩𝔩𝔬",  # mathematical alphanumerics
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffBOM\u2060word joiner",
    "soft\u00adhyphen and variation ☃\ufe0f ❤\ufe0e",
    "emoji 😀👍🏽 👨\u200d👩\u200d👧 🇫🇷 🏳️\u200d🌈",
    "RTL: שלום עולם and مرحبا بالعالم \u200fmark\u200e",
    "CJK 漢字かな交じり文、中文句子。한국어 문장",
    "Hindi हिन्दी, Thai ภาษาไทย, Greek Ελληνικά, Russian Русский",
    "tabs\there\tand\t\tthere",
    "multiple     spaces   inside",
    "   leading and trailing   ",
    "control\x07bell\x1bescape\x7fdel\x01soh",
    "non\u00a0breaking\u2009thin\u3000ideographic\u2028line sep",
    "quotes “curly” ‘single’ «guillemets» „low“ ‹one›",
    "dashes – — ‒ and ellipsis … and bullet •",
    "math ∑ ∫ √ ≤ ≥ ≠ ∞ ½ ¼ ² ³ µ",
    "Ångström Øresund Łódź Ærøskøbing Ŀ ĳ",
    "Türkçe İstanbul ıi ß ẞ ǅ",
    "line\rcarriage return",
    "price: $5.00 €3,50 £2 ¥100 ₹7",
    "mail test@example.com http://example.org/a?b=c&d#e",
    "I'm \"fine\", aren't I?!",
    "",
    " ",
    "\t",
    "a",
    "ABC",
]

WORDS = ("the cat dog bird sat ran on under mat house tree big small red green blue hello world how are "
         "you café déjà vu naïve façade quick brown fox jumps over lazy numbers and tabs spaces text "
         "maybe quoted birds dogs cats").split()

CODES = (">>fra<<", ">>spa<<", ">>por<<", ">>ita<<")  # the multilingual model's target languages


def _corpus(path, seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(400):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 12))]
        if rng.random() < 0.3:
            words.append(str(rng.randint(0, 9999)))
        line = " ".join(words)
        lines.append(line.capitalize() + rng.choice([".", "!", "?", ",", ";", ""]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _train_spm(tmp_path, name, seed, vocab_size=200, lines=None, coverage=1.0):
    """A unigram .spm trained on `lines`, or else on a synthetic corpus from WORDS."""
    corpus = tmp_path / f"{name}.txt"
    if lines is None:
        _corpus(corpus, seed)
    else:
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    prefix = tmp_path / name
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), model_type="unigram",
                                   vocab_size=vocab_size, character_coverage=coverage, num_threads=1,
                                   minloglevel=2)
    return prefix.with_suffix(".model")


def _vocab_of(*models, pad_last=True, codes=()):
    """MarianTokenizer's vocab.json layout: </s> 0, <unk> 1, language codes, the pieces, <pad> last (or at 2)."""
    vocab = {"</s>": 0, "<unk>": 1} if pad_last else {"</s>": 0, "<unk>": 1, "<pad>": 2}
    for code in codes:
        vocab[code] = len(vocab)
    for model in models:
        sp = spm.SentencePieceProcessor(model_file=str(model))
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i):
                continue
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    if pad_last:
        vocab["<pad>"] = len(vocab)
    return vocab


def _make_hf_folder(folder, tmp_path, safetensors=True, seed=0, eos_bias=5.5, shared=True,
                    tgt_pieces=200, spms=None, codes=(), max_positions=64, pad_bias=-30.0):
    """A random MarianMTModel saved in `folder` with its MarianTokenizer; spms: (source, target) .spm
    files (default: trained on synthetic text); codes: language tokens added to vocab.json."""
    folder.mkdir(parents=True)
    src_model, tgt_model = spms or (_train_spm(tmp_path, "src", 1), _train_spm(tmp_path, "tgt", 2, tgt_pieces))
    (folder / "source.spm").write_bytes(src_model.read_bytes())
    (folder / "target.spm").write_bytes(tgt_model.read_bytes())
    if shared:
        vocab = tgt_vocab = _vocab_of(src_model, tgt_model, codes=codes)
    else:  # one id space per side; <pad> must have one id in both
        vocab = _vocab_of(src_model, pad_last=False, codes=codes)
        tgt_vocab = _vocab_of(tgt_model, pad_last=False)
        (folder / "target_vocab.json").write_text(json.dumps(tgt_vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    V, VT, PAD = len(vocab), len(tgt_vocab), vocab["<pad>"]
    cfg = MarianConfig(vocab_size=V, decoder_vocab_size=VT, d_model=32, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                       decoder_ffn_dim=64, max_position_embeddings=max_positions, pad_token_id=PAD,
                       eos_token_id=0, decoder_start_token_id=PAD, forced_eos_token_id=0, scale_embedding=True,
                       activation_function="swish", dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                       share_encoder_decoder_embeddings=shared)
    torch.manual_seed(seed)
    model = MarianMTModel(cfg).eval()
    with torch.no_grad():
        # Marian's init (std 0.02) makes a random model ignore its source; larger weights make the
        # outputs depend on it. A visible final_logits_bias, </s> likely enough to end some
        # hypotheses, and <pad> never chosen unless pad_bias says otherwise.
        for name, p in model.named_parameters():
            if "embed_positions" in name:  # the fixed sinusoids
                continue
            if p.dim() > 1:
                p.normal_(0, 0.3)
            elif "layer_norm" in name and name.endswith("weight"):
                p.uniform_(0.5, 1.5)
            else:
                p.normal_(0, 0.1)
        model.final_logits_bias.normal_(0, 1.0)
        model.final_logits_bias[0, 0] += eos_bias
        model.final_logits_bias[0, PAD] = pad_bias
    model.save_pretrained(folder)
    if not safetensors:  # transformers 5 writes only safetensors: store the same state dict the old way
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        torch.save(state, folder / "pytorch_model.bin")
        (folder / "model.safetensors").unlink()
    tok = MarianTokenizer(vocab=str(folder / "vocab.json"), source_spm=str(folder / "source.spm"),
                          target_spm=str(folder / "target.spm"), source_lang="xx", target_lang="yy",
                          separate_vocabs=not shared,
                          target_vocab_file=None if shared else str(folder / "target_vocab.json"))
    return model, tok


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    torch.set_num_threads(1)
    tmp = tmp_path_factory.mktemp("marian")
    hf, tok = _make_hf_folder(tmp / "hf", tmp)
    out = import_marian(tmp / "hf", tmp / "ours")
    return hf, tok, out, tmp


def test_token_ids_match_marian_tokenizer(imported):
    hf, tok, out, _ = imported
    tr = Translator.load(out)
    for text in SENTENCES:
        expected = tok(text)["input_ids"]
        assert tr.source_ids(text) == expected, text
        target_expected = tok(text_target=text)["input_ids"]
        assert tr.tokenizers.target.encode(text) + [tr.config.eos_id] == target_expected, text


def test_config_expresses_marian(imported):
    hf, _, out, _ = imported
    cfg = load_model(out).config
    assert cfg.pos_layout == "concat" and cfg.norm == "post" and cfg.activation == "silu"
    assert cfg.final_logits_bias and cfg.shared_vocab and cfg.tie_output and cfg.scale_embedding
    assert cfg.pad_id == cfg.decoder_start_id == hf.config.pad_token_id
    assert cfg.eos_id == 0 and cfg.unk_id == 1
    assert cfg.src_vocab_size == cfg.tgt_vocab_size == hf.config.vocab_size


def _batch(tok, texts):
    return tok(texts, padding=True, return_tensors="pt")


def test_teacher_forced_logits_match(imported):
    hf, tok, out, _ = imported
    model = load_model(out).model
    texts = ["the cat sat on the mat.", "Hello!", "Café déjà vu — naïve façade, quick brown fox."]
    enc = _batch(tok, texts)
    labels = tok(text_target=["a big red house.", "the dog ran", "hello world how are you"],
                 padding=True, return_tensors="pt")["input_ids"]
    start = torch.full((labels.shape[0], 1), hf.config.decoder_start_token_id)
    dec_in = torch.cat([start, labels[:, :-1]], 1)
    with torch.no_grad():
        theirs = hf(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                    decoder_input_ids=dec_in).logits
        ours = model(enc["input_ids"], dec_in)
    assert ours.shape == theirs.shape
    # padded decoder positions are compared too: both models mask only the source
    assert (ours - theirs).abs().max().item() <= 1e-4


@pytest.mark.parametrize("beam", [1, 4])
def test_generation_matches(imported, beam):
    hf, tok, out, _ = imported
    tr = Translator.load(out)
    texts = ["the cat sat on the mat.", "Hello, world!", "quick brown fox jumps over lazy dog", "a",
             "Café déjà vu — naïve façade.", "numbers 12345 and 3.14"]
    n = 12
    cfg = DecodeConfig(beam_size=beam, length_penalty=0.0, max_len_a=0.0, max_len_b=n, attention=False)
    enc = _batch(tok, texts)
    with torch.no_grad():
        # forced_eos_token_id=None: transformers would otherwise force </s> at the last step
        gen = hf.generate(**enc, num_beams=beam, do_sample=False, max_new_tokens=n, early_stopping=True,
                          length_penalty=0.0, forced_eos_token_id=None)
    pad, eos = hf.config.pad_token_id, hf.config.eos_token_id
    ended = 0
    for i, text in enumerate(texts):
        theirs = gen[i, 1:].tolist()
        while theirs and theirs[-1] == pad:  # generate pads finished rows; <pad> is never generated here
            theirs.pop()
        ours = tr.translate(text, cfg).target_ids
        assert ours == theirs, text
        ended += ours[-1:] == [eos]
    assert 0 < ended < len(texts)  # some hypotheses end with </s>, some are cut at the max length


def test_pytorch_bin_import_matches_safetensors(tmp_path):
    torch.set_num_threads(1)
    hf, tok = _make_hf_folder(tmp_path / "hf", tmp_path, safetensors=False)
    assert (tmp_path / "hf" / "pytorch_model.bin").is_file()
    assert not (tmp_path / "hf" / "model.safetensors").exists()
    out = import_marian(tmp_path / "hf", tmp_path / "ours")
    tr = Translator.load(out)
    text = "the cat sat on the mat."
    assert tr.source_ids(text) == tok(text)["input_ids"]
    enc = _batch(tok, [text])
    dec_in = torch.tensor([[hf.config.decoder_start_token_id, 5, 6, 7]])
    with torch.no_grad():
        theirs = hf(**enc, decoder_input_ids=dec_in).logits
        ours = tr.model(enc["input_ids"], dec_in)
    assert (ours - theirs).abs().max().item() <= 1e-4
    result = tr.translate(text, DecodeConfig(beam_size=2, max_len_b=5))
    assert isinstance(result.text, str) and result.target_ids


class _Boom:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_pickle_payload_bin_is_refused_without_running(tmp_path):
    src = tmp_path / "hf"
    _make_hf_folder(src, tmp_path, safetensors=True)
    (src / "model.safetensors").unlink()
    marker = tmp_path / "pwned"
    torch.save({"model.shared.weight": torch.zeros(2, 2), "evil": _Boom(marker)}, src / "pytorch_model.bin")
    with pytest.raises(MarianImportError, match="pytorch_model.bin: refused"):
        import_marian(src, tmp_path / "ours")
    assert not marker.exists()


def test_unsupported_flags_are_refused(tmp_path):
    src = tmp_path / "hf"
    _make_hf_folder(src, tmp_path)
    cfg = json.loads((src / "config.json").read_text())
    cfg["normalize_before"] = True
    (src / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(MarianImportError, match="normalize_before"):
        import_marian(src, tmp_path / "ours")
    cfg["normalize_before"] = False
    cfg["activation_function"] = "gelu_new"
    (src / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(MarianImportError, match="activation_function 'gelu_new' is not supported"):
        import_marian(src, tmp_path / "ours")


def test_stored_positions_must_be_sinusoids(tmp_path):
    """Older checkpoints store the fixed sinusoid tables: accepted when they are Marian's, else refused."""
    src = tmp_path / "hf"
    hf, _ = _make_hf_folder(src, tmp_path)
    from safetensors.torch import load_file, save_file

    state = load_file(str(src / "model.safetensors"))
    key = "model.encoder.embed_positions.weight"
    state[key] = hf.model.encoder.embed_positions.weight.detach().clone()
    save_file(state, str(src / "model.safetensors"), metadata={"format": "pt"})
    import_marian(src, tmp_path / "ok")
    state[key] = state[key] + 0.5
    save_file(state, str(src / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(MarianImportError, match="learned positions are not supported"):
        import_marian(src, tmp_path / "ours")


def test_cli_import_marian(imported, tmp_path, capsys):
    from nmt_desktop.cli.main import main

    _, tok, _, tmp = imported
    out = tmp_path / "cli-model"
    assert main(["import-marian", str(tmp / "hf"), "--out", str(out), "--src-lang", "xx", "--tgt-lang", "yy"]) == 0
    assert "imported" in capsys.readouterr().out
    cfg = load_model(out).config
    assert (cfg.src_lang, cfg.tgt_lang) == ("xx", "yy")
    text = "Hello, world!"
    assert Translator.load(out).source_ids(text) == tok(text)["input_ids"]
    assert main(["import-marian", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("nmt-desktop: error:") and "not a folder" in err and len(err.splitlines()) == 1


def test_separate_vocabularies(tmp_path):
    """share_encoder_decoder_embeddings false: vocab.json and target_vocab.json, two embedding matrices."""
    torch.set_num_threads(1)
    hf, tok = _make_hf_folder(tmp_path / "hf", tmp_path, shared=False, tgt_pieces=170)
    out = import_marian(tmp_path / "hf", tmp_path / "ours")
    tr = Translator.load(out)
    cfg = tr.config
    assert not cfg.shared_vocab and not tr.tokenizers.joint and cfg.tie_output
    assert (cfg.src_vocab_size, cfg.tgt_vocab_size) == (hf.config.vocab_size, hf.config.decoder_vocab_size)
    assert cfg.src_vocab_size != cfg.tgt_vocab_size
    for text in SENTENCES:
        assert tr.source_ids(text) == tok(text)["input_ids"], text
        assert tr.tokenizers.target.encode(text) + [cfg.eos_id] == tok(text_target=text)["input_ids"], text
    texts = ["the cat sat on the mat.", "Hello!", "quick brown fox"]
    enc = _batch(tok, texts)
    labels = tok(text_target=["a big red house.", "the dog ran", "hello world"], padding=True,
                 return_tensors="pt")["input_ids"]
    dec_in = torch.cat([torch.full((3, 1), cfg.decoder_start_id), labels[:, :-1]], 1)
    with torch.no_grad():
        theirs = hf(**enc, decoder_input_ids=dec_in).logits
        ours = tr.model(enc["input_ids"], dec_in)
    assert (ours - theirs).abs().max().item() <= 1e-4
    with torch.no_grad():
        gen = hf.generate(**enc, num_beams=1, do_sample=False, max_new_tokens=10, forced_eos_token_id=None)
    for i, text in enumerate(texts):
        theirs_ids = [t for t in gen[i, 1:].tolist()]
        while theirs_ids and theirs_ids[-1] == hf.config.pad_token_id:
            theirs_ids.pop()
        ours_ids = tr.translate(text, DecodeConfig(max_len_a=0.0, max_len_b=10)).target_ids
        assert ours_ids == theirs_ids, text


# -- <pad> is never generated --------------------------------------------------------------------


def test_pad_is_never_generated(tmp_path):
    """Real Marian generation configs ban <pad> (bad_words_ids); our search bans it always."""
    torch.set_num_threads(1)
    hf, tok = _make_hf_folder(tmp_path / "hf", tmp_path, pad_bias=30.0)
    tr = Translator.load(import_marian(tmp_path / "hf", tmp_path / "ours"))
    pad, texts, n = hf.config.pad_token_id, SENTENCES[:4], 8
    enc = tok(texts, padding=True, return_tensors="pt")
    with torch.no_grad():  # unbanned, <pad> is the most likely first token of every sentence
        first = hf(**enc, decoder_input_ids=torch.full((len(texts), 1), pad)).logits[:, 0].argmax(-1)
    assert first.tolist() == [pad] * len(texts)
    for beam in (1, 3):
        theirs = _hf_generate(hf, tok, texts, beam, n, bad_words_ids=[[pad]])
        cfg = DecodeConfig(beam_size=beam, length_penalty=0.0, max_len_a=0.0, max_len_b=n, attention=False)
        ours = [t.target_ids for t in tr.translate_batch(texts, cfg, whole_lines=True)]
        assert all(pad not in ids and ids for ids in ours)
        assert ours == theirs


# -- parity on real text: shared, separate and multilingual vocabularies --------------------------


def _hf_generate(hf, tok, texts, beam, n, **kwargs):
    """transformers' outputs for `texts` (start token and trailing <pad>s removed)."""
    enc = tok(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        # forced_eos_token_id=None: transformers would otherwise force </s> at the last step
        gen = hf.generate(**enc, num_beams=beam, do_sample=False, max_new_tokens=n, early_stopping=True,
                          length_penalty=0.0, forced_eos_token_id=None, **kwargs)
    pad, out = hf.config.pad_token_id, []
    for row in gen[:, 1:].tolist():
        while row and row[-1] == pad:  # generate pads finished rows; <pad> itself is never generated here
            row.pop()
        out.append(row)
    return out


def _tsv_column(path, column, n):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t")[column] for line in itertools.islice(f, n)]


@pytest.fixture(scope="module")
def real_text(shared_data):
    """(English test lines, French test lines, English and French spm training lines): Tatoeba en-fr."""
    folder = shared_data / "tatoeba" / "en-fr"
    if not (folder / "dev.tsv").is_file():
        pytest.skip(f"Tatoeba en-fr not found in {shared_data}")
    en, fr = _tsv_column(folder / "dev.tsv", 0, 300), _tsv_column(folder / "dev.tsv", 1, 300)
    train_en, train_fr = _tsv_column(folder / "train.tsv", 0, 4000), _tsv_column(folder / "train.tsv", 1, 4000)
    return en + TRICKY, fr + TRICKY, train_en, train_fr


@pytest.fixture(scope="module", params=["shared", "separate", "multilingual"])
def parity_model(request, real_text, tmp_path_factory):
    """(kind, MarianMTModel, MarianTokenizer, Translator) with .spm files trained on Tatoeba text."""
    torch.set_num_threads(1)
    kind, tmp = request.param, tmp_path_factory.mktemp(f"parity-{request.param}")
    _, _, train_en, train_fr = real_text
    spms = (_train_spm(tmp, "src", 0, 600, train_en, coverage=0.9995),  # rare characters become <unk>
            _train_spm(tmp, "tgt", 0, 700, train_fr + train_en[:500]))
    hf, tok = _make_hf_folder(tmp / "hf", tmp, shared=kind != "separate", spms=spms, max_positions=512,
                              codes=CODES if kind == "multilingual" else (), seed=3)
    tr = Translator.load(import_marian(tmp / "hf", tmp / "ours"))
    return kind, hf, tok, tr


def test_parity_token_ids(parity_model, real_text):
    kind, _, tok, tr = parity_model
    en, fr, _, _ = real_text
    eos = tr.config.eos_id
    if kind == "multilingual":
        assert tr.target_languages == list(CODES) == tok.supported_language_codes
        tr.target_language = "fra"
    sources = [_marian_source(kind, t) for t in en]
    expected = tok(sources)["input_ids"]
    assert [tr.source_ids(t) for t in en] == expected
    assert [tr.tokenizers.source.encode(t) + [eos] for t in sources] == expected
    targets = tok(text_target=fr)["input_ids"]
    assert [tr.tokenizers.target.encode(t) + [eos] for t in fr] == targets
    # decoded text agrees up to the spaces left around a skipped <unk>
    assert _spaced(tr.tokenizers.target.decode(ids) for ids in targets) == _spaced(
        tok.batch_decode(targets, skip_special_tokens=True))
    every = list(range(tr.config.tgt_vocab_size))
    assert tr.target_pieces(every) == tok.convert_ids_to_tokens(every)


def _spaced(texts):
    return [" ".join(t.split()) for t in texts]


@pytest.mark.parametrize("parity_model", ["multilingual"], indirect=True)
def test_multilingual_codes_as_marian_reads_them(parity_model, real_text):
    _, _, tok, tr = parity_model
    tr.target_language = "fra"
    for text in real_text[0][:20] + TRICKY:
        for source in (f">>spa<< {text}", f">>por<<{text}", f">>xyz<< {text}"):  # a code of the text's own wins
            assert tr.source_ids(source) == tok(source)["input_ids"], source
    assert tr.source_pieces(tr.source_ids("Hello."))[0] == ">>fra<<"
    with pytest.raises(TargetLanguageError, match="fra, spa, por, ita"):
        tr.target_language = "deu"


@pytest.mark.parametrize("parity_model", ["shared"], indirect=True)
def test_unknown_runs_are_looked_up_whole(parity_model):
    """A run of characters the source .spm lacks is one unknown piece, which MarianTokenizer maps
    through vocab.json by its surface: the target side's piece when the run is one, else <unk>."""
    _, _, tok, tr = parity_model

    def chars(sp):
        return {c for i in range(sp.get_piece_size()) if not (sp.is_unknown(i) or sp.is_control(i))
                for c in sp.id_to_piece(i)}

    other = sorted(c for c in chars(tok.spm_target) - chars(tok.spm_source) if c in tok.get_vocab())[:4]
    assert other, "the target .spm should have characters the source .spm lacks"
    for c in other:
        for text in (c, f"a {c} b", f"{c}{c}", f"x{c}y", f"{c}😀", f"{c} {c}"):
            assert tr.source_ids(text) == tok(text)["input_ids"], text
        assert tok(c)["input_ids"][-2] == tok.get_vocab()[c]  # the single character: the target side's id


def _marian_source(kind, text):
    return f">>fra<< {text}" if kind == "multilingual" else text


@pytest.mark.parametrize("beam", [1, 4])
def test_parity_generation(parity_model, real_text, beam):
    kind, hf, tok, tr = parity_model
    texts = [t for t in real_text[0] if t.strip()]  # our Translator gives "" for a blank input
    if kind == "multilingual":
        tr.target_language = "fra"
    n = 12
    theirs = _hf_generate(hf, tok, [_marian_source(kind, t) for t in texts], beam, n)
    cfg = DecodeConfig(beam_size=beam, length_penalty=0.0, max_len_a=0.0, max_len_b=n, attention=False)
    ours = [t.target_ids for t in tr.translate_batch(texts, cfg, batch_size=64, whole_lines=True)]
    differ = [(t, a, b) for t, a, b in zip(texts, ours, theirs) if a != b]
    assert not differ, f"{len(differ)} of {len(texts)} differ, e.g. {differ[0]}"
    ended = sum(ids[-1:] == [tr.config.eos_id] for ids in ours)
    assert 0 < ended < len(texts)  # some hypotheses end with </s>, some are cut at the max length


# -- the command line: translate --target-lang, info ----------------------------------------------


@pytest.fixture(scope="module")
def multilingual_dir(tmp_path_factory):
    """A small imported multilingual model (vocab.json with CODES)."""
    torch.set_num_threads(1)
    tmp = tmp_path_factory.mktemp("multilingual")
    _make_hf_folder(tmp / "hf", tmp, codes=CODES)
    return import_marian(tmp / "hf", tmp / "ours", src_lang="en", tgt_lang="spa")


def test_cli_translate_target_lang(multilingual_dir, capsys):
    from nmt_desktop.cli.main import main

    text = "the cat sat on the mat."
    expected = Translator.load(multilingual_dir, target_language="spa").translate(text)
    for code in ("spa", ">>spa<<"):
        assert main(["translate", "-m", str(multilingual_dir), "--target-lang", code, text]) == 0
        assert capsys.readouterr().out == expected.text + "\n"
    assert main(["translate", "-m", str(multilingual_dir), "--target-lang", "fra", "--json", text]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source_tokens"][0] == ">>fra<<" and out["source_tokens"][1:] == expected.source_tokens[1:]


@pytest.mark.parametrize("code, message", [("deu", "unknown target language 'deu' (this model's target languages: "
                                                    "fra, spa, por, ita)"),
                                           ("", "unknown target language ''")])
def test_cli_target_lang_unknown_code(multilingual_dir, capsys, code, message):
    from nmt_desktop.cli.main import main

    assert main(["translate", "-m", str(multilingual_dir), "--target-lang", code, "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("nmt-desktop: error: --target-lang: ") and message in err and len(err.splitlines()) == 1


def test_cli_target_lang_needs_a_multilingual_model(imported, capsys):
    from nmt_desktop.cli.main import main

    assert main(["translate", "-m", str(imported[2]), "--target-lang", "fra", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert "not multilingual" in err and len(err.splitlines()) == 1


def test_cli_info_lists_target_languages(multilingual_dir, imported, capsys):
    from nmt_desktop.cli.main import main

    assert main(["info", "-m", str(multilingual_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target_languages"] == list(CODES)
    assert main(["info", "-m", str(multilingual_dir)]) == 0
    assert "targets:     4, chosen with translate --target-lang: fra, spa, por, ita" in capsys.readouterr().out
    assert main(["info", "-m", str(imported[2]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target_languages"] == []
    assert main(["info", "-m", str(imported[2])]) == 0
    assert "targets:" not in capsys.readouterr().out
