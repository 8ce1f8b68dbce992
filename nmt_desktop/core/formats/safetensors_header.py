"""Safetensors headers parsed and checked before any loader sees them.

A header claiming terabytes is refused without allocating, pickles and PyTorch zips posing as
weights are recognised and refused, and every tensor entry is checked against the file size.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from typing import Callable

import torch

from nmt_desktop.core.formats.model_folder_layout import (MAX_HEADER_BYTES, ModelFolderError, count_noun, is_int,
                                                   json_error_reason, short_json)

# safetensors dtype -> bytes per element (sub-byte dtypes are not accepted)
_ITEMSIZE = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "C64": 8,
    "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
    "F8_E4M3": 1, "F8_E4M3FNUZ": 1, "F8_E5M2": 1, "F8_E5M2FNUZ": 1,
}


@dataclass
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]


@dataclass
class SafetensorsFile:
    name: str
    entries: dict[str, TensorInfo]
    read_tensors: Callable[[], dict[str, torch.Tensor]]


def _looks_like_pickle(head: bytes) -> bool:
    """A pickle of protocol 2+ (b"\\x80" + protocol) or a torch.save zip (b"PK\\x03\\x04")."""
    return (len(head) >= 2 and head[0] == 0x80 and 1 <= head[1] <= 5) or head.startswith(b"PK\x03\x04")


def header_length(name: str, head: bytes, size: int) -> int:
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
        raise ModelFolderError(name, f"is truncated or not a safetensors file (only {count_noun(size, 'byte')})")
    if 2 <= n <= MAX_HEADER_BYTES and head[8:9] == b"{":
        raise ModelFolderError(name, f"is truncated (its header needs {8 + n} bytes but the file has only {size})")
    raise ModelFolderError(name, f"is not a safetensors file (its first 8 bytes give an impossible header length "
                                 f"for a file of {size} bytes); refusing to load it")


def parse_header(name: str, raw: bytes, size: int) -> dict[str, TensorInfo]:
    """Check every entry of a safetensors header against the file size; nothing is allocated from it."""
    def corrupt(problem: str) -> ModelFolderError:
        return ModelFolderError(name, f"is corrupt ({problem})")

    try:
        header = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise corrupt("its header is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise corrupt(f"its header is not valid JSON: {json_error_reason(exc)}") from None
    if not isinstance(header, dict):
        raise corrupt("its header is not a JSON object")
    data_len = size - 8 - len(raw)
    entries: dict[str, TensorInfo] = {}
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
        if not isinstance(shape, list) or len(shape) > 16 or not all(is_int(d) and d >= 0 for d in shape):
            raise corrupt(f"tensor {key!r} has an invalid shape {short_json(shape)}")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(is_int(o) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise corrupt(f"tensor {key!r} has invalid data_offsets {short_json(offsets)}")
        begin, end = offsets
        nbytes = math.prod(shape) * _ITEMSIZE[dtype]
        if end - begin != nbytes:
            raise corrupt(f"tensor {key!r} of shape {short_json(shape)} and dtype {dtype} needs {nbytes} bytes "
                          f"but its data_offsets span {end - begin}")
        if end > data_len:
            raise ModelFolderError(name, f"is truncated or corrupt (tensor {key!r} needs data up to byte {end} but "
                                         f"the file holds only {count_noun(max(data_len, 0), 'byte')} of data)")
        entries[key] = TensorInfo(dtype, tuple(shape))
        spans.append((begin, end, key))
    spans.sort()
    position = 0
    for begin, end, key in spans:
        if begin != position:
            raise corrupt(f"tensor {key!r} data does not start where the previous tensor's ends")
        position = end
    if position != data_len:
        raise corrupt(f"{count_noun(data_len - position, 'byte')} of data after the last tensor")
    return entries
