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

Everything read is treated as hostile: the files come through model_folder_reader.py (folder or zip, read
with explicit caps, zip members never extracted), safetensors headers are checked before any loader
sees them (safetensors_header.py: a header claiming terabytes is refused without allocating, pickles
and PyTorch zips posing as weights are refused), and the config is checked against the weights'
headers before a real model is built from it (weights.py). Every failure raises `ModelFolderError`
(model_folder_layout.py), whose message is one sentence: "<file>: <problem>."
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
from safetensors.torch import save_file as _safetensors_save_file

from nmt_desktop.core.config import FORMAT_VERSION, ConfigError, ModelConfig
from nmt_desktop.core.formats.model_folder_layout import (CARD_FILE, CONFIG_FILE, CONTENTS, INT8_MAX, INT8_SCALE_SUFFIX,
                                                   MAX_POSITION_ENTRIES, MAX_TOKENIZER_BYTES, MiB, SHARD_PATTERN,
                                                   TOKENIZER_FILES, WEIGHTS_FILE, WEIGHTS_INDEX, ModelFolderError,
                                                   is_int)
from nmt_desktop.core.formats.model_folder_reader import ModelSource, open_source, read_json
from nmt_desktop.core.formats.weights import read_weights
from nmt_desktop.core.model.transformer import Transformer
from nmt_desktop.core.tokenizer import TokenizerError, TokenizerPair

__all__ = ["LoadedModel", "human_size", "load_model", "model_size_bytes", "read_card", "read_config", "save_model", "zip_model"]

_SAVE_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8)


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


# -- reading: config, card, tokenizers ----------------------------------------------------------


def _read_config(source: ModelSource) -> ModelConfig:
    if not source.has(CONFIG_FILE):
        raise source.missing(CONFIG_FILE)
    data = read_json(source, CONFIG_FILE, strict=True)
    if not isinstance(data, dict):
        raise ModelFolderError(CONFIG_FILE, f"must be a JSON object, got {_json_type(data)}")
    version = data.get("format_version", FORMAT_VERSION)
    if version != FORMAT_VERSION or isinstance(version, bool):
        shown = version if is_int(version) else repr(version)
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


def _read_card(source: ModelSource) -> dict:
    if not source.has(CARD_FILE):
        return {}
    card = read_json(source, CARD_FILE)
    if not isinstance(card, dict):
        raise ModelFolderError(CARD_FILE, f"must be a JSON object, got {_json_type(card)}")
    return card


def _read_tokenizers(source: ModelSource) -> TokenizerPair:
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


# -- reading: public API ------------------------------------------------------------------------


def read_config(path: str | os.PathLike) -> ModelConfig:
    """Read only config.json of a model folder or zip (cheap: for `info` and model pickers)."""
    with open_source(path) as source:
        return _read_config(source)


def read_card(path: str | os.PathLike) -> dict:
    """Read only card.json of a model folder or zip ({} when it has none): what a fine-tune reads of its parent."""
    with open_source(path) as source:
        return _read_card(source)


def load_model(path: str | os.PathLike, device: str | torch.device = "cpu") -> LoadedModel:
    """Load a model folder or zip: config, vocabularies, card and float32 weights, in eval mode."""
    device = torch.device(device)
    with open_source(path) as source:
        config = _read_config(source)
        card = _read_card(source)
        tokenizers = _read_tokenizers(source)
        mismatch = _vocab_mismatch(config, tokenizers)
        if mismatch:
            raise ModelFolderError(*mismatch)
        model = read_weights(source, config)
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
