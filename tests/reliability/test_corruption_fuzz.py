"""Reliability: seeded corruption of a real model folder never crashes, hangs or half-loads.

Concern: disks, downloads and hand edits damage model folders. Whatever the damage, `load_model`
must either fail with the one-line `ModelFolderError`, or succeed with a model that translates.

Cases: NMT_CORRUPTION_CASES (default 240) seeded mutations of a small saved model (vocab ~390,
d_model 32, 1+1 layers, joint vocabulary, perturbed weights), cycling through these kinds:
  truncation of each file at a random point; bit flips in the weights' data region, in the
  safetensors header and in config.json / tokenizer.json / card.json; config.json edits (delete
  a key, wrong JSON type, huge or negative numbers, NaN/Infinity, shape fields +-1 / x2 / /2);
  tokenizer.json edits at a random node (delete, retype, huge number, NaN); safetensors header
  edits (dtype, shape, offsets, swapping two tensors' offsets); a deleted file; and bit flips /
  truncation of the zipped folder.

The rule checked for each case (per-case time limit 10 s with SIGALRM, so nothing can hang):
  * the load fails with ModelFolderError whose message is one line ending in "."; or
  * the load succeeds; then translating 3 fixed inputs (greedy, at most 8 tokens, attention on)
    returns Translations without exceptions (InputTooLongError is allowed, as a clear refusal,
    when a mutated max_positions makes the inputs too long); when every weight is finite and at
    most 1e3 in magnitude (no float32 overflow possible; a flipped exponent bit may legitimately
    give 1e38 and NaN attention), each cross-attention row sums to 1; and when config, weights and source tokenisation are
    unchanged (e.g. a flipped bit in card.json or in JSON whitespace), the output token ids
    equal the original model's.
Any other exception, a crash or a timeout fails the case.

Longer run: `NMT_CORRUPTION_CASES=5000 OMP_NUM_THREADS=1 .venv/bin/python -m pytest
tests/reliability/test_corruption_fuzz.py -q` (seeds are 0..N-1, so a failure is reproducible
by its id).
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import re
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from limits import time_limit
import torch

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.formats.model_folder_layout import ModelFolderError
from nmt_desktop.core.formats.model_folder import load_model
from nmt_desktop.core.decoding.document import InputTooLongError
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.decoding.results import Translation

N_CASES = int(os.environ.get("NMT_CORRUPTION_CASES", "240"))
CASE_SECONDS = 10
INPUTS = ["red cat runs", "the big dog sleeps in the house", "sun moon water tree"]
DECODE = DecodeConfig(max_len_a=0, max_len_b=8, alternatives=0)

FILES = ["config.json", "tokenizer.json", "model.safetensors", "card.json"]
SHAPE_KEYS = ["d_model", "n_heads", "ffn_dim", "encoder_layers", "decoder_layers", "src_vocab_size",
              "tgt_vocab_size", "max_positions"]
WEIRD_VALUES = ["x", "", [], {}, None, True, False, 1.5, -1, 0, [1, 2], {"a": 1}, "64", 1e-9]
HUGE_VALUES = [10**9, 10**18, 2**63, 10**30, 10**400, -(10**9), -1, 1e308, -1e308, 2**31 - 1]
NAN_TOKENS = ["NaN", "Infinity", "-Infinity"]


# -- mutations: each takes (folder, rng) and returns a path to load plus a description -------------


def _flip_bits(data: bytes, rng: random.Random, lo: int, hi: int, n: int) -> bytes:
    out = bytearray(data)
    for _ in range(n):
        i = rng.randrange(lo, hi)
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def _header_end(weights: bytes) -> int:
    return 8 + struct.unpack("<Q", weights[:8])[0]


def m_truncate(folder: Path, rng: random.Random) -> str:
    name = rng.choice(FILES)
    data = (folder / name).read_bytes()
    cut = rng.randrange(len(data))
    (folder / name).write_bytes(data[:cut])
    return f"truncate {name} at {cut} of {len(data)}"


def m_flip_weights_data(folder: Path, rng: random.Random) -> str:
    data = (folder / "model.safetensors").read_bytes()
    n = rng.randint(1, 8)
    (folder / "model.safetensors").write_bytes(_flip_bits(data, rng, _header_end(data), len(data), n))
    return f"flip {n} bits in weight data"


def m_flip_weights_header(folder: Path, rng: random.Random) -> str:
    data = (folder / "model.safetensors").read_bytes()
    n = rng.randint(1, 4)
    (folder / "model.safetensors").write_bytes(_flip_bits(data, rng, 0, _header_end(data), n))
    return f"flip {n} bits in safetensors header"


def m_flip_json(folder: Path, rng: random.Random) -> str:
    name = rng.choice(["config.json", "tokenizer.json", "card.json"])
    data = (folder / name).read_bytes()
    n = rng.randint(1, 4)
    (folder / name).write_bytes(_flip_bits(data, rng, 0, len(data), n))
    return f"flip {n} bits in {name}"


def _config(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text(encoding="utf-8"))


def _write_config(folder: Path, data: dict) -> None:
    (folder / "config.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def m_config_delete_key(folder: Path, rng: random.Random) -> str:
    data = _config(folder)
    key = rng.choice(sorted(data))
    del data[key]
    _write_config(folder, data)
    return f"config.json: delete {key!r}"


def m_config_wrong_type(folder: Path, rng: random.Random) -> str:
    data = _config(folder)
    key, value = rng.choice(sorted(data)), rng.choice(WEIRD_VALUES)
    data[key] = value
    _write_config(folder, data)
    return f"config.json: {key} = {value!r}"


def m_config_huge_number(folder: Path, rng: random.Random) -> str:
    data = _config(folder)
    key, value = rng.choice(sorted(data)), rng.choice(HUGE_VALUES)
    data[key] = value
    _write_config(folder, data)
    return f"config.json: {key} = {value!r}"[:120]


def m_config_nan(folder: Path, rng: random.Random) -> str:
    data = _config(folder)
    key, token = rng.choice(sorted(data)), rng.choice(NAN_TOKENS)
    data[key] = "@@TOKEN@@"
    (folder / "config.json").write_text(json.dumps(data).replace('"@@TOKEN@@"', token), encoding="utf-8")
    return f"config.json: {key} = {token}"


def m_config_shape(folder: Path, rng: random.Random) -> str:
    data = _config(folder)
    key = rng.choice(SHAPE_KEYS)
    old = data[key]
    data[key] = rng.choice([old + 1, old - 1, old * 2, old // 2, old * 4])
    if rng.random() < 0.3:  # sometimes change a second one, to keep the pair consistent (shared vocab)
        other = {"src_vocab_size": "tgt_vocab_size", "tgt_vocab_size": "src_vocab_size",
                 "d_model": "ffn_dim"}.get(key, rng.choice(SHAPE_KEYS))
        data[other] = data[key]
    _write_config(folder, data)
    return f"config.json: {key} {old} -> {data[key]}"


def _nodes(node, path=()):
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _nodes(v, path + (i,))


def m_tokenizer_edit(folder: Path, rng: random.Random) -> str:
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    # prefer the structural parts: skip most of the thousands of vocab/merges leaves
    nodes = [(p, n) for p, n in _nodes(data) if p and not (len(p) > 2 and p[1] in ("vocab", "merges")
                                                             and rng.random() < 0.97)]
    path, _ = rng.choice(nodes)
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    action = rng.choice(["delete", "retype", "huge", "nan"])
    token = None
    if action == "delete":
        del parent[path[-1]]
    elif action == "retype":
        parent[path[-1]] = rng.choice(WEIRD_VALUES)
    elif action == "huge":
        parent[path[-1]] = rng.choice(HUGE_VALUES)
    else:
        token = rng.choice(NAN_TOKENS)
        parent[path[-1]] = "@@TOKEN@@"
    text = json.dumps(data)
    if token:
        text = text.replace('"@@TOKEN@@"', token)
    (folder / "tokenizer.json").write_text(text, encoding="utf-8")
    return f"tokenizer.json: {action} at {'/'.join(map(str, path))}"[:160]


def m_card_edit(folder: Path, rng: random.Random) -> str:
    text = rng.choice(['[]', '"card"', '{"a": NaN}', '{"a": ' * 5000 + '1' + '}' * 5000, '{"a": 1e999}', '{',
                       '\ufeff{"ok": true}', '{"a": "\\ud800"}', 'null'])
    (folder / "card.json").write_text(text, encoding="utf-8")
    return f"card.json = {text[:40]!r}"


def m_header_edit(folder: Path, rng: random.Random) -> str:
    data = (folder / "model.safetensors").read_bytes()
    end = _header_end(data)
    header = json.loads(data[8:end])
    keys = [k for k in header if k != "__metadata__"]
    key = rng.choice(keys)
    action = rng.choice(["dtype", "shape", "offsets", "swap", "delete", "rename"])
    entry = header[key]
    if action == "dtype":
        entry["dtype"] = rng.choice(["F16", "BF16", "I32", "U8", "BOOL", "F64", "F8_E4M3", "X"])
    elif action == "shape":
        entry["shape"] = list(reversed(entry["shape"])) if rng.random() < 0.5 else entry["shape"] + [1]
    elif action == "offsets":
        a, b = entry["data_offsets"]
        entry["data_offsets"] = rng.choice([[a + 4, b + 4], [a - 4, b - 4], [a, b + 4], [b, a], [a, a]])
    elif action == "swap":  # two tensors of the same byte size trade data: a valid but different file
        same = [k for k in keys if k != key and header[k]["data_offsets"][1] - header[k]["data_offsets"][0]
                == entry["data_offsets"][1] - entry["data_offsets"][0] and header[k]["shape"] == entry["shape"]]
        if same:
            other = rng.choice(same)
            entry["data_offsets"], header[other]["data_offsets"] = header[other]["data_offsets"], entry["data_offsets"]
    elif action == "delete":
        del header[key]
    else:
        header[key + "_x"] = header.pop(key)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + data[end:])
    return f"safetensors header: {action} {key}"


def m_delete_file(folder: Path, rng: random.Random) -> str:
    name = rng.choice(FILES)
    (folder / name).unlink()
    return f"delete {name}"


def _zip(folder: Path) -> Path:
    archive = folder.with_suffix(".zip")
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.iterdir()):
            zf.write(p, p.name)
    shutil.rmtree(folder)
    return archive


def m_zip_flip(folder: Path, rng: random.Random) -> tuple[str, Path]:
    archive = _zip(folder)
    data = archive.read_bytes()
    n = rng.randint(1, 6)
    archive.write_bytes(_flip_bits(data, rng, 0, len(data), n))
    return f"flip {n} bits in the zipped folder", archive


def m_zip_truncate(folder: Path, rng: random.Random) -> tuple[str, Path]:
    archive = _zip(folder)
    data = archive.read_bytes()
    cut = rng.randrange(len(data))
    archive.write_bytes(data[:cut])
    return f"truncate the zipped folder at {cut} of {len(data)}", archive


MUTATIONS = [m_truncate, m_flip_weights_data, m_flip_weights_header, m_flip_json, m_config_delete_key,
             m_config_wrong_type, m_config_huge_number, m_config_nan, m_config_shape, m_tokenizer_edit,
             m_card_edit, m_header_edit, m_delete_file, m_zip_flip, m_zip_truncate, m_flip_weights_data]


def mutate(folder: Path, seed: int) -> tuple[str, Path]:
    rng = random.Random(seed)
    result = MUTATIONS[seed % len(MUTATIONS)](folder, rng)
    return result if isinstance(result, tuple) else (result, folder)


# -- the check -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def original(small_model_dir):
    loaded = load_model(small_model_dir)
    translator = Translator(loaded.model, loaded.tokenizers)
    results = translator.translate_batch(INPUTS, DECODE)
    return {"config": loaded.config, "state": loaded.model.state_dict(),
            "source_ids": [translator.source_ids(t) for t in INPUTS],
            "target_ids": [r.target_ids for r in results]}


def _same_model(loaded, translator: Translator, original) -> bool:
    if loaded.config != original["config"]:
        return False
    state = loaded.model.state_dict()
    if list(state) != list(original["state"]) or not all(torch.equal(state[k], original["state"][k]) for k in state):
        return False
    return [translator.source_ids(t) for t in INPUTS] == original["source_ids"]


def check_loaded(loaded, original, what: str) -> None:
    translator = Translator(loaded.model, loaded.tokenizers)
    try:
        results = translator.translate_batch(INPUTS, DECODE)
    except InputTooLongError as exc:
        assert loaded.config.max_positions != original["config"].max_positions, (what, str(exc))
        assert "\n" not in str(exc)
        return
    assert len(results) == len(INPUTS)
    # a flipped exponent bit can make a weight finite but huge (1e38): activations then overflow
    # to inf/NaN, which is no bug. With every |weight| <= 1e3 a model this small cannot overflow.
    tame = all(bool(torch.isfinite(p).all()) and float(p.abs().max()) <= 1e3
               for p in loaded.model.state_dict().values())
    for r in results:
        assert isinstance(r, Translation) and isinstance(r.text, str), what
        if tame and r.attention is not None and r.attention.size:
            sums = r.attention.sum(axis=-1)
            assert np.allclose(sums, 1.0, atol=1e-3), (what, sums)
    if _same_model(loaded, translator, original):
        assert [r.target_ids for r in results] == original["target_ids"], what


@pytest.mark.parametrize("seed", range(N_CASES), ids=lambda s: f"seed{s}-{MUTATIONS[s % len(MUTATIONS)].__name__[2:]}")
def test_corrupted_model_loads_cleanly_or_fails_in_one_line(seed, tmp_path, small_model_dir, original):
    folder = Path(shutil.copytree(small_model_dir, tmp_path / "model"))
    what, path = mutate(folder, seed)
    what = f"seed {seed}: {what}"
    with time_limit(CASE_SECONDS, what):
        try:
            loaded = load_model(path)
        except ModelFolderError as exc:
            message = str(exc)
            assert "\n" not in message and "\r" not in message, (what, message)
            assert message.endswith("."), (what, message)
            return
        check_loaded(loaded, original, what)


def test_every_mutation_kind_is_exercised():
    assert N_CASES >= 200
    kinds = {MUTATIONS[s % len(MUTATIONS)].__name__ for s in range(N_CASES)}
    assert kinds == {m.__name__ for m in MUTATIONS}
