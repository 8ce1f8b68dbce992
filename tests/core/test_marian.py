"""Importing a Hugging Face MarianMT folder (core/marian.py) against transformers itself.

A random-weight MarianMTModel with freshly trained unigram SentencePiece models (no download) is
imported; ids, teacher-forced logits, greedy and beam outputs must match transformers exactly.

Beam search: nmt-desktop normalises scores with GNMT's ((5 + len) / 6) ** alpha, transformers with
len ** alpha, so both run with no length penalty (alpha 0 / length_penalty=0.0) and transformers'
early_stopping=True, which is nmt-desktop's rule (a sentence is done with beam_size finished
hypotheses; only </s> ranked within the beam finishes one).
"""

from __future__ import annotations

import json
import os
import random

import pytest
import torch

try:
    import sentencepiece as spm
    import transformers
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer
except ImportError:  # pragma: no cover - depends on the environment
    pytest.skip("needs transformers and sentencepiece (pip install -e .[dev-marian])", allow_module_level=True)

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.marian import MarianImportError, import_marian
from nmt_desktop.core.model_dir import load_model
from nmt_desktop.core.translator import Translator

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

WORDS = ("the cat dog bird sat ran on under mat house tree big small red green blue hello world how are "
         "you café déjà vu naïve façade quick brown fox jumps over lazy numbers and tabs spaces text "
         "maybe quoted birds dogs cats").split()


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


def _train_spm(tmp_path, name, seed, vocab_size=200):
    corpus = tmp_path / f"{name}.txt"
    _corpus(corpus, seed)
    prefix = tmp_path / name
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), model_type="unigram",
                                   vocab_size=vocab_size, character_coverage=1.0, num_threads=1,
                                   minloglevel=2)
    return prefix.with_suffix(".model")


def _vocab_of(*models, pad_last=True):
    """MarianTokenizer's vocab.json layout: </s> 0, <unk> 1, the pieces, <pad> last (or at 2)."""
    vocab = {"</s>": 0, "<unk>": 1} if pad_last else {"</s>": 0, "<unk>": 1, "<pad>": 2}
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
                    tgt_pieces=200):
    folder.mkdir(parents=True)
    src_model = _train_spm(tmp_path, "src", 1)
    tgt_model = _train_spm(tmp_path, "tgt", 2, tgt_pieces)
    (folder / "source.spm").write_bytes(src_model.read_bytes())
    (folder / "target.spm").write_bytes(tgt_model.read_bytes())
    if shared:
        vocab = tgt_vocab = _vocab_of(src_model, tgt_model)
    else:  # one id space per side; <pad> must have one id in both
        vocab, tgt_vocab = _vocab_of(src_model, pad_last=False), _vocab_of(tgt_model, pad_last=False)
        (folder / "target_vocab.json").write_text(json.dumps(tgt_vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    V, VT, PAD = len(vocab), len(tgt_vocab), vocab["<pad>"]
    cfg = MarianConfig(vocab_size=V, decoder_vocab_size=VT, d_model=32, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                       decoder_ffn_dim=64, max_position_embeddings=64, pad_token_id=PAD, eos_token_id=0,
                       decoder_start_token_id=PAD, forced_eos_token_id=0, scale_embedding=True,
                       activation_function="swish", dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                       share_encoder_decoder_embeddings=shared)
    torch.manual_seed(seed)
    model = MarianMTModel(cfg).eval()
    with torch.no_grad():
        # Marian's init (std 0.02) makes a random model ignore its source; larger weights make the
        # outputs depend on it. A visible final_logits_bias, </s> likely enough to end some
        # hypotheses, and <pad> never chosen (real Marian generation configs ban it).
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
        model.final_logits_bias[0, PAD] = -30.0
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
    from nmt_desktop.cli import main

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
