"""int8 weight storage in model folders (`save_model(..., dtype=torch.int8)`, core/formats/model_folder.py).

Every 2-D weight NAME is stored as I8 plus NAME.scale (F32, one scale per row); 1-D tensors stay
F32. Round trips (folder, shards, zip), the size gain, and every refusal of a malformed int8 folder.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
import tokenizers
import torch
from safetensors.torch import load_file, save_file

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.formats.model_folder_layout import WEIGHTS_FILE, WEIGHTS_INDEX, ModelFolderError
from nmt_desktop.core.formats.model_folder import load_model, model_size_bytes, save_model, zip_model
from nmt_desktop.core.tokenizer import Tokenizer, TokenizerPair
from nmt_desktop.core.model.transformer import Transformer, build_model

SRC = ["the cat sat on the mat", "a dog ran in the park", "hello world, how are you today?",
       "we are reading a long book about ships", "she drinks coffee with milk"]
TGT = ["le chat est assis sur le tapis", "un chien courait dans le parc", "bonjour le monde, comment vas-tu ?",
       "nous lisons un long livre sur les bateaux", "elle boit du café au lait"]
SMALL = dict(d_model=32, n_heads=4, encoder_layers=1, decoder_layers=1, ffn_dim=64, max_positions=64)


@pytest.fixture(scope="module")
def joint() -> tuple[Transformer, TokenizerPair]:
    pair = TokenizerPair.train(SRC * 5, TGT * 5, vocab_size=300, joint=True)
    v = pair.source.vocab_size
    model = build_model(ModelConfig(src_vocab_size=v, tgt_vocab_size=v, final_logits_bias=True, **SMALL),
                        seed=0).eval()
    with torch.no_grad():
        model.logits_bias.uniform_(-1, 1)
        model.tgt_embed.weight[5].zero_()  # an all-zero row: scale 0
    return model, pair


@pytest.fixture(scope="module")
def separate() -> tuple[Transformer, TokenizerPair]:
    """Separate vocabularies, untied output projection (its own 2-D weight), pre-norm."""
    src, tgt = Tokenizer.train(SRC * 5, vocab_size=280), Tokenizer.train(TGT * 5, vocab_size=310)
    config = ModelConfig(src_vocab_size=src.vocab_size, tgt_vocab_size=tgt.vocab_size, shared_vocab=False,
                         tie_output=False, norm="pre", final_logits_bias=True, **SMALL)
    return build_model(config, seed=1).eval(), TokenizerPair(src, tgt, joint=False)


@pytest.fixture(scope="module")
def saved(tmp_path_factory, joint) -> Path:
    return save_model(tmp_path_factory.mktemp("i8") / "int8", *joint, dtype=torch.int8)


@pytest.fixture
def folder(tmp_path, saved) -> Path:
    return Path(shutil.copytree(saved, tmp_path / "model"))


def header(path: Path) -> dict:
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return {k: v for k, v in json.loads(data[8:8 + n]).items() if k != "__metadata__"}


def expect_error(path: Path, file: str, *words: str) -> None:
    with pytest.raises(ModelFolderError) as info:
        load_model(path)
    message = str(info.value)
    assert "\n" not in message and message.endswith(".") and message.count(". ") == 0, message
    assert file in message.split(": ", 1)[0], message
    for word in words:
        assert word.lower() in message.lower(), (word, message)


def check_round_trip(model: Transformer, folder: Path) -> None:
    """Loaded weights: 1-D tensors exact, 2-D ones within half a step of their row's scale."""
    stored = {}
    for f in [folder / WEIGHTS_FILE] if (folder / WEIGHTS_FILE).exists() else sorted(folder.glob("model-*")):
        stored.update(load_file(f))
    loaded = load_model(folder).model.state_dict()
    original = model.state_dict()
    assert list(loaded) == list(original)
    for name, value in original.items():
        got = loaded[name]
        assert got.dtype == torch.float32
        if value.dim() == 1:
            assert torch.equal(got, value), name
            continue
        scale = stored[name + ".scale"]
        assert torch.allclose(scale, value.abs().amax(dim=1) / 127)
        err = (got - value).abs().amax(dim=1)
        assert bool((err <= scale / 2 * (1 + 1e-5) + 1e-12).all()), name
        assert torch.equal(got, stored[name].float() * scale[:, None]), name


def test_int8_layout_and_round_trip(saved, joint):
    model, pair = joint
    h = header(saved / WEIGHTS_FILE)
    state = model.state_dict()
    matrices = [k for k, v in state.items() if v.dim() == 2]
    assert "tgt_embed.weight" in matrices and len(matrices) > 5
    for name, value in state.items():
        if value.dim() == 2:
            assert h[name] == {**h[name], "dtype": "I8", "shape": list(value.shape)}
            assert h[name + ".scale"]["dtype"] == "F32" and h[name + ".scale"]["shape"] == [value.shape[0]]
        else:
            assert h[name]["dtype"] == "F32"
    assert set(h) == set(state) | {k + ".scale" for k in matrices}
    check_round_trip(model, saved)
    loaded = load_model(saved).model
    assert bool((loaded.tgt_embed.weight[5] == 0).all())  # the all-zero row stays zero
    assert model.tgt_embed.weight.dtype == torch.float32  # saving does not change the model
    src = torch.tensor([pair.source.encode(s)[:20] + [model.config.eos_id] for s in SRC[:1]])
    tgt = torch.tensor([[model.config.decoder_start_id] + pair.target.encode(TGT[0])[:20]])
    with torch.no_grad():
        expected, got = model(src, tgt), loaded(src, tgt)
    assert float((got - expected).abs().max()) <= 0.05 * max(1.0, float(expected.abs().max()))


def test_int8_separate_vocabularies_untied_output(tmp_path, separate):
    model, pair = separate
    folder = save_model(tmp_path / "sep", model, pair, dtype=torch.int8)
    assert header(folder / WEIGHTS_FILE)["out_proj.weight"]["dtype"] == "I8"
    check_round_trip(model, folder)


def test_int8_sharded_and_zipped(tmp_path, joint, saved):
    model, pair = joint
    limit = 12_000
    folder = save_model(tmp_path / "sharded", model, pair, dtype=torch.int8, max_shard_bytes=limit)
    shards = sorted(folder.glob("model-*-of-*.safetensors"))
    assert len(shards) >= 3 and all(s.stat().st_size <= limit for s in shards)
    index = json.loads((folder / WEIGHTS_INDEX).read_text())
    assert "tgt_embed.weight.scale" in index["weight_map"]
    check_round_trip(model, folder)
    reference = load_model(saved).model.state_dict()
    for path in (folder, zip_model(folder, tmp_path / "sharded.zip"), zip_model(saved, tmp_path / "one.zip")):
        got = load_model(path).model.state_dict()
        assert all(torch.equal(got[k], reference[k]) for k in reference)


def test_int8_scale_in_another_shard(tmp_path, joint, saved):
    """A weight and its scales may be split over shards, in either order."""
    tensors = load_file(saved / WEIGHTS_FILE)
    first = {k: v for k, v in tensors.items() if k != "tgt_embed.weight"}
    second = {"tgt_embed.weight": tensors["tgt_embed.weight"]}
    folder = Path(shutil.copytree(saved, tmp_path / "split"))
    (folder / WEIGHTS_FILE).unlink()
    save_file(first, folder / "model-00001-of-00002.safetensors")
    save_file(second, folder / "model-00002-of-00002.safetensors")
    weight_map = {**dict.fromkeys(first, "model-00001-of-00002.safetensors"),
                  **dict.fromkeys(second, "model-00002-of-00002.safetensors")}
    (folder / WEIGHTS_INDEX).write_text(json.dumps({"weight_map": weight_map}))
    reference = load_model(saved).model.state_dict()
    got = load_model(folder).model.state_dict()
    assert all(torch.equal(got[k], reference[k]) for k in reference)


def test_int8_folder_under_half_the_float32_size_with_a_large_vocabulary(tmp_path):
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3}
    vocab.update({f"w{i}": i for i in range(4, 20_000)})
    hf = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab=vocab, unk_token="<unk>"))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok = Tokenizer(hf)
    pair = TokenizerPair(tok, tok, joint=True)
    config = ModelConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), final_logits_bias=True,
                         d_model=64, n_heads=4, encoder_layers=2, decoder_layers=2, ffn_dim=256, max_positions=64)
    model = build_model(config, seed=0).eval()
    full = model_size_bytes(save_model(tmp_path / "f32", model, pair))
    small = model_size_bytes(save_model(tmp_path / "i8", model, pair, dtype=torch.int8))
    assert small / full < 0.5, (small, full)
    weights = (tmp_path / "i8" / WEIGHTS_FILE).stat().st_size / (tmp_path / "f32" / WEIGHTS_FILE).stat().st_size
    assert weights < 0.3
    assert load_model(tmp_path / "i8").config == config


def test_save_int8_refuses_non_finite_weights(tmp_path, joint):
    model, pair = joint
    bad = build_model(model.config, seed=0)
    with torch.no_grad():
        bad.encoder_layers[0].ffn.fc1.weight[0, 0] = float("inf")
    with pytest.raises(ValueError, match="non-finite"):
        save_model(tmp_path / "bad", bad, pair, dtype=torch.int8)
    assert not (tmp_path / "bad").exists()


# -- refusals -------------------------------------------------------------------------------------

NAME = "encoder_layers.0.ffn.fc1.weight"  # (64, 32)


def edit(folder: Path, change) -> None:
    tensors = load_file(folder / WEIGHTS_FILE)
    change(tensors)
    save_file(tensors, folder / WEIGHTS_FILE)


def test_int8_without_scale_refused(folder):
    edit(folder, lambda t: t.pop(NAME + ".scale"))
    expect_error(folder, WEIGHTS_FILE, NAME, "I8", "scale", "missing")


@pytest.mark.parametrize("scale, words", [
    (torch.ones(32), ("F32", "shape [32]", "[64]")),
    (torch.ones(64, 1), ("shape [64, 1]", "[64]")),
    (torch.ones(()), ("shape []", "[64]")),
    (torch.ones(64, dtype=torch.float16), ("dtype F16", "F32")),
    (torch.ones(64, dtype=torch.int8), ("dtype I8", "F32")),
])
def test_int8_scale_of_wrong_shape_or_dtype_refused(folder, scale, words):
    edit(folder, lambda t: t.__setitem__(NAME + ".scale", scale))
    expect_error(folder, WEIGHTS_FILE, NAME + ".scale", *words)


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan"), -0.5])
def test_int8_non_finite_or_negative_scale_refused(folder, bad):
    def change(t):
        t[NAME + ".scale"] = t[NAME + ".scale"].clone()
        t[NAME + ".scale"][3] = bad
    edit(folder, change)
    expect_error(folder, WEIGHTS_FILE, NAME + ".scale", "finite")


@pytest.mark.parametrize("name", ["logits_bias", "encoder_layers.0.ffn.fc1.bias", "encoder_layers.0.attn_res.norm.weight"])
@pytest.mark.parametrize("with_scale", [False, True])
def test_int8_for_a_1d_tensor_refused(folder, name, with_scale):
    def change(t):
        n = t[name].shape[0]
        t[name] = torch.ones(n, dtype=torch.int8)
        if with_scale:
            t[name + ".scale"] = torch.ones(n)
    edit(folder, change)
    expect_error(folder, WEIGHTS_FILE, name, "I8", "2-D")


def test_scale_for_a_float_weight_refused(folder):
    def change(t):
        t[NAME] = t[NAME].float()  # a float weight keeps no scale
    edit(folder, change)
    expect_error(folder, WEIGHTS_FILE, NAME + ".scale", "does not imply")


def test_stray_scale_tensor_refused(folder):
    edit(folder, lambda t: t.__setitem__("no_such.weight.scale", torch.ones(4)))
    expect_error(folder, WEIGHTS_FILE, "no_such.weight.scale", "does not imply")


def test_int8_matrix_of_wrong_shape_refused(folder):
    edit(folder, lambda t: t.__setitem__(NAME, torch.zeros(32, 64, dtype=torch.int8)))
    expect_error(folder, WEIGHTS_FILE, NAME, "shape [32, 64]", "[64, 32]")


def test_other_integer_dtypes_still_refused(folder):
    edit(folder, lambda t: t.__setitem__(NAME, torch.zeros(64, 32, dtype=torch.int16)))
    expect_error(folder, WEIGHTS_FILE, NAME, "dtype I16")
    edit(folder, lambda t: t.__setitem__(NAME, torch.zeros(64, 32, dtype=torch.uint8)))
    expect_error(folder, WEIGHTS_FILE, NAME, "dtype U8")


def test_int8_refusal_in_a_zip(tmp_path, folder):
    edit(folder, lambda t: t.pop(NAME + ".scale"))
    expect_error(zip_model(folder, tmp_path / "bad.zip"), WEIGHTS_FILE, NAME, "scale", "missing")
