"""Model folders (nmt_desktop.core.formats.model_folder): round trips, every validation failure, hostile files."""

from __future__ import annotations

import ast
import json
import pickle
import shutil
import struct
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from model_bytes import Payload, folder_members, raw_safetensors
from model_bytes import write_zip as zip_members

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.formats import model_folder, model_folder_layout, model_folder_reader, safetensors_header, weights
from nmt_desktop.core.formats.model_folder_layout import (CARD_FILE, CONFIG_FILE, MAX_JSON_BYTES, WEIGHTS_FILE, WEIGHTS_INDEX,
                                                   ModelFolderError)
from nmt_desktop.core.formats.model_folder import (LoadedModel, load_model, model_size_bytes, read_config, save_model,
                                                zip_model)
from nmt_desktop.core.tokenizer import Tokenizer, TokenizerPair
from nmt_desktop.core.model.transformer import Transformer, build_model
from limits import measured_work

SRC = [
    "the cat sat on the mat", "a dog ran in the park", "hello world, how are you today?",
    "the weather is nice and warm", "we are reading a long book about ships",
    "my brother plays the piano every evening", "she drinks coffee with milk",
]
TGT = [
    "le chat est assis sur le tapis", "un chien courait dans le parc", "bonjour le monde, comment vas-tu ?",
    "il fait beau et chaud", "nous lisons un long livre sur les bateaux",
    "mon frère joue du piano tous les soirs", "elle boit du café au lait",
]
SMALL = dict(d_model=32, n_heads=4, encoder_layers=1, decoder_layers=1, ffn_dim=64, max_positions=64)


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def md_joint() -> tuple[Transformer, TokenizerPair]:
    """A tiny model with one joint vocabulary whose size is the config's vocabulary size."""
    pair = TokenizerPair.train(SRC * 5, TGT * 5, vocab_size=300, joint=True)
    v = pair.source.vocab_size
    model = build_model(ModelConfig(src_vocab_size=v, tgt_vocab_size=v, **SMALL), seed=0).eval()
    return model, pair


@pytest.fixture(scope="module")
def md_separate() -> tuple[Transformer, TokenizerPair]:
    """Separate source/target vocabularies of different sizes, untied output, pre-norm, logits bias."""
    src, tgt = Tokenizer.train(SRC * 5, vocab_size=280), Tokenizer.train(TGT * 5, vocab_size=310)
    assert src.vocab_size != tgt.vocab_size
    config = ModelConfig(src_vocab_size=src.vocab_size, tgt_vocab_size=tgt.vocab_size, shared_vocab=False,
                         tie_output=False, norm="pre", final_logits_bias=True, **SMALL)
    model = build_model(config, seed=1).eval()
    with torch.no_grad():
        model.logits_bias.uniform_(-1, 1)  # not all zeros, so the round trip shows it
    return model, TokenizerPair(src, tgt, joint=False)


@pytest.fixture(scope="module")
def md_saved(tmp_path_factory, md_joint) -> Path:
    """A saved joint-vocabulary model folder; copy it (md_folder) before changing anything."""
    model, pair = md_joint
    return save_model(tmp_path_factory.mktemp("md") / "tiny-en-fr", model, pair, card={"title": "tiny", "bleu": 1.5})


@pytest.fixture
def md_folder(tmp_path, md_saved) -> Path:
    return Path(shutil.copytree(md_saved, tmp_path / "model"))


# -- helpers ------------------------------------------------------------------------------------


def batch(pair: TokenizerPair, config: ModelConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """A right-padded (src, tgt_in) batch of the corpus."""
    def pad(rows: list[list[int]]) -> torch.Tensor:
        width = max(map(len, rows))
        return torch.tensor([r + [config.pad_id] * (width - len(r)) for r in rows])

    src = pad([pair.source.encode(s)[:40] + [config.eos_id] for s in SRC])
    tgt = pad([[config.decoder_start_id] + pair.target.encode(t)[:40] for t in TGT])
    return src, tgt


def logits(model: Transformer, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(src, tgt)


def assert_same_model(loaded: LoadedModel, model: Transformer, pair: TokenizerPair, exact: bool = True) -> None:
    assert loaded.config == model.config
    assert not loaded.model.training
    original = model.state_dict()
    reloaded = loaded.model.state_dict()
    assert list(reloaded) == list(original)
    for name, value in reloaded.items():
        assert value.dtype == torch.float32
        if exact:
            assert torch.equal(value, original[name]), name
    src, tgt = batch(pair, model.config)
    expected, got = logits(model, src, tgt), logits(loaded.model, src, tgt)
    if exact:
        assert torch.equal(got, expected)
    else:
        # half precision keeps ~3 significant digits: compare relative to the logits' scale
        assert float((got - expected).abs().max()) <= 1e-2 * max(1.0, float(expected.abs().max()))
    assert loaded.tokenizers.joint == pair.joint
    for side in ("source", "target"):
        ours, theirs = getattr(loaded.tokenizers, side), getattr(pair, side)
        assert ours.vocab_size == theirs.vocab_size
        assert [ours.encode(t) for t in SRC + TGT] == [theirs.encode(t) for t in SRC + TGT]


def expect_error(path: Path, file: str, *words: str, call=load_model) -> ModelFolderError:
    """`call(path)` raises ModelFolderError: one line, one sentence, naming `file` and the `words`."""
    with pytest.raises(ModelFolderError) as info:
        call(path)
    return check_message(info.value, file, *words)


def check_message(err: ModelFolderError, file: str, *words: str) -> ModelFolderError:
    message = str(err)
    assert "\n" not in message and "\r" not in message, message
    assert message.endswith("."), message
    assert message.count(". ") == 0 or "..." in message, message  # one sentence
    assert file in message.split(": ", 1)[0], message  # the file is named first
    for word in words:
        assert word.lower() in message.lower(), (word, message)
    return err


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def edit_config(folder: Path, **changes) -> None:
    data = json.loads((folder / CONFIG_FILE).read_text())
    data.update(changes)
    write_json(folder / CONFIG_FILE, data)


def state_dict(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file
    return load_file(folder / WEIGHTS_FILE)


# -- round trips --------------------------------------------------------------------------------


def test_folder_round_trip_joint_vocabulary(md_saved, md_joint):
    model, pair = md_joint
    assert sorted(p.name for p in md_saved.iterdir()) == [CARD_FILE, CONFIG_FILE, WEIGHTS_FILE, "tokenizer.json"]
    loaded = load_model(md_saved)
    assert loaded.path == md_saved and loaded.name == "tiny-en-fr"
    assert loaded.card == {"title": "tiny", "bleu": 1.5}
    assert_same_model(loaded, model, pair)
    # config.json is ModelConfig.to_json(); card.json is pretty JSON with sorted keys
    assert (md_saved / CONFIG_FILE).read_text() == model.config.to_json()
    assert (md_saved / CARD_FILE).read_text() == json.dumps(loaded.card, indent=2, sort_keys=True) + "\n"
    with safe_open(str(md_saved / WEIGHTS_FILE), framework="pt") as f:
        assert f.metadata() == {"format": "pt"}


def test_folder_round_trip_separate_vocabularies(tmp_path, md_separate):
    model, pair = md_separate
    folder = save_model(tmp_path / "sep", model, pair)
    assert sorted(p.name for p in folder.iterdir()) == [
        CONFIG_FILE, WEIGHTS_FILE, "source.tokenizer.json", "target.tokenizer.json"]
    loaded = load_model(folder)
    assert loaded.card == {}
    assert_same_model(loaded, model, pair)
    assert loaded.config.src_vocab_size != loaded.config.tgt_vocab_size


def test_save_overwrites_and_removes_stale_files(tmp_path, md_joint, md_separate):
    folder = save_model(tmp_path / "m", *md_joint, card={"v": 1})
    save_model(folder, *md_separate)  # other vocabulary layout, no card
    assert sorted(p.name for p in folder.iterdir()) == [
        CONFIG_FILE, WEIGHTS_FILE, "source.tokenizer.json", "target.tokenizer.json"]
    assert_same_model(load_model(folder), *md_separate)
    save_model(folder, *md_joint, card={"v": 2})
    loaded = load_model(folder)
    assert loaded.card == {"v": 2}
    assert_same_model(loaded, *md_joint)
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_save_refuses_bad_arguments(tmp_path, md_joint, md_separate):
    model, pair = md_joint
    with pytest.raises(ValueError, match="vocabulary has"):
        save_model(tmp_path / "a", model, md_separate[1])
    with pytest.raises(ValueError, match="card"):
        save_model(tmp_path / "b", model, pair, card=["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="int8, not torch.int16"):
        save_model(tmp_path / "c", model, pair, dtype=torch.int16)
    with pytest.raises(ValueError, match="max_shard_bytes"):
        save_model(tmp_path / "d", model, pair, max_shard_bytes=1000)  # smaller than one tensor
    assert not (tmp_path / "d").exists()  # refused before anything was written
    big = build_model(model.config, seed=0)
    with torch.no_grad():
        big.tgt_embed.weight[0, 0] = 1e6  # beyond float16
    with pytest.raises(ValueError, match="range"):
        save_model(tmp_path / "e", big, pair, dtype=torch.float16)


def test_zip_round_trip_files_at_root(tmp_path, md_saved, md_joint):
    zip_path = zip_model(md_saved, tmp_path / "tiny.zip")
    with zipfile.ZipFile(zip_path) as zf:
        assert sorted(zf.namelist()) == sorted(p.name for p in md_saved.iterdir())
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zf.infolist())
    loaded = load_model(zip_path)
    assert loaded.path == zip_path and loaded.name == "tiny"
    assert loaded.card == {"title": "tiny", "bleu": 1.5}
    assert_same_model(loaded, *md_joint)


def test_zip_round_trip_single_top_level_folder(tmp_path, md_saved, md_separate):
    folder = save_model(tmp_path / "sep", *md_separate)
    members = {f"sep/{name}": data for name, data in folder_members(folder).items()}
    members["sep/"] = b""
    members["__MACOSX/sep/._config.json"] = b"junk"  # Finder's extra folder is ignored
    zip_path = zip_members(tmp_path / "Separate Model.zip", members)
    loaded = load_model(zip_path)
    assert loaded.name == "Separate Model"
    assert_same_model(loaded, *md_separate)
    assert read_config(zip_path) == md_separate[0].config


def test_read_config_and_size(tmp_path, md_saved, md_joint):
    assert read_config(md_saved) == md_joint[0].config
    zip_path = zip_model(md_saved, tmp_path / "m.zip")
    assert read_config(zip_path) == md_joint[0].config
    assert model_size_bytes(md_saved) == sum(p.stat().st_size for p in md_saved.iterdir())
    assert model_size_bytes(zip_path) == zip_path.stat().st_size
    expect_error(tmp_path / "nope", "nope", "not found", call=model_size_bytes)


@pytest.mark.parametrize("dtype, code", [(torch.float16, "F16"), (torch.bfloat16, "BF16")])
def test_half_precision_storage(tmp_path, md_saved, md_joint, dtype, code):
    model, pair = md_joint
    folder = save_model(tmp_path / "half", model, pair, dtype=dtype)
    full, half = (md_saved / WEIGHTS_FILE).stat().st_size, (folder / WEIGHTS_FILE).stat().st_size
    assert 0.45 < half / full < 0.55
    header = json.loads((folder / WEIGHTS_FILE).read_bytes()[8:8 + struct.unpack("<Q", (folder / WEIGHTS_FILE).read_bytes()[:8])[0]])
    assert {v["dtype"] for k, v in header.items() if k != "__metadata__"} == {code}
    loaded = load_model(folder)
    assert_same_model(loaded, model, pair, exact=False)
    for name, value in loaded.model.state_dict().items():
        assert torch.equal(value, model.state_dict()[name].to(dtype).float())
    assert model.tgt_embed.weight.dtype == torch.float32  # saving does not change the model


def test_sharded_save_and_load(tmp_path, md_joint):
    model, pair = md_joint
    limit = 40_000
    folder = save_model(tmp_path / "sharded", model, pair, max_shard_bytes=limit)
    shards = sorted(folder.glob("model-*-of-*.safetensors"))
    assert len(shards) >= 3
    assert [s.name for s in shards] == [f"model-{i:05d}-of-{len(shards):05d}.safetensors" for i in range(1, len(shards) + 1)]
    assert all(s.stat().st_size <= limit for s in shards)
    assert not (folder / WEIGHTS_FILE).exists()
    index = json.loads((folder / WEIGHTS_INDEX).read_text())
    assert set(index["weight_map"]) == set(model.state_dict())
    assert set(index["weight_map"].values()) == {s.name for s in shards}
    assert index["metadata"]["total_size"] == sum(t.numel() * 4 for t in model.state_dict().values())
    assert_same_model(load_model(folder), model, pair)
    assert_same_model(load_model(zip_model(folder, tmp_path / "sharded.zip")), model, pair)

    # Saving again unsharded (or with fewer shards) removes the old shards and index.
    save_model(folder, model, pair, dtype=torch.float16, max_shard_bytes=limit)
    assert 1 < len(list(folder.glob("model-*-of-*.safetensors"))) < len(shards)
    assert_same_model(load_model(folder), model, pair, exact=False)
    save_model(folder, model, pair)
    assert sorted(p.name for p in folder.iterdir()) == [CONFIG_FILE, WEIGHTS_FILE, "tokenizer.json"]
    # A limit that holds everything writes a single file.
    save_model(folder, model, pair, max_shard_bytes=10**9)
    assert not (folder / WEIGHTS_INDEX).exists()


# -- the error type -----------------------------------------------------------------------------


def test_error_is_one_sentence_and_picklable():
    err = ModelFolderError("config.json", "line one\nline two.")
    assert str(err) == "config.json: line one line two."
    assert (err.file, err.problem) == ("config.json", "line one line two")
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is ModelFolderError and str(again) == str(err)


# -- missing files and bad paths ----------------------------------------------------------------


@pytest.mark.parametrize("name", [CONFIG_FILE, WEIGHTS_FILE, "tokenizer.json"])
def test_missing_file_in_folder(md_folder, name):
    (md_folder / name).unlink()
    err = expect_error(md_folder, name, "file not found", "must contain", "config.json", "model.safetensors",
                       "tokenizer.json")
    assert str(md_folder / name) in str(err)


def test_missing_target_tokenizer(tmp_path, md_separate):
    folder = save_model(tmp_path / "sep", *md_separate)
    (folder / "target.tokenizer.json").unlink()
    expect_error(folder, "target.tokenizer.json", "file not found")


@pytest.mark.parametrize("name", [CONFIG_FILE, WEIGHTS_FILE, "tokenizer.json"])
def test_missing_file_in_zip(tmp_path, md_saved, name):
    members = folder_members(md_saved)
    del members[name]
    zip_path = zip_members(tmp_path / "m.zip", members)
    expect_error(zip_path, "m.zip", name, "not found", "must contain")


def test_read_config_missing(md_folder):
    (md_folder / CONFIG_FILE).unlink()
    expect_error(md_folder, CONFIG_FILE, "file not found", call=read_config)


def test_path_neither_folder_nor_zip(tmp_path):
    expect_error(tmp_path / "missing", "missing", "not found", "model folder")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    expect_error(text, "notes.txt", "neither a model folder nor a .zip")
    expect_error(text, "notes.txt", "neither", call=read_config)


def test_file_that_is_not_a_valid_zip(tmp_path, md_saved):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"this is not a zip archive at all")
    expect_error(bad, "bad.zip", "not a valid zip file")
    good = zip_model(md_saved, tmp_path / "good.zip").read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(good[: len(good) // 2])
    expect_error(cut, "cut.zip", "not a valid zip file")


def test_zip_with_several_model_folders(tmp_path, md_saved):
    members = {f"{top}/{name}": data for top in ("a", "b") for name, data in folder_members(md_saved).items()}
    expect_error(zip_members(tmp_path / "two.zip", members), "two.zip", "several model folders")


# -- config.json and card.json ------------------------------------------------------------------


def test_config_not_valid_json(md_folder):
    (md_folder / CONFIG_FILE).write_text('{\n  "d_model": 32,\n  oops\n}\n')
    expect_error(md_folder, CONFIG_FILE, "not valid JSON", "line 3, column 3")
    expect_error(md_folder, CONFIG_FILE, "not valid JSON", call=read_config)


def test_config_not_utf8_or_nan(md_folder):
    (md_folder / CONFIG_FILE).write_bytes(b'{"src_lang": "\xff"}')
    expect_error(md_folder, CONFIG_FILE, "not UTF-8")
    (md_folder / CONFIG_FILE).write_text('{"layer_norm_eps": NaN}')  # Python's json would accept it
    expect_error(md_folder, CONFIG_FILE, "not valid JSON", "NaN")


def test_config_not_an_object(md_folder):
    write_json(md_folder / CONFIG_FILE, [1, 2, 3])
    expect_error(md_folder, CONFIG_FILE, "must be a JSON object", "array")


def test_config_unknown_field(md_folder):
    edit_config(md_folder, d_modle=32)
    expect_error(md_folder, CONFIG_FILE, "unknown field 'd_modle'")


def test_config_invalid_value(md_folder):
    edit_config(md_folder, d_model=-1)
    err = expect_error(md_folder, CONFIG_FILE)
    assert str(err) == "config.json: field 'd_model' must be a positive integer, got -1."


def test_config_unknown_format_version(md_folder):
    edit_config(md_folder, format_version=7, some_future_field=True)
    err = expect_error(md_folder, CONFIG_FILE)
    assert str(err) == "config.json: format version 7 is not supported (this nmt-desktop reads format 1)."
    expect_error(md_folder, CONFIG_FILE, "format version 7", call=read_config)


def test_config_implausible_position_table(md_folder):
    edit_config(md_folder, max_positions=10**8)
    expect_error(md_folder, CONFIG_FILE, "max_positions", "implausibly large")


@pytest.mark.parametrize("text, words", [("{'title': 1}", ("not valid JSON", "line 1, column 2")),
                                         ('["a list"]', ("must be a JSON object",))])
def test_card_invalid(md_folder, text, words):
    (md_folder / CARD_FILE).write_text(text)
    expect_error(md_folder, CARD_FILE, *words)


# -- tokenizers ---------------------------------------------------------------------------------


def test_tokenizer_not_valid(md_folder):
    (md_folder / "tokenizer.json").write_text('{"model": "no"}')
    expect_error(md_folder, "tokenizer.json", "not a valid tokenizers JSON file")


def test_vocabulary_mismatch(tmp_path, md_separate):
    model, pair = md_separate
    folder = save_model(tmp_path / "sep", model, pair)
    edit_config(folder, tgt_vocab_size=8000)
    err = expect_error(folder, "target.tokenizer.json")
    assert str(err) == (f"target.tokenizer.json: vocabulary has {pair.target.vocab_size} tokens but "
                        "config.json says tgt_vocab_size 8000.")


def test_vocabulary_mismatch_joint(md_folder, md_joint):
    edit_config(md_folder, src_vocab_size=500, tgt_vocab_size=500)
    expect_error(md_folder, "tokenizer.json", f"vocabulary has {md_joint[1].source.vocab_size} tokens",
                 "src_vocab_size 500")


# -- weights: pickles and hostile safetensors ---------------------------------------------------


def test_pickle_payload_does_not_execute(md_folder, tmp_path):
    proof = tmp_path / "proof-the-payload-works"
    pickle.loads(pickle.dumps(Payload(proof)))  # the payload is real: unpickling creates the file
    assert proof.exists()

    marker = tmp_path / "pwned"
    for protocol in (2, 4, 5):
        (md_folder / WEIGHTS_FILE).write_bytes(pickle.dumps({"weights": Payload(marker)}, protocol=protocol))
        expect_error(md_folder, WEIGHTS_FILE, "is a pickle/PyTorch file, not safetensors", "refusing",
                     "pickles can run code")
        assert not marker.exists()


def test_torch_save_files_are_refused(md_folder, md_joint, tmp_path):
    marker = tmp_path / "pwned"
    weights = md_folder / WEIGHTS_FILE
    for obj in (md_joint[0].state_dict(), {"w": torch.zeros(2), "payload": Payload(marker)}):
        torch.save(obj, weights)
        assert weights.read_bytes()[:4] == b"PK\x03\x04"
        expect_error(md_folder, WEIGHTS_FILE, "is a pickle/PyTorch file", "refusing")
        torch.save(obj, weights, _use_new_zipfile_serialization=False)
        assert weights.read_bytes()[:1] == b"\x80"
        expect_error(md_folder, WEIGHTS_FILE, "is a pickle/PyTorch file", "refusing")
    assert not marker.exists()


def test_pickle_in_zip_and_in_shard_is_refused(tmp_path, md_saved, md_joint):
    marker = tmp_path / "pwned"
    members = folder_members(md_saved)
    members[WEIGHTS_FILE] = pickle.dumps(Payload(marker))
    expect_error(zip_members(tmp_path / "m.zip", members), WEIGHTS_FILE, "pickle")
    folder = save_model(tmp_path / "sharded", *md_joint, max_shard_bytes=40_000)
    first = sorted(folder.glob("model-*.safetensors"))[0]
    first.write_bytes(pickle.dumps(Payload(marker)))
    expect_error(folder, first.name, "pickle")
    assert not marker.exists()


@pytest.mark.parametrize("module", [model_folder, model_folder_layout, model_folder_reader, safetensors_header, weights],
                         ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_module_never_unpickles(monkeypatch, md_saved, md_joint, tmp_path, module):
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"pickle", "_pickle", "dill", "joblib", "cloudpickle", "marshal", "shelve"}
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "load" not in attributes  # no torch.load / pickle.load / numpy.load

    def forbidden(*args, **kwargs):
        raise AssertionError("something was unpickled")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    monkeypatch.setattr(torch, "load", forbidden)
    assert_same_model(load_model(md_saved), *md_joint)
    assert_same_model(load_model(zip_model(md_saved, tmp_path / "m.zip")), *md_joint)


def test_garbage_and_short_weights(md_folder):
    weights = md_folder / WEIGHTS_FILE
    weights.write_bytes(b"this is some text, not weights" * 10)
    expect_error(md_folder, WEIGHTS_FILE, "not a safetensors file", "refusing")
    weights.write_bytes(struct.pack("<Q", 2**60) + b"{}")  # header length of an exabyte
    expect_error(md_folder, WEIGHTS_FILE, "not a safetensors file")
    weights.write_bytes(b"")
    expect_error(md_folder, WEIGHTS_FILE, "truncated", "0 bytes")


def test_truncated_weights(md_folder, md_saved):
    data = (md_saved / WEIGHTS_FILE).read_bytes()
    header_end = 8 + struct.unpack("<Q", data[:8])[0]
    for cut in (1, 7, 8, 9, 20, header_end // 2, header_end - 1, header_end, header_end + 1,
                (header_end + len(data)) // 2, len(data) - 1):
        (md_folder / WEIGHTS_FILE).write_bytes(data[:cut])
        err = expect_error(md_folder, WEIGHTS_FILE)
        assert "truncated" in str(err) or "not a safetensors file" in str(err), (cut, str(err))
    (md_folder / WEIGHTS_FILE).write_bytes(data + b"\0" * 16)
    expect_error(md_folder, WEIGHTS_FILE, "corrupt", "16 bytes of data after the last tensor")


def test_header_claiming_a_huge_tensor_fails_fast(md_folder):
    weights = md_folder / WEIGHTS_FILE
    for shape, offsets, words in [([10**12], [0, 4 * 10**12], ("truncated or corrupt", "4000000000000")),
                                  ([10**12], [0, 16], ("corrupt", "needs 4000000000000 bytes")),
                                  ([10**6, 10**6, 10**6], [0, 4 * 10**18], ("truncated or corrupt",))]:
        weights.write_bytes(raw_safetensors(
            {"tgt_embed.weight": {"dtype": "F32", "shape": shape, "data_offsets": offsets}}, b"\0" * 16))
        with measured_work(cpu_s=1.0, peak_bytes=100_000_000, what="refusing the header"):  # nothing allocated
            expect_error(md_folder, WEIGHTS_FILE, *words)


@pytest.mark.parametrize("header, words", [
    ({"a": {"dtype": "Q7", "shape": [4], "data_offsets": [0, 16]}}, ("corrupt", "unknown dtype 'Q7'")),
    ({"a": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}}, ("corrupt", "invalid shape")),
    ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [16, 0]}}, ("corrupt", "invalid data_offsets")),
    ({"a": {"dtype": "F32", "shape": [4]}}, ("corrupt", "data_offsets")),
    ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, ("corrupt", "does not start")),
    ({"__metadata__": {"format": 1}}, ("corrupt", "__metadata__")),
])
def test_corrupt_safetensors_header(md_folder, header, words):
    (md_folder / WEIGHTS_FILE).write_bytes(raw_safetensors(header, b"\0" * 16))
    expect_error(md_folder, WEIGHTS_FILE, *words)


def test_corrupt_header_json(md_folder):
    body = b'{"a": {"dtype": "F32",'
    (md_folder / WEIGHTS_FILE).write_bytes(struct.pack("<Q", len(body)) + body + b"\0" * 16)
    expect_error(md_folder, WEIGHTS_FILE, "corrupt", "not valid JSON")
    body = b'{"a": "\xff\xfe"}'
    (md_folder / WEIGHTS_FILE).write_bytes(struct.pack("<Q", len(body)) + body)
    expect_error(md_folder, WEIGHTS_FILE, "corrupt", "UTF-8")
    body = b"[1, 2]"
    (md_folder / WEIGHTS_FILE).write_bytes(struct.pack("<Q", len(body)) + body)
    expect_error(md_folder, WEIGHTS_FILE, "not a safetensors file")  # does not even start with "{"


# -- weights against the config -----------------------------------------------------------------


def test_missing_tensor(md_folder):
    tensors = state_dict(md_folder)
    del tensors["decoder_layers.0.cross_attn.q_proj.bias"]
    save_file(tensors, md_folder / WEIGHTS_FILE)
    err = expect_error(md_folder, WEIGHTS_FILE, "tensor 'decoder_layers.0.cross_attn.q_proj.bias' is missing",
                       "config.json implies", "[32]")
    assert "more problem" not in str(err)


def test_unexpected_tensor(md_folder):
    tensors = state_dict(md_folder)
    tensors["extra.weight"] = torch.zeros(3)
    save_file(tensors, md_folder / WEIGHTS_FILE)
    expect_error(md_folder, WEIGHTS_FILE, "holds tensor 'extra.weight'", "config.json does not imply")


def test_shape_mismatch(md_folder):
    tensors = state_dict(md_folder)
    tensors["decoder_layers.0.ffn.fc1.weight"] = torch.zeros(128, 32)
    save_file(tensors, md_folder / WEIGHTS_FILE)
    err = expect_error(md_folder, WEIGHTS_FILE)
    assert str(err) == ("model.safetensors: tensor 'decoder_layers.0.ffn.fc1.weight' has shape [128, 32], "
                        "but config.json implies [64, 32].")


def test_several_mismatches_name_the_first_and_count_the_rest(md_folder):
    edit_config(md_folder, ffn_dim=128)  # fc1/fc2 weights and fc1 bias of both layers change shape
    err = expect_error(md_folder, WEIGHTS_FILE)
    assert str(err) == ("model.safetensors: tensor 'encoder_layers.0.ffn.fc1.weight' has shape [64, 32], "
                        "but config.json implies [128, 32] (and 5 more problems).")


def test_config_with_more_layers_than_the_weights(md_folder):
    edit_config(md_folder, encoder_layers=1000, decoder_layers=1000)
    with measured_work(cpu_s=1.0, peak_bytes=100_000_000, what="refusing 1000 layers"):
        expect_error(md_folder, WEIGHTS_FILE, "holds", "config.json implies at least")
    edit_config(md_folder, encoder_layers=1, decoder_layers=1, d_model=2**20, n_heads=1)  # ~100 TB of weights
    with measured_work(cpu_s=1.0, peak_bytes=100_000_000, what="refusing 100 TB of weights"):
        expect_error(md_folder, WEIGHTS_FILE, "config.json implies at least")  # refused before anything is built


def test_integer_weights_refused(md_folder):
    tensors = state_dict(md_folder)
    tensors["tgt_embed.weight"] = torch.zeros(tensors["tgt_embed.weight"].shape, dtype=torch.int64)
    save_file(tensors, md_folder / WEIGHTS_FILE)
    expect_error(md_folder, WEIGHTS_FILE, "tensor 'tgt_embed.weight' has dtype I64", "F32")


# -- sharded weights ----------------------------------------------------------------------------


@pytest.fixture
def md_sharded(tmp_path, md_joint) -> Path:
    return save_model(tmp_path / "sharded", *md_joint, max_shard_bytes=40_000)


def test_shard_index_invalid(md_sharded):
    (md_sharded / WEIGHTS_INDEX).write_text('{"weight_map": {')
    expect_error(md_sharded, WEIGHTS_INDEX, "not valid JSON", "line 1")
    write_json(md_sharded / WEIGHTS_INDEX, {"metadata": {}})
    expect_error(md_sharded, WEIGHTS_INDEX, "weight_map")
    write_json(md_sharded / WEIGHTS_INDEX, {"weight_map": {"tgt_embed.weight": "../../outside.safetensors"}})
    expect_error(md_sharded, WEIGHTS_INDEX, "not a plain", "file name")


def test_shard_missing(md_sharded):
    shard = sorted(md_sharded.glob("model-*.safetensors"))[-1]
    shard.unlink()
    err = expect_error(md_sharded, shard.name, "file not found", WEIGHTS_INDEX)
    assert str(shard) in str(err)


def test_shard_and_index_disagree(md_sharded):
    index = json.loads((md_sharded / WEIGHTS_INDEX).read_text())
    shards = sorted(set(index["weight_map"].values()))
    first = next(s for s in shards if list(index["weight_map"].values()).count(s) > 1)
    moved = next(k for k, v in index["weight_map"].items() if v == first)
    index["weight_map"][moved] = next(s for s in shards if s != first)
    write_json(md_sharded / WEIGHTS_INDEX, index)
    expect_error(md_sharded, first, f"holds tensor '{moved}'", "does not list")
    del index["weight_map"][moved]
    index["weight_map"]["ghost.weight"] = first
    index["weight_map"][moved] = first
    write_json(md_sharded / WEIGHTS_INDEX, index)
    expect_error(md_sharded, WEIGHTS_INDEX, "lists tensor 'ghost.weight'", "does not hold it")


# -- hostile zips -------------------------------------------------------------------------------


@pytest.mark.parametrize("evil", ["../evil", "../../evil.txt", "/tmp/evil-absolute", "sub/../../evil", "C:/evil"])
def test_zip_path_traversal_refused(tmp_path, md_saved, evil):
    work = tmp_path / "work"
    work.mkdir()
    members = folder_members(md_saved)
    members[evil] = b"owned"
    zip_path = zip_members(work / "evil.zip", members)
    before = sorted(tmp_path.rglob("*"))
    expect_error(zip_path, "evil.zip", "refusing", "path traversal")
    expect_error(zip_path, "evil.zip", "path traversal", call=read_config)
    assert sorted(tmp_path.rglob("*")) == before
    assert not Path("/tmp/evil-absolute").exists()


def test_zip_bomb_refused(tmp_path, md_saved):
    members = folder_members(md_saved)
    members[CONFIG_FILE] = b"\0" * 50_000_000
    zip_path = zip_members(tmp_path / "bomb.zip", members)
    assert zip_path.stat().st_size < 1_000_000
    before = sorted(tmp_path.rglob("*"))
    with measured_work(cpu_s=1.0, peak_bytes=20_000_000, what="refusing the zip bomb"):  # 50 MB never inflated
        expect_error(zip_path, "bomb.zip", "zip bomb", "config.json")
        expect_error(zip_path, "bomb.zip", "zip bomb", call=read_config)
    assert sorted(tmp_path.rglob("*")) == before


def test_zip_declared_total_too_large(tmp_path, md_saved, monkeypatch):
    monkeypatch.setattr(model_folder_reader, "ZIP_MAX_TOTAL", 100_000)  # stored members: ratio 1, but too much in all
    zip_path = zip_members(tmp_path / "big.zip", folder_members(md_saved), compression=zipfile.ZIP_STORED)
    expect_error(zip_path, "big.zip", "zip bomb", "over the limit")


def test_zip_member_lying_about_its_size(tmp_path, md_saved):
    """A central directory claiming 100 bytes for a member that inflates to 20 MB: at most 100 are read."""
    members = folder_members(md_saved)
    members[CONFIG_FILE] = b" " * 20_000_000
    zip_path = zip_members(tmp_path / "liar.zip", members)
    data = bytearray(zip_path.read_bytes())
    entry = data.find(b"PK\x01\x02")  # central directory entries: name at +46, uncompressed size at +24
    while data[entry + 46: entry + 46 + len(CONFIG_FILE)] != CONFIG_FILE.encode():
        entry = data.find(b"PK\x01\x02", entry + 4)
    data[entry + 24: entry + 28] = struct.pack("<I", 100)  # uncompressed size
    zip_path.write_bytes(bytes(data))
    expect_error(zip_path, "config.json", "cannot be read from the archive")


def test_zip_duplicate_member_refused(tmp_path, md_saved):
    zip_path = zip_members(tmp_path / "dup.zip", folder_members(md_saved))
    with pytest.warns(UserWarning), zipfile.ZipFile(zip_path, "a") as zf:
        zf.writestr(CONFIG_FILE, b'{"d_model": 64}')
    expect_error(zip_path, "dup.zip", "more than one member named 'config.json'")


def test_zip_member_too_large_for_its_kind(tmp_path, md_saved):
    members = folder_members(md_saved)
    members[CONFIG_FILE] = b" " * (MAX_JSON_BYTES + 1)  # stored, so not a bomb: just too big
    zip_path = zip_members(tmp_path / "fat.zip", members, compression=zipfile.ZIP_STORED)
    expect_error(zip_path, CONFIG_FILE, "too large")
