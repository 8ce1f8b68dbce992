"""Reliability: hostile model files never run code, write outside their target, or exhaust memory.

Concern: a model folder or .zip downloaded from anywhere is opened by `load_model` / `read_config`
(and so by `Translator.load`, the CLI and the GUI). Whatever its bytes, loading must end quickly
with one `ModelFolderError` whose message is a single line, and must never unpickle, extract, or
allocate what a header merely claims.

Cases tried (tests/core/formats/test_model_folder.py has the basic one-per-kind checks; this adds breadth):
  * pickle payloads (protocols 0-5, torch.save zip and legacy formats) planted as every file we
    read: model.safetensors, a shard, the shard index, config.json, card.json, tokenizer.json,
    source/target.tokenizer.json, in a folder and inside a zip (archive root and top-level folder);
    the payload would create a marker file, which must never exist;
  * zip bombs (a 256 MiB member of zeros under every member name, a zip inside the zip), each
    refused in < 5 s; a child process measures that peak memory does not grow by what they claim;
  * safetensors headers claiming huge sizes (header length 2**64-1, tensors of 2**62 elements,
    16-dimensional shapes, overflowing offsets, 200,000 entries, JSON nested 100,000 deep);
  * path traversal and odd names in zips ("..", absolute, drive letters, backslashes, NUL,
    a symlink member), refused or harmless, with the directory tree unchanged;
  * special files in a folder (config.json linked to /dev/zero, tokenizer.json as a FIFO).
The `pytorch_model.bin` offered to the Marian import gets the same payloads when that importer
(nmt_desktop/core/formats/marian.py, in progress) exists; the test skips with a clear reason otherwise.

Run: `OMP_NUM_THREADS=1 .venv/bin/python -m pytest tests/reliability/test_hostile_files.py -q`.
There is no longer version: every case is deterministic and runs in CI.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import stat
import struct
import subprocess
import sys
import time
import warnings
import zipfile
import zlib
from pathlib import Path

import pytest

from limits import measured_work, time_limit
from model_bytes import Payload, folder_members, raw_safetensors, write_zip
import torch

from nmt_desktop.core.formats.model_folder_layout import ModelFolderError
from nmt_desktop.core.formats.model_folder import load_model, read_config

REPO = Path(__file__).resolve().parents[2]
FAST = 5.0  # seconds of CPU time any hostile load may take (limits.measured_work: not wall time)
BOMB_BYTES = 256 << 20


def snapshot(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.lstat().st_size) for p in root.rglob("*"))


def refused(path: Path, call=load_model) -> ModelFolderError:
    """`call(path)` raises ModelFolderError quickly, with a one-line message naming a file."""
    with time_limit(120), measured_work(cpu_s=FAST, what=f"refusing {path.name}"), \
            pytest.raises(ModelFolderError) as info:
        call(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message, message
    assert message.endswith(".") and ": " in message, message
    return info.value


def pickle_payloads(marker: Path) -> dict[str, bytes]:
    out = {f"pickle-protocol-{p}": pickle.dumps({"weights": Payload(marker)}, protocol=p) for p in range(6)}
    for legacy in (False, True):
        buf = io.BytesIO()
        torch.save({"w": torch.zeros(2), "payload": Payload(marker)}, buf,
                   _use_new_zipfile_serialization=not legacy)
        out["torch-save-legacy" if legacy else "torch-save-zip"] = buf.getvalue()
    return out


@pytest.fixture
def marker(tmp_path) -> Path:
    path = tmp_path / "outside" / "PWNED"
    path.parent.mkdir()
    yield path
    assert not path.exists(), "a pickle payload ran"


# -- pickles -------------------------------------------------------------------------------------


def test_payloads_are_real(tmp_path):
    """The payloads do run code when unpickled, so their not running below means something."""
    for name, data in pickle_payloads(tmp_path / "proof").items():
        proof = tmp_path / "proof"
        proof.unlink(missing_ok=True)
        if name.startswith("torch"):
            torch.load(io.BytesIO(data), weights_only=False)
        else:
            pickle.loads(data)
        assert proof.exists(), name


READ_FILES = ["model.safetensors", "config.json", "card.json", "tokenizer.json"]


@pytest.mark.parametrize("target", READ_FILES)
def test_pickle_as_every_file_of_a_folder(small_folder, marker, target):
    before = snapshot(small_folder.parent)
    for kind, data in pickle_payloads(marker).items():
        (small_folder / target).write_bytes(data)
        err = refused(small_folder)
        assert err.file.endswith(target), (kind, str(err))
        if target == "config.json":
            refused(small_folder, call=read_config)
    (small_folder / target).unlink()
    assert {n for n, _ in snapshot(small_folder.parent)} <= {n for n, _ in before}


@pytest.mark.parametrize("target", ["source.tokenizer.json", "target.tokenizer.json"])
def test_pickle_as_separate_tokenizer(small_folder, marker, target):
    joint = (small_folder / "tokenizer.json").read_bytes()
    (small_folder / "tokenizer.json").unlink()
    for name in ("source.tokenizer.json", "target.tokenizer.json"):
        (small_folder / name).write_bytes(joint)
    for kind, data in pickle_payloads(marker).items():
        (small_folder / target).write_bytes(data)
        err = refused(small_folder)
        assert target in str(err), (kind, str(err))


@pytest.mark.parametrize("layout", ["root", "folder"])
@pytest.mark.parametrize("target", READ_FILES)
def test_pickle_inside_a_zip(tmp_path, small_model_dir, marker, target, layout):
    base = folder_members(small_model_dir)
    prefix = "" if layout == "root" else "my-model/"
    for kind, data in pickle_payloads(marker).items():
        members = {prefix + name: (data if name == target else body) for name, body in base.items()}
        archive = write_zip(tmp_path / f"{kind}.zip", members)
        before = snapshot(tmp_path)
        refused(archive)
        if target == "config.json":
            refused(archive, call=read_config)
        assert snapshot(tmp_path) == before, kind


def test_pickle_as_shard_and_as_shard_index(tmp_path, small_pair, marker):
    from nmt_desktop.core.formats.model_folder import save_model

    folder = save_model(tmp_path / "sharded", *small_pair, max_shard_bytes=60_000)
    shards = sorted(folder.glob("model-*.safetensors"))
    assert len(shards) > 2
    index = (folder / "model.safetensors.index.json").read_bytes()
    for kind, data in pickle_payloads(marker).items():
        for shard in (shards[0], shards[-1]):
            original = shard.read_bytes()
            shard.write_bytes(data)
            assert shard.name in str(refused(folder)), kind
            shard.write_bytes(original)
        (folder / "model.safetensors.index.json").write_bytes(data)
        assert "model.safetensors.index.json" in str(refused(folder)), kind
        (folder / "model.safetensors.index.json").write_bytes(index)
    load_model(folder)  # restored: loads again


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's weights_only unpickler warns about protocol 5
def test_pickle_as_marian_pytorch_model_bin(tmp_path, marker):
    """The Marian import reads pytorch_model.bin with torch.load(weights_only=True): no payload runs."""
    marian = pytest.importorskip("nmt_desktop.core.formats.marian",
                                 reason="the Marian import (offered a pytorch_model.bin pickle) does not exist yet")
    if not hasattr(marian, "load_hf_weights"):
        pytest.skip("the Marian import has no load_hf_weights yet: nothing reads pytorch_model.bin")
    hf = tmp_path / "opus-mt"
    hf.mkdir()
    for kind, data in pickle_payloads(marker).items():
        for name in ("pytorch_model.bin", "model.safetensors"):
            (hf / name).write_bytes(data)
            with time_limit(120), measured_work(cpu_s=FAST, what=f"refusing {name}"), \
                    pytest.raises(marian.MarianImportError) as info:
                marian.load_hf_weights(hf)
            assert "\n" not in str(info.value), (kind, name, str(info.value))
            (hf / name).unlink()


# -- zip bombs -----------------------------------------------------------------------------------


def bomb_member(name: str, size: int = BOMB_BYTES) -> tuple[zipfile.ZipInfo, bytes]:
    """A deflated member of `size` zero bytes, compressed in chunks (never `size` bytes in memory)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = b"\0" * (1 << 20)
    parts = [comp.compress(chunk) for _ in range(size >> 20)]
    parts.append(comp.flush())
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info, b"".join(parts)


def write_zip_with_bomb(path: Path, members: dict[str, bytes], bomb_name: str, bomb: tuple[bytes, int, int],
                        size: int = BOMB_BYTES) -> Path:
    """Write `members` (deflated) plus member `bomb_name` whose prebuilt deflate stream inflates to
    `size` zero bytes; the archive is built by hand so the bomb is never held uncompressed."""
    body, crc, declared = bomb
    assert declared == size
    out = io.BytesIO()
    entries = []
    items = [(n, zlib.compress(d)[2:-4], len(d), zlib.crc32(d)) for n, d in members.items()]
    items.append((bomb_name, body, size, crc))
    for name, comp, usize, c in items:
        offset, fname = out.tell(), name.encode()
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0x21, c, len(comp), usize,
                              len(fname), 0) + fname)
        out.write(comp)
        entries.append((fname, c, len(comp), usize, offset))
    cd_start = out.tell()
    for fname, c, csize, usize, offset in entries:
        out.write(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, c, csize, usize,
                              len(fname), 0, 0, 0, 0, 0o644 << 16, offset) + fname)
    cd_size = out.tell() - cd_start
    out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), cd_size, cd_start, 0))
    path.write_bytes(out.getvalue())
    return path


@pytest.fixture(scope="module")
def bomb_body() -> tuple[bytes, int, int]:
    """(raw deflate stream, CRC-32, size) of BOMB_BYTES zero bytes."""
    crc, chunk = 0, b"\0" * (1 << 20)
    for _ in range(BOMB_BYTES >> 20):
        crc = zlib.crc32(chunk, crc)
    return bomb_member("x")[1], crc, BOMB_BYTES


@pytest.mark.parametrize("layout", ["root", "folder"])
@pytest.mark.parametrize("target", READ_FILES)
def test_zip_bomb_under_every_name(tmp_path, small_model_dir, bomb_body, target, layout):
    prefix = "" if layout == "root" else "m/"
    members = {prefix + n: d for n, d in folder_members(small_model_dir).items() if n != target}
    archive = write_zip_with_bomb(tmp_path / "bomb.zip", members, prefix + target, bomb_body)
    assert archive.stat().st_size < BOMB_BYTES // 200
    with zipfile.ZipFile(archive) as zf:  # the archive is well-formed and really is a bomb
        info = zf.getinfo(prefix + target)
        assert info.file_size == BOMB_BYTES
        with zf.open(info) as f:
            assert f.read(1 << 16) == b"\0" * (1 << 16)
    before = snapshot(tmp_path)
    err = refused(archive)
    assert "zip bomb" in str(err), str(err)
    if target == "config.json":
        refused(archive, call=read_config)
    assert snapshot(tmp_path) == before


def test_zip_inside_zip_and_small_ratio_bombs(tmp_path, small_model_dir):
    members = folder_members(small_model_dir)
    inner = write_zip(tmp_path / "inner.zip", members).read_bytes()
    cases = {
        "zip as weights": dict(members, **{"model.safetensors": inner}),
        "zip as config": dict(members, **{"config.json": inner}),
        # just under the ratio check's minimum size: read, then refused as content
        "9 MB of zeros as config": dict(members, **{"config.json": b"\0" * (9 << 20)}),
        "9 MB of zeros as tokenizer": dict(members, **{"tokenizer.json": b"\0" * (9 << 20)}),
        "9 MB of braces as card": dict(members, **{"card.json": b"[" * (9 << 20)}),
    }
    for name, m in cases.items():
        archive = write_zip(tmp_path / "case.zip", m)
        assert str(refused(archive)), name


MEMORY_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from nmt_desktop.core.formats.model_folder_layout import ModelFolderError
from nmt_desktop.core.formats.model_folder import load_model
results = []
paths = [Path(p) for p in sys.argv[1:]]
load_model(paths[0])  # warm up: the memory a normal load needs is not counted
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for p in paths[1:]:
    start = time.thread_time()  # CPU time: the refusal's work, whatever else the machine runs
    try:
        load_model(p)
        outcome = "loaded"
    except ModelFolderError as exc:
        outcome = str(exc)
    results.append([p.name, outcome, time.thread_time() - start])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grew_kib": peak - base, "results": results}))
"""


def test_bombs_and_huge_headers_do_not_allocate(tmp_path, small_model_dir, bomb_body):
    """In a fresh process: refusing every bomb and huge header raises peak RSS by < 64 MiB."""
    members = folder_members(small_model_dir)
    paths = [str(small_model_dir)]
    for target in READ_FILES:
        paths.append(str(write_zip_with_bomb(tmp_path / f"bomb-{target}.zip",
                                             {n: d for n, d in members.items() if n != target},
                                             target, bomb_body)))
    for i, header in enumerate(HUGE_HEADERS[:6]):
        folder = Path(shutil.copytree(small_model_dir, tmp_path / f"huge-{i}"))
        (folder / "model.safetensors").write_bytes(raw_safetensors(header, b"\0" * 64))
        paths.append(str(folder))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", MEMORY_CHILD, *paths], capture_output=True, text=True,
                          timeout=120, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, outcome, seconds in report["results"]:
        assert outcome != "loaded" and "\n" not in outcome, (name, outcome)
        assert seconds < FAST, (name, seconds)  # of CPU time
    assert report["grew_kib"] < 64 * 1024, report


# -- safetensors headers claiming huge sizes -----------------------------------------------------

T = "tgt_embed.weight"
HUGE_HEADERS = [
    {T: {"dtype": "F32", "shape": [2**62], "data_offsets": [0, 2**64]}},
    {T: {"dtype": "F64", "shape": [2**20] * 16, "data_offsets": [0, 8 * 2**320]}},
    {T: {"dtype": "BOOL", "shape": [2**40, 2**40], "data_offsets": [0, 64]}},
    {T: {"dtype": "F32", "shape": [16], "data_offsets": [2**63, 2**63 + 64]}},
    {T: {"dtype": "F32", "shape": [16], "data_offsets": [-(2**63), 64]}},
    {T: {"dtype": "F32", "shape": [16], "data_offsets": [0, 1e300]}},
    {T: {"dtype": "F32", "shape": [1e30], "data_offsets": [0, 64]}},
    {T: {"dtype": "F32", "shape": [2**17] * 17, "data_offsets": [0, 64]}},
    {"__metadata__": {"format": "pt", "total_size": "9" * 5000}, T: {"dtype": "F32", "shape": [16],
                                                                      "data_offsets": [0, 64]}},
]


@pytest.mark.parametrize("case", range(len(HUGE_HEADERS)))
def test_header_claiming_huge_sizes(small_folder, tmp_path, small_model_dir, case):
    data = raw_safetensors(HUGE_HEADERS[case], b"\0" * 64)
    (small_folder / "model.safetensors").write_bytes(data)
    refused(small_folder)
    members = dict(folder_members(small_model_dir), **{"model.safetensors": data})
    refused(write_zip(tmp_path / "huge.zip", members))


@pytest.mark.parametrize("length", [2**64 - 1, 2**63, 2**32, 100 * 2**20 + 1, 100 * 2**20, 10**9, 1, 0])
def test_header_length_field_huge_or_tiny(small_folder, length):
    (small_folder / "model.safetensors").write_bytes(raw_safetensors({}, b"\0" * 64, length=length))
    refused(small_folder)


def test_header_with_many_entries_or_deep_nesting(small_folder):
    many = {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(200_000)}
    for header in (many, b"{\"a\": " + b"[" * 100_000 + b"]" * 100_000 + b"}",
                   b"{\"a\": " + b"{\"b\": " * 50_000 + b"1" + b"}" * 50_001,
                   b"{" + b" " * (8 << 20) + b"}"):
        (small_folder / "model.safetensors").write_bytes(raw_safetensors(header, b"\0" * 64))
        refused(small_folder)


def test_config_claiming_huge_model_with_honest_small_weights(small_folder):
    config = json.loads((small_folder / "config.json").read_text())
    for change in ({"ffn_dim": 2**40}, {"encoder_layers": 10**9}, {"d_model": 2**30, "n_heads": 1},
                   {"max_positions": 2**40}, {"d_model": 2**20, "n_heads": 2**20, "max_positions": 2**20}):
        (small_folder / "config.json").write_text(json.dumps(dict(config, **change)))
        refused(small_folder)
        if "ffn_dim" not in change and "encoder_layers" not in change:
            refused(small_folder, call=read_config)


# -- path traversal and odd member names ---------------------------------------------------------

EVIL_NAMES = ["../evil", "../../evil.txt", "/tmp/nmt-evil-absolute", "sub/../../evil", "C:/evil", "C:\\evil",
              "..\\evil", "sub\\..\\..\\evil", "\\evil", "\\\\server\\share\\evil", "./../evil",
              "a/b/../../../evil", "m/../../evil", "..", "m/.."]


@pytest.mark.parametrize("layout", ["root", "folder"])
def test_zip_path_traversal(tmp_path, small_model_dir, layout):
    work = tmp_path / "work"
    work.mkdir()
    prefix = "" if layout == "root" else "m/"
    base = {prefix + n: d for n, d in folder_members(small_model_dir).items()}
    before = snapshot(tmp_path)
    for i, evil in enumerate(EVIL_NAMES):
        for replace in (False, True):  # an extra member, or the evil name in place of config.json
            members = dict(base)
            if replace:
                del members[prefix + "config.json"]
                members[evil + "/config.json"] = base[prefix + "config.json"]
            else:
                members[evil] = b"owned"
            archive = write_zip(work / f"evil-{i}-{replace}.zip", members)
            err = refused(archive)
            assert "path traversal" in str(err), (evil, str(err))
            refused(archive, call=read_config)
            archive.unlink()
    assert snapshot(tmp_path) == before
    assert not Path("/tmp/nmt-evil-absolute").exists()
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()


def test_zip_symlink_member_is_not_followed(tmp_path, small_model_dir):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(json.loads((small_model_dir / "config.json").read_text())))
    members = folder_members(small_model_dir)
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members.items():
            if name == "config.json":
                info = zipfile.ZipInfo(name)
                info.create_system = 3
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, str(secret))  # a symlink entry: its content is the target path
            else:
                zf.writestr(name, data)
    err = refused(archive)
    assert "config.json" in str(err)  # the link text is read as (invalid) JSON, the target never


def test_zip_member_name_with_nul_and_control_characters(tmp_path, small_model_dir):
    members = folder_members(small_model_dir)
    for odd in ("config.json\0.txt", "con\x07fig.json", "model.safetensors\n", "tokenizer.json\r"):
        with warnings.catch_warnings():  # zipfile cuts a name at NUL: "Duplicate name: 'config.json'"
            warnings.simplefilter("ignore", UserWarning)
            archive = write_zip(tmp_path / "odd.zip", dict(members, **{odd: b"x"}))
        try:
            load_model(archive)  # an extra oddly named member is ignored...
        except ModelFolderError as exc:  # ...or refused with one line
            assert "\n" not in str(exc) and "\r" not in str(exc), str(exc)


# -- special files in a folder -------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/zero").exists() or not hasattr(os, "mkfifo"), reason="needs /dev/zero and FIFOs")
def test_special_files_in_a_folder(small_folder, tmp_path):
    for name in READ_FILES:
        original = (small_folder / name).read_bytes()
        (small_folder / name).unlink()
        for kind in ("dev-zero", "fifo", "folder", "dangling"):
            target = small_folder / name
            if kind == "dev-zero":
                target.symlink_to("/dev/zero")
            elif kind == "fifo":
                os.mkfifo(target)
            elif kind == "folder":
                target.mkdir()
            else:
                target.symlink_to(tmp_path / "does-not-exist")
            if name == "card.json":  # card.json is optional: a non-file is simply no card
                try:
                    with time_limit(30):
                        load_model(small_folder)
                except ModelFolderError as exc:
                    assert "\n" not in str(exc)
            else:
                refused(small_folder)
            if target.is_dir() and not target.is_symlink():
                target.rmdir()
            else:
                target.unlink()
        (small_folder / name).write_bytes(original)
    load_model(small_folder)
