"""Test helpers for hostile and hand-made model files: a pickle payload that proves code ran, a safetensors file
written byte by byte, a folder's files as bytes, and a zip written from them.

Imported as `from model_bytes import Payload` (tests/ is on sys.path: tests/conftest.py's folder)."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path


class Payload:
    """Unpickling this creates `marker` (the file is the proof that code ran)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def raw_safetensors(header: dict | bytes, data: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file: the 8-byte header length (`length`, else the true one), the header (JSON of a dict,
    or the bytes given) padded with spaces to 8 bytes, then `data`."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def folder_members(folder: Path) -> dict[str, bytes]:
    """The files directly in `folder`: name -> bytes, by name."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def write_zip(path: Path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> Path:
    """A zip at `path` holding `members` (name -> bytes), in that order."""
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path
