"""The weights of a model folder: the shard index, checks against the config, int8 back to float32.

A config is checked against the weights' headers before a real model is built from it, so a hostile
config cannot make the loader allocate more than the weight files hold.
"""

from __future__ import annotations

import math

import torch

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.formats.model_folder_layout import (CONFIG_FILE, INT8_SCALE_SUFFIX, WEIGHTS_FILE, WEIGHTS_INDEX,
                                                   ModelFolderError, error_reason, short_json)
from nmt_desktop.core.formats.model_folder_reader import ModelSource, read_json
from nmt_desktop.core.formats.safetensors_header import SafetensorsFile, TensorInfo
from nmt_desktop.core.model.transformer import Transformer

_FLOAT_DTYPES = ("F32", "F16", "BF16", "F64")


def _weight_files(source: ModelSource) -> tuple[list[SafetensorsFile], dict[str, str] | None]:
    """Parsed headers of the weight file(s), plus the index's weight map when sharded."""
    if source.has(WEIGHTS_FILE):
        return [source.safetensors(WEIGHTS_FILE)], None
    if not source.has(WEIGHTS_INDEX):
        raise source.missing(WEIGHTS_FILE)
    index = read_json(source, WEIGHTS_INDEX, strict=True)
    if not isinstance(index, dict) or not isinstance(index.get("weight_map"), dict):
        raise ModelFolderError(WEIGHTS_INDEX, "must be a JSON object with a \"weight_map\" object")
    weight_map = index["weight_map"]
    shards: list[str] = []
    for tensor, shard in weight_map.items():
        if not isinstance(shard, str) or not shard.endswith(".safetensors") or "/" in shard or "\\" in shard \
                or shard.startswith(".") or "\0" in shard:
            raise ModelFolderError(WEIGHTS_INDEX, f"tensor {tensor!r} maps to {short_json(shard)}, which is not a plain "
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


def read_weights(source: ModelSource, config: ModelConfig) -> Transformer:
    """Check the weight files against `config` and return the model built from them (float32, CPU)."""
    files, weight_map = _weight_files(source)
    found: dict[str, tuple[TensorInfo, str]] = {}
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
            raise ModelFolderError(f.name, f"is corrupt ({error_reason(exc)})") from None
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
        raise ModelFolderError(files[0].name, f"does not fit the model ({error_reason(exc)})") from None
    return model.float()
