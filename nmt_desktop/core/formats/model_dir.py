"""Model folders: save and load a trained model with its vocabularies, never unpickling anything.

A model folder holds

    config.json                       the architecture (`ModelConfig.to_json()`)
    model.safetensors                 the weights, or, when sharded,
      model.safetensors.index.json    {"metadata": {...}, "weight_map": {tensor: shard file}}
      model-00001-of-0000N.safetensors ...
    tokenizer.json                    one joint vocabulary, or
      source.tokenizer.json + target.tokenizer.json
    card.json                         optional free-form description (a JSON object)

The same files zipped (at the archive root or inside a single top-level folder) load as well.

Weights are float tensors named as in `Transformer.state_dict()` (F32, or F16 / BF16 / F64 when
saved with that dtype), except in int8 folders (`save_model(..., dtype=torch.int8)`, what
`import_marian(..., int8=True)` writes): there every 2-D weight matrix (the linear layers' weights
and the embeddings) is stored as

    NAME          I8,  shape (rows, cols)  q = round(w / scale[row]) clamped to [-127, 127]
    NAME.scale    F32, shape (rows,)       scale[row] = max |w[row, :]| / 127 (0 for an all-zero row)

(symmetric, one scale per row: w is about q * scale[row], off by at most scale[row] / 2), and the
1-D tensors (biases, norms, the logits bias) stay F32. Loading turns them back into float32. An I8
tensor is accepted only where the config implies a 2-D weight, and only with its F32 scale tensor
of shape (rows,) whose values are finite and non-negative; a scale tensor must belong to an I8
weight. Tensors and their scales may lie in different shards.

Everything read is treated as hostile: safetensors headers are parsed and checked here before any
loader sees them (a header claiming terabytes is refused without allocating), pickles and PyTorch
zips posing as weights are recognised and refused, zip members are read into memory with explicit
caps and never extracted, and a config is checked against the weights' header before a real model
is built from it. Every failure raises `ModelFolderError`, whose message is one sentence:
"<file>: <problem>."
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
from safetensors import safe_open
from safetensors.torch import load as _safetensors_load
from safetensors.torch import save_file as _safetensors_save_file

from nmt_desktop.core.config import FORMAT_VERSION, ConfigError, ModelConfig
from nmt_desktop.core.tokenizer import TokenizerError, TokenizerPair
from nmt_desktop.core.model.transformer import Transformer

__all__ = [
    "CARD_FILE", "CONFIG_FILE", "WEIGHTS_FILE", "WEIGHTS_INDEX", "LoadedModel", "ModelFolderError",
    "load_model", "model_size_bytes", "read_config", "save_model", "zip_model",
]

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"
CARD_FILE = "card.json"
TOKENIZER_FILES = (TokenizerPair.FILE_JOINT, TokenizerPair.FILE_SOURCE, TokenizerPair.FILE_TARGET)

SHARD_PATTERN = re.compile(r"model-\d{5}-of-\d{5}\.safetensors")

CONTENTS = (f"{CONFIG_FILE}, {WEIGHTS_FILE} (or {WEIGHTS_INDEX} and its shards) and "
            f"{TokenizerPair.FILE_JOINT} (or {TokenizerPair.FILE_SOURCE} and {TokenizerPair.FILE_TARGET})")

# Size limits on what is read (bytes).
MiB = 1 << 20
GiB = 1 << 30
MAX_JSON_BYTES = 16 * MiB  # config.json, card.json, the shard index
MAX_TOKENIZER_BYTES = 256 * MiB
MAX_WEIGHTS_BYTES = 64 * GiB  # one safetensors file in a folder (an archive is capped by ZIP_MAX_TOTAL)
MAX_HEADER_BYTES = 100 * MiB  # a safetensors JSON header (the safetensors library's own limit)
MAX_POSITION_ENTRIES = 1 << 26  # max_positions * d_model: the sinusoid table is built, not loaded
ZIP_MAX_TOTAL = 4 * GiB  # sum of the declared uncompressed sizes of all members
ZIP_MAX_MEMBERS = 10_000
ZIP_MAX_RATIO = 200  # uncompressed / compressed, refused above this for members over ZIP_RATIO_MIN_SIZE
ZIP_RATIO_MIN_SIZE = 10 * MiB

# safetensors dtype -> bytes per element (sub-byte dtypes are not accepted)
_ITEMSIZE = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "C64": 8,
    "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
    "F8_E4M3": 1, "F8_E4M3FNUZ": 1, "F8_E5M2": 1, "F8_E5M2FNUZ": 1,
}
_FLOAT_DTYPES = ("F32", "F16", "BF16", "F64")
_SAVE_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8)
INT8_SCALE_SUFFIX = ".scale"  # the per-row float32 scales of an int8 weight NAME are tensor NAME + this
INT8_MAX = 127  # symmetric: q in [-127, 127]


class ModelFolderError(Exception):
    """A model folder or archive is missing, unreadable, inconsistent or hostile.

    `str(err)` is one sentence on one line: "<file name or path>: <problem>."
    """

    def __init__(self, file: str | os.PathLike, problem: str):
        self.file = " ".join(str(file).split())
        self.problem = " ".join(str(problem).split()).rstrip(".")
        super().__init__(f"{self.file}: {self.problem}.")

    def __reduce__(self):  # keep it picklable despite the two-argument constructor
        return (type(self), (self.file, self.problem))


@dataclass
class LoadedModel:
    path: Path  # the folder or zip it came from
    name: str  # folder name or zip stem
    config: ModelConfig
    model: Transformer  # eval() mode, float32, on the requested device
    tokenizers: TokenizerPair
    card: dict = field(default_factory=dict)  # {} when card.json is absent


# -- saving -------------------------------------------------------------------------------------


def save_model(folder: str | os.PathLike, model: Transformer, tokenizers: TokenizerPair,
               card: dict | None = None, dtype: torch.dtype | None = None,
               max_shard_bytes: int | None = None) -> Path:
    """Write `model` with its vocabularies (and `card`) into `folder`; return the folder.

    dtype: None keeps the model's dtype; torch.float16 / torch.bfloat16 store half-size weights
    (loading converts back to float32); torch.int8 stores every 2-D weight matrix as int8 with one
    float32 scale per row (NAME + NAME.scale, see the module docstring) and the 1-D tensors as
    float32: about a quarter of the float32 size. max_shard_bytes: split the weights into
    model-0000i-of-0000N.safetensors files of at most this many bytes each (file size, header
    included) plus model.safetensors.index.json; a single file is written when everything fits.
    Files of the same name are overwritten; weight files of a previous save that this one does
    not use are removed, and so is card.json when `card` is None.
    Raises ValueError (not ModelFolderError) for arguments that cannot make a loadable folder.
    """
    folder = Path(folder)
    config = model.config
    mismatch = _vocab_mismatch(config, tokenizers)
    if mismatch:
        raise ValueError(f"{mismatch[0]}: {mismatch[1]}; the model and its tokenizers do not belong together")
    if card is not None and not isinstance(card, dict):
        raise ValueError(f"card must be a dict, got {type(card).__name__}")
    if dtype is not None and dtype not in _SAVE_DTYPES:
        raise ValueError(f"weights can be stored as float32, float16, bfloat16, float64 or int8, not {dtype}")
    if max_shard_bytes is not None and max_shard_bytes <= 0:
        raise ValueError(f"max_shard_bytes must be positive, got {max_shard_bytes}")

    tensors: dict[str, torch.Tensor] = {}
    for name, value in model.state_dict().items():
        value = value.detach()
        if not value.is_floating_point():
            raise ValueError(f"tensor '{name}' has dtype {value.dtype}; model weights must be floating point")
        if dtype == torch.int8:
            tensors.update(_quantize_int8(name, value))
            continue
        converted = value.to(device="cpu", dtype=dtype or value.dtype).contiguous()
        if dtype is not None and value.dtype != dtype and not bool(torch.isfinite(converted).all()) \
                and bool(torch.isfinite(value).all()):
            raise ValueError(f"tensor '{name}' has values outside the {dtype} range; store it as "
                             "torch.bfloat16 or torch.float32 instead")
        tensors[name] = converted
    card_text = None if card is None else json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    shards = _plan_shards(tensors, max_shard_bytes)  # may refuse: before anything is written

    folder.mkdir(parents=True, exist_ok=True)
    _write_text(folder / CONFIG_FILE, config.to_json())
    if len(shards) == 1:
        _write_safetensors(folder / WEIGHTS_FILE, tensors)
        keep: set[str] = {WEIGHTS_FILE}
    else:
        n = len(shards)
        weight_map: dict[str, str] = {}
        for i, names in enumerate(shards, 1):
            shard = f"model-{i:05d}-of-{n:05d}.safetensors"
            _write_safetensors(folder / shard, {k: tensors[k] for k in names})
            weight_map.update(dict.fromkeys(names, shard))
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        index = {"metadata": {"format": "pt", "total_size": total}, "weight_map": weight_map}
        _write_text(folder / WEIGHTS_INDEX, json.dumps(index, indent=2, sort_keys=True) + "\n")
        keep = {WEIGHTS_INDEX, *weight_map.values()}
    for stale in [WEIGHTS_FILE, WEIGHTS_INDEX, *(p.name for p in folder.iterdir() if SHARD_PATTERN.fullmatch(p.name))]:
        if stale not in keep:
            (folder / stale).unlink(missing_ok=True)

    tokenizers.save(folder)
    if card_text is None:
        (folder / CARD_FILE).unlink(missing_ok=True)
    else:
        _write_text(folder / CARD_FILE, card_text)
    return folder


def _quantize_int8(name: str, value: torch.Tensor) -> dict[str, torch.Tensor]:
    """{name: int8 matrix, name.scale: float32 per-row scales} for a 2-D tensor, {name: float32} otherwise."""
    value = value.to(device="cpu", dtype=torch.float32)
    if value.dim() != 2:
        return {name: value.contiguous()}
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"tensor '{name}' has non-finite values; int8 storage needs finite weights")
    scale = value.abs().amax(dim=1) / INT8_MAX  # (rows,)
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))  # all-zero rows: q = 0, scale 0
    q = torch.round(value / safe[:, None]).clamp_(-INT8_MAX, INT8_MAX).to(torch.int8)
    return {name: q.contiguous(), name + INT8_SCALE_SUFFIX: scale.contiguous()}


def zip_model(folder: str | os.PathLike, zip_path: str | os.PathLike) -> Path:
    """Zip the files of a model folder (top level, hidden files skipped) at the archive root."""
    folder, zip_path = Path(folder), Path(zip_path)
    if not folder.is_dir():
        raise ModelFolderError(folder, "is not a folder")
    if not (folder / CONFIG_FILE).is_file():
        raise ModelFolderError(folder / CONFIG_FILE, f"file not found; a model folder must contain {CONTENTS}")
    target = zip_path.resolve()
    files = sorted(p for p in folder.iterdir()
                   if p.is_file() and not p.name.startswith(".") and p.resolve() != target)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = zip_path.with_name(f".{zip_path.name}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for p in files:
                zf.write(p, arcname=p.name)
        os.replace(tmp, zip_path)
    finally:
        tmp.unlink(missing_ok=True)
    return zip_path


def _write_text(path: Path, text: str) -> None:
    _atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _write_safetensors(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    _atomic_write(path, lambda tmp: _safetensors_save_file(tensors, tmp, metadata={"format": "pt"}))


def _atomic_write(path: Path, write: Callable[[Path], Any]) -> None:
    """Write via a hidden temporary file and rename, so a crash never leaves half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _plan_shards(tensors: dict[str, torch.Tensor], max_bytes: int | None) -> list[list[str]]:
    """Group tensor names (in state-dict order) into files of at most `max_bytes` bytes each."""
    names = list(tensors)
    if max_bytes is None:
        return [names]

    def entry_bytes(name: str, t: torch.Tensor) -> int:  # generous bound on header bytes + data
        entry = {name: {"dtype": "F8_E4M3FNUZ", "shape": list(t.shape), "data_offsets": [10**19, 10**19]}}
        return len(json.dumps(entry)) + t.numel() * t.element_size()

    base = 8 + len(json.dumps({"__metadata__": {"format": "pt"}})) + 8  # length, braces, padding
    if base + sum(entry_bytes(k, v) for k, v in tensors.items()) <= max_bytes:
        return [names]
    shards: list[list[str]] = []
    size = base
    for name in names:
        need = entry_bytes(name, tensors[name])
        if base + need > max_bytes:
            raise ValueError(f"tensor '{name}' needs {_mib(need)}, more than max_shard_bytes ({_mib(max_bytes)}); "
                             "raise max_shard_bytes or store the weights as torch.float16, torch.bfloat16 or torch.int8")
        if not shards or size + need > max_bytes:
            shards.append([])
            size = base
        shards[-1].append(name)
        size += need
    return shards


def _mib(n: int) -> str:
    return f"{n / MiB:.2f} MiB"


# -- reading: sources ---------------------------------------------------------------------------


class _Source:
    """Files of a model folder or archive, read by name with explicit size caps."""

    path: Path
    name: str
    kind = "folder"

    def has(self, name: str) -> bool:
        raise NotImplementedError

    def where(self, name: str) -> str:
        """How to name a file in 'not found' messages."""
        raise NotImplementedError

    def read(self, name: str, limit: int) -> bytes:
        raise NotImplementedError

    def safetensors(self, name: str) -> "_SafetensorsFile":
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Source":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def missing(self, name: str, extra: str = "") -> ModelFolderError:
        """The error for a required file that is not there; `extra` follows "file not found"."""
        inside = " in the archive" if self.kind == "archive" else ""
        return ModelFolderError(self.where(name),
                                f"file not found{inside}{extra}; a model {self.kind} must contain {CONTENTS}")


class _FolderSource(_Source):
    def __init__(self, path: Path):
        self.path = path
        self.name = path.name

    def _file(self, name: str) -> Path:
        return self.path / name

    def has(self, name: str) -> bool:
        return self._file(name).is_file()

    def where(self, name: str) -> str:
        return str(self._file(name))

    def read(self, name: str, limit: int) -> bytes:
        path = self._file(name)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > limit:
                    raise ModelFolderError(name, f"is too large ({size} bytes; the limit is {limit})")
                data = f.read(limit + 1)
        except FileNotFoundError:
            raise self.missing(name) from None
        except OSError as exc:
            raise ModelFolderError(path, f"cannot be read ({exc.strerror or exc})") from None
        if len(data) > limit:
            raise ModelFolderError(name, f"is too large (over {limit} bytes)")
        return data

    def safetensors(self, name: str) -> "_SafetensorsFile":
        path = self._file(name)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > MAX_WEIGHTS_BYTES:
                    raise ModelFolderError(name, f"is too large ({size} bytes; the limit is {MAX_WEIGHTS_BYTES})")
                head = f.read(9)
                n = _header_length(name, head, size)
                f.seek(8)
                header = f.read(n)
        except FileNotFoundError:
            raise self.missing(name) from None
        except OSError as exc:
            raise ModelFolderError(path, f"cannot be read ({exc.strerror or exc})") from None
        entries = _parse_header(name, header, size)

        def load() -> dict[str, torch.Tensor]:
            with safe_open(str(path), framework="pt", device="cpu") as st:
                return {key: st.get_tensor(key) for key in st.keys()}

        return _SafetensorsFile(name, entries, load)


class _ZipSource(_Source):
    kind = "archive"

    def __init__(self, path: Path):
        self.path = path
        self.name = path.stem
        try:
            self.zip = zipfile.ZipFile(path)
        except Exception as exc:  # BadZipFile, EOFError, OSError, struct.error, ...
            raise ModelFolderError(path, f"is not a valid zip file ({_reason(exc)})") from None
        try:
            self.prefix = self._inspect()
        except BaseException:
            self.zip.close()
            raise

    def _inspect(self) -> str:
        """Refuse hostile archives from the central directory alone; return the model's folder prefix."""
        infos = self.zip.infolist()
        if len(infos) > ZIP_MAX_MEMBERS:
            raise ModelFolderError(self.path, f"has {len(infos)} members, more than a model archive can ({ZIP_MAX_MEMBERS})")
        seen: set[str] = set()
        total = 0
        for info in infos:
            name = info.filename
            parts = name.replace("\\", "/").split("/")
            if (name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts
                    or "\0" in name):
                raise ModelFolderError(self.path, f"refusing archive member {name!r} (absolute path or '..' "
                                                  "component: path traversal)")
            if name in seen:
                raise ModelFolderError(self.path, f"has more than one member named {name!r}")
            seen.add(name)
            total += info.file_size
            if info.file_size > ZIP_RATIO_MIN_SIZE and info.file_size > ZIP_MAX_RATIO * max(info.compress_size, 1):
                ratio = info.file_size / max(info.compress_size, 1)
                raise ModelFolderError(self.path, f"refusing a likely zip bomb (member {name!r} claims to expand "
                                                  f"from {info.compress_size} to {info.file_size} bytes, ratio {ratio:.0f})")
        if total > ZIP_MAX_TOTAL:
            raise ModelFolderError(self.path, f"refusing a likely zip bomb (members claim {total} bytes "
                                              f"uncompressed, over the limit of {ZIP_MAX_TOTAL})")
        files = [n for n in seen if not n.endswith("/") and not n.startswith("__MACOSX/")]
        if CONFIG_FILE in files:
            return ""
        tops = sorted({n.split("/", 1)[0] for n in files if n.count("/") == 1 and n.endswith("/" + CONFIG_FILE)})
        if len(tops) == 1:
            return tops[0] + "/"
        if len(tops) > 1:
            raise ModelFolderError(self.path, f"holds several model folders ({', '.join(tops)}); zip one model folder")
        raise ModelFolderError(f"{self.path}/{CONFIG_FILE}", "file not found at the archive root or inside a single "
                                                             f"top-level folder; a model archive must contain {CONTENTS}")

    def close(self) -> None:
        self.zip.close()

    def _info(self, name: str) -> zipfile.ZipInfo | None:
        try:
            return self.zip.getinfo(self.prefix + name)
        except KeyError:
            return None

    def has(self, name: str) -> bool:
        return self._info(name) is not None

    def where(self, name: str) -> str:
        return f"{self.path}/{self.prefix}{name}"

    def read(self, name: str, limit: int) -> bytes:
        info = self._info(name)
        if info is None:
            raise self.missing(name)
        if info.file_size > limit:
            raise ModelFolderError(name, f"is too large ({info.file_size} bytes; the limit is {limit})")
        if info.flag_bits & 0x1:
            raise ModelFolderError(self.where(name), "is encrypted; zip the model without a password")
        try:
            with self.zip.open(info) as f:
                data = f.read(info.file_size + 1)  # zipfile never yields more than the declared size
        except Exception as exc:  # BadZipFile (CRC), EOFError, zlib.error, NotImplementedError (method), ...
            raise ModelFolderError(self.where(name), f"cannot be read from the archive ({_reason(exc)})") from None
        if len(data) != info.file_size:
            raise ModelFolderError(self.where(name), f"is truncated in the archive ({len(data)} of "
                                                     f"{info.file_size} bytes)")
        return data

    def safetensors(self, name: str) -> "_SafetensorsFile":
        data = self.read(name, ZIP_MAX_TOTAL)
        n = _header_length(name, data[:9], len(data))
        entries = _parse_header(name, data[8:8 + n], len(data))
        return _SafetensorsFile(name, entries, lambda: _safetensors_load(data))


def _open_source(path: str | os.PathLike) -> _Source:
    path = Path(path)
    if path.is_dir():
        return _FolderSource(path)
    if not path.exists():
        raise ModelFolderError(path, "not found; expected a model folder or a .zip of one")
    if not path.is_file():
        raise ModelFolderError(path, "is neither a model folder nor a .zip of one")
    if path.suffix.lower() != ".zip" and not zipfile.is_zipfile(path):
        raise ModelFolderError(path, "is neither a model folder nor a .zip of one")
    return _ZipSource(path)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0][:200] if text else type(exc).__name__
    return line.rstrip(".")


# -- reading: safetensors headers ---------------------------------------------------------------


@dataclass
class _TensorInfo:
    dtype: str
    shape: tuple[int, ...]


@dataclass
class _SafetensorsFile:
    name: str
    entries: dict[str, _TensorInfo]
    read_tensors: Callable[[], dict[str, torch.Tensor]]


def _looks_like_pickle(head: bytes) -> bool:
    """A pickle of protocol 2+ (b"\\x80" + protocol) or a torch.save zip (b"PK\\x03\\x04")."""
    return (len(head) >= 2 and head[0] == 0x80 and 1 <= head[1] <= 5) or head.startswith(b"PK\x03\x04")


def _header_length(name: str, head: bytes, size: int) -> int:
    """The JSON header length N from the first bytes (at least 9 when the file has them); refuse
    pickles and anything else that is not safetensors before a loader sees it."""
    if len(head) >= 9:
        (n,) = struct.unpack("<Q", head[:8])
        if 2 <= n <= min(MAX_HEADER_BYTES, size - 8) and head[8:9] == b"{":
            return n
    if _looks_like_pickle(head):
        raise ModelFolderError(name, "is a pickle/PyTorch file, not safetensors; refusing to load it "
                                     "(pickles can run code)")
    if len(head) < 9:
        raise ModelFolderError(name, f"is truncated or not a safetensors file (only {_count(size, 'byte')})")
    if 2 <= n <= MAX_HEADER_BYTES and head[8:9] == b"{":
        raise ModelFolderError(name, f"is truncated (its header needs {8 + n} bytes but the file has only {size})")
    raise ModelFolderError(name, f"is not a safetensors file (its first 8 bytes give an impossible header length "
                                 f"for a file of {size} bytes); refusing to load it")


def _parse_header(name: str, raw: bytes, size: int) -> dict[str, _TensorInfo]:
    """Check every entry of a safetensors header against the file size; nothing is allocated from it."""
    def corrupt(problem: str) -> ModelFolderError:
        return ModelFolderError(name, f"is corrupt ({problem})")

    try:
        header = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise corrupt("its header is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise corrupt(f"its header is not valid JSON: {_json_reason(exc)}") from None
    if not isinstance(header, dict):
        raise corrupt("its header is not a JSON object")
    data_len = size - 8 - len(raw)
    entries: dict[str, _TensorInfo] = {}
    spans: list[tuple[int, int, str]] = []
    for key, entry in header.items():
        if key == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise corrupt("its __metadata__ is not an object of strings")
            continue
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise corrupt(f"tensor {key!r} must have exactly dtype, shape and data_offsets")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in _ITEMSIZE:
            raise corrupt(f"tensor {key!r} has unknown dtype {dtype!r}")
        if not isinstance(shape, list) or len(shape) > 16 or not all(_is_int(d) and d >= 0 for d in shape):
            raise corrupt(f"tensor {key!r} has an invalid shape {_short(shape)}")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_int(o) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise corrupt(f"tensor {key!r} has invalid data_offsets {_short(offsets)}")
        begin, end = offsets
        nbytes = math.prod(shape) * _ITEMSIZE[dtype]
        if end - begin != nbytes:
            raise corrupt(f"tensor {key!r} of shape {_short(shape)} and dtype {dtype} needs {nbytes} bytes "
                          f"but its data_offsets span {end - begin}")
        if end > data_len:
            raise ModelFolderError(name, f"is truncated or corrupt (tensor {key!r} needs data up to byte {end} but "
                                         f"the file holds only {_count(max(data_len, 0), 'byte')} of data)")
        entries[key] = _TensorInfo(dtype, tuple(shape))
        spans.append((begin, end, key))
    spans.sort()
    position = 0
    for begin, end, key in spans:
        if begin != position:
            raise corrupt(f"tensor {key!r} data does not start where the previous tensor's ends")
        position = end
    if position != data_len:
        raise corrupt(f"{_count(data_len - position, 'byte')} of data after the last tensor")
    return entries


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _json_reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return _reason(exc)


# -- reading: JSON files, config, tokenizers ----------------------------------------------------


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed")


def _read_json(source: _Source, name: str, strict: bool = False) -> Any:
    raw = source.read(name, MAX_JSON_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelFolderError(name, "is not UTF-8 text") from None
    try:
        return json.loads(text, parse_constant=_reject_constant) if strict else json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ModelFolderError(name, f"is not valid JSON ({_json_reason(exc)})") from None


def _read_config(source: _Source) -> ModelConfig:
    if not source.has(CONFIG_FILE):
        raise source.missing(CONFIG_FILE)
    data = _read_json(source, CONFIG_FILE, strict=True)
    if not isinstance(data, dict):
        raise ModelFolderError(CONFIG_FILE, f"must be a JSON object, got {_json_type(data)}")
    version = data.get("format_version", FORMAT_VERSION)
    if version != FORMAT_VERSION or isinstance(version, bool):
        shown = version if _is_int(version) else repr(version)
        raise ModelFolderError(CONFIG_FILE, f"format version {shown} is not supported "
                                            f"(this nmt-desktop reads format {FORMAT_VERSION})")
    try:
        config = ModelConfig.from_dict(data)
    except ConfigError as exc:
        raise ModelFolderError(CONFIG_FILE, str(exc)) from None
    if config.max_positions * config.d_model > MAX_POSITION_ENTRIES:
        raise ModelFolderError(CONFIG_FILE, f"max_positions ({config.max_positions}) times d_model ({config.d_model}) "
                                            f"is implausibly large (limit {MAX_POSITION_ENTRIES})")
    return config


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _read_card(source: _Source) -> dict:
    if not source.has(CARD_FILE):
        return {}
    card = _read_json(source, CARD_FILE)
    if not isinstance(card, dict):
        raise ModelFolderError(CARD_FILE, f"must be a JSON object, got {_json_type(card)}")
    return card


def _read_tokenizers(source: _Source) -> TokenizerPair:
    joint, src, tgt = TOKENIZER_FILES
    if source.has(joint):
        names = [joint]
    elif source.has(src) or source.has(tgt):
        names = [src, tgt]
        for name in names:
            if not source.has(name):
                raise source.missing(name)
    else:
        raise source.missing(joint, f" (nor {src} and {tgt})")
    texts = {}
    for name in names:
        raw = source.read(name, MAX_TOKENIZER_BYTES)
        try:
            texts[name] = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ModelFolderError(name, "is not UTF-8 text") from None
    try:
        return TokenizerPair.from_files(texts)
    except TokenizerError as exc:
        raise _from_tokenizer_error(exc, names[0]) from None


def _from_tokenizer_error(exc: TokenizerError, default_file: str) -> ModelFolderError:
    message = " ".join(str(exc).split())
    for name in TOKENIZER_FILES:
        if message.startswith(name + ": "):
            return ModelFolderError(name, message[len(name) + 2:])
    return ModelFolderError(default_file, message)


def _vocab_mismatch(config: ModelConfig, pair: TokenizerPair) -> tuple[str, str] | None:
    """(file, problem) for the first tokenizer whose size differs from the config, else None."""
    joint, src, tgt = TOKENIZER_FILES
    sides = [(pair.source, joint if pair.joint else src, "src_vocab_size"),
             (pair.target, joint if pair.joint else tgt, "tgt_vocab_size")]
    for tokenizer, file, field_name in sides:
        expected = getattr(config, field_name)
        if tokenizer.vocab_size != expected:
            return file, f"vocabulary has {tokenizer.vocab_size} tokens but {CONFIG_FILE} says {field_name} {expected}"
    return None


# -- reading: weights ---------------------------------------------------------------------------


def _weight_files(source: _Source) -> tuple[list[_SafetensorsFile], dict[str, str] | None]:
    """Parsed headers of the weight file(s), plus the index's weight map when sharded."""
    if source.has(WEIGHTS_FILE):
        return [source.safetensors(WEIGHTS_FILE)], None
    if not source.has(WEIGHTS_INDEX):
        raise source.missing(WEIGHTS_FILE)
    index = _read_json(source, WEIGHTS_INDEX, strict=True)
    if not isinstance(index, dict) or not isinstance(index.get("weight_map"), dict):
        raise ModelFolderError(WEIGHTS_INDEX, "must be a JSON object with a \"weight_map\" object")
    weight_map = index["weight_map"]
    shards: list[str] = []
    for tensor, shard in weight_map.items():
        if not isinstance(shard, str) or not shard.endswith(".safetensors") or "/" in shard or "\\" in shard \
                or shard.startswith(".") or "\0" in shard:
            raise ModelFolderError(WEIGHTS_INDEX, f"tensor {tensor!r} maps to {_short(shard)}, which is not a plain "
                                                  ".safetensors file name")
        if shard not in shards:
            shards.append(shard)
    if not shards:
        raise ModelFolderError(WEIGHTS_INDEX, "its weight_map lists no tensors")
    files = []
    for shard in shards:
        if not source.has(shard):
            raise ModelFolderError(source.where(shard), f"file not found (listed in {WEIGHTS_INDEX})")
        files.append(source.safetensors(shard))
    return files, weight_map


def _minimum_parameters(config: ModelConfig) -> int:
    """Parameters any model of `config` has at least: its embedding matrices and, in every layer,
    the attention (4 d^2) and feed-forward (2 d ffn) weights. The real count is at most about
    three times this, so bounding it by the weights held bounds what building the model allocates."""
    d = config.d_model
    total = config.tgt_vocab_size * d
    total += (config.encoder_layers + config.decoder_layers) * (4 * d * d + 2 * d * config.ffn_dim)
    if not config.shared_vocab:
        total += config.src_vocab_size * d
    return total


def _read_weights(source: _Source, config: ModelConfig) -> Transformer:
    """Check the weight files against `config` and return the model built from them (float32, CPU)."""
    files, weight_map = _weight_files(source)
    found: dict[str, tuple[_TensorInfo, str]] = {}
    for f in files:
        for key, info in f.entries.items():
            if weight_map is not None and weight_map.get(key) != f.name:
                raise ModelFolderError(f.name, f"holds tensor {key!r}, which {WEIGHTS_INDEX} does not list for this file")
            if key in found:
                raise ModelFolderError(f.name, f"tensor {key!r} is also in {found[key][1]}")
            found[key] = (info, f.name)
    if weight_map is not None:
        for key, shard in weight_map.items():
            if key not in found:
                raise ModelFolderError(WEIGHTS_INDEX, f"lists tensor {key!r} in {shard}, but that file does not hold it")

    # A hostile config must not make us allocate more than the weight files hold: check a cheap
    # lower bound on the parameters it implies before building the model it describes.
    held = sum(math.prod(info.shape) for info, _ in found.values())
    minimum = _minimum_parameters(config)
    if minimum > 2 * held + (1 << 20):  # slack: small mismatches get the precise message below
        raise ModelFolderError(files[0].name if weight_map is None else WEIGHTS_INDEX,
                               f"holds {held} weights, but {CONFIG_FILE} implies at least {minimum}")
    model = Transformer(config)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    default_file = WEIGHTS_INDEX if weight_map is not None else WEIGHTS_FILE
    problems: list[tuple[str, str]] = []
    scales: dict[str, str] = {}  # int8 weight -> its scale tensor
    for key, shape in expected.items():
        if key not in found:
            problems.append((default_file, f"tensor {key!r} is missing, but {CONFIG_FILE} implies it with shape "
                                           f"{list(shape)}"))
            continue
        info, file = found[key]
        if info.shape != shape:
            problems.append((file, f"tensor {key!r} has shape {list(info.shape)}, but {CONFIG_FILE} implies "
                                   f"{list(shape)}"))
        elif info.dtype == "I8":
            scale_key = key + INT8_SCALE_SUFFIX
            scale = found.get(scale_key) if scale_key not in expected else None
            if len(shape) != 2:
                problems.append((file, f"tensor {key!r} has dtype I8, but only 2-D weight matrices may be stored as "
                                       f"int8 and {CONFIG_FILE} implies shape {list(shape)}"))
            elif scale is None:
                problems.append((file, f"tensor {key!r} has dtype I8 but its scale tensor {scale_key!r} is missing"))
            elif scale[0].dtype != "F32" or scale[0].shape != shape[:1]:
                problems.append((scale[1], f"tensor {scale_key!r} has dtype {scale[0].dtype} and shape "
                                           f"{list(scale[0].shape)}, but the scales of the int8 weight {key!r} must "
                                           f"be F32 of shape {list(shape[:1])}"))
            else:
                scales[key] = scale_key
        elif info.dtype not in _FLOAT_DTYPES:
            problems.append((file, f"tensor {key!r} has dtype {info.dtype}, but weights must be "
                                   f"{', '.join(_FLOAT_DTYPES[:-1])} or {_FLOAT_DTYPES[-1]} (or I8 with per-row "
                                   "scales for 2-D weights)"))
    scale_keys = {key + INT8_SCALE_SUFFIX for key, shape in expected.items()
                  if key in found and found[key][0].dtype == "I8" and len(shape) == 2}
    for key, (info, file) in found.items():
        if key not in expected and key not in scale_keys:
            problems.append((file, f"holds tensor {key!r}, which {CONFIG_FILE} does not imply"))
    if problems:
        file, problem = problems[0]
        more = len(problems) - 1
        if more:
            problem += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise ModelFolderError(file, problem)

    state: dict[str, torch.Tensor] = {}
    raw: dict[str, torch.Tensor] = {}
    for f in files:
        try:
            tensors = f.read_tensors()
        except Exception as exc:  # safetensors.SafetensorError and friends
            raise ModelFolderError(f.name, f"is corrupt ({_reason(exc)})") from None
        for key, value in tensors.items():
            if key in scales or key in scale_keys:
                raw[key] = value  # int8 weights and their scales: combined below, across shards
            else:
                state[key] = value.float()
    for key, scale_key in scales.items():
        scale = raw.pop(scale_key)
        if scale.dtype != torch.float32 or not bool((torch.isfinite(scale) & (scale >= 0)).all()):
            raise ModelFolderError(found[scale_key][1], f"tensor {scale_key!r} holds scales that are not finite "
                                                        "non-negative numbers")
        q = raw.pop(key)
        if q.dtype != torch.int8:  # pragma: no cover - the header check above guarantees it
            raise ModelFolderError(found[key][1], f"tensor {key!r} is not int8")
        state[key] = q.float().mul_(scale[:, None])
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:  # pragma: no cover - the checks above catch every mismatch first
        raise ModelFolderError(files[0].name, f"does not fit the model ({_reason(exc)})") from None
    return model.float()


# -- reading: public API ------------------------------------------------------------------------


def read_config(path: str | os.PathLike) -> ModelConfig:
    """Read only config.json of a model folder or zip (cheap: for `info` and model pickers)."""
    with _open_source(path) as source:
        return _read_config(source)


def load_model(path: str | os.PathLike, device: str | torch.device = "cpu") -> LoadedModel:
    """Load a model folder or zip: config, vocabularies, card and float32 weights, in eval mode."""
    device = torch.device(device)
    with _open_source(path) as source:
        config = _read_config(source)
        card = _read_card(source)
        tokenizers = _read_tokenizers(source)
        mismatch = _vocab_mismatch(config, tokenizers)
        if mismatch:
            raise ModelFolderError(*mismatch)
        model = _read_weights(source, config)
        name, where = source.name, source.path
    model = model.to(device=device, dtype=torch.float32).eval()
    return LoadedModel(path=where, name=name, config=config, model=model, tokenizers=tokenizers, card=card)


def human_size(n: int) -> str:
    """Bytes as a short text: 950 B, 12.3 KB, 4.5 MB, 1.2 GB (powers of 1000)."""
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1000:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"


def model_size_bytes(path: str | os.PathLike) -> int:
    """Total bytes of a model folder's files (recursively), or the size of a zip file."""
    path = Path(path)
    try:
        if path.is_dir():
            total = 0
            for root, _dirs, files in os.walk(path):
                for f in files:
                    st = os.lstat(os.path.join(root, f))
                    if stat.S_ISREG(st.st_mode):
                        total += st.st_size
            return total
        if path.is_file():
            return path.stat().st_size
    except OSError as exc:
        raise ModelFolderError(path, f"cannot be read ({exc.strerror or exc})") from None
    raise ModelFolderError(path, "not found; expected a model folder or a .zip of one")
