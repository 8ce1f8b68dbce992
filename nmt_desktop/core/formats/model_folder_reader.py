"""The files of a model folder or zip archive, read by name with explicit size caps.

Zip members are read into memory, never extracted; an archive is refused from its central directory
alone when it looks hostile (path traversal, duplicate names, zip bombs, too many members).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import torch
from safetensors import safe_open
from safetensors.torch import load as _safetensors_load

from nmt_desktop.core.formats.model_folder_layout import (CONFIG_FILE, CONTENTS, MAX_JSON_BYTES, MAX_WEIGHTS_BYTES,
                                                   ZIP_MAX_MEMBERS, ZIP_MAX_RATIO, ZIP_MAX_TOTAL, ZIP_RATIO_MIN_SIZE,
                                                   ModelFolderError, error_reason, json_error_reason)
from nmt_desktop.core.formats.safetensors_header import SafetensorsFile, header_length, parse_header


class ModelSource:
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

    def safetensors(self, name: str) -> "SafetensorsFile":
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> "ModelSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def missing(self, name: str, extra: str = "") -> ModelFolderError:
        """The error for a required file that is not there; `extra` follows "file not found"."""
        inside = " in the archive" if self.kind == "archive" else ""
        return ModelFolderError(self.where(name),
                                f"file not found{inside}{extra}; a model {self.kind} must contain {CONTENTS}")


class FolderSource(ModelSource):
    def __init__(self, path: Path):
        self.path = path
        self.name = path.name

    def _file(self, name: str) -> Path:
        return self.path / name

    def has(self, name: str) -> bool:
        return self._file(name).is_file()

    def where(self, name: str) -> str:
        return str(self._file(name))

    @contextmanager
    def _opened(self, name: str, limit: int) -> Iterator[tuple[BinaryIO, int]]:
        """The file open for reading, with its size, once that size is within `limit`; a missing file, or an
        OSError while it is open, becomes a ModelFolderError."""
        path = self._file(name)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > limit:
                    raise ModelFolderError(name, f"is too large ({size} bytes; the limit is {limit})")
                yield f, size
        except FileNotFoundError:
            raise self.missing(name) from None
        except OSError as exc:
            raise ModelFolderError(path, f"cannot be read ({exc.strerror or exc})") from None

    def read(self, name: str, limit: int) -> bytes:
        with self._opened(name, limit) as (f, size):
            # read what the file holds, not the cap: read(n) allocates n bytes first (256 MiB for a tokenizer)
            data = f.read(size + 1)
            if len(data) > size:  # it grew since it was measured: read on, still capped
                data += f.read(limit + 1 - len(data))
        if len(data) > limit:
            raise ModelFolderError(name, f"is too large (over {limit} bytes)")
        return data

    def safetensors(self, name: str) -> "SafetensorsFile":
        path = self._file(name)
        with self._opened(name, MAX_WEIGHTS_BYTES) as (f, size):
            head = f.read(9)
            n = header_length(name, head, size)
            f.seek(8)
            header = f.read(n)
        entries = parse_header(name, header, size)

        def load() -> dict[str, torch.Tensor]:
            with safe_open(str(path), framework="pt", device="cpu") as st:
                return {key: st.get_tensor(key) for key in st.keys()}

        return SafetensorsFile(name, entries, load)


class ZipSource(ModelSource):
    kind = "archive"

    def __init__(self, path: Path):
        self.path = path
        self.name = path.stem
        try:
            self.zip = zipfile.ZipFile(path)
        except Exception as exc:  # BadZipFile, EOFError, OSError, struct.error, ...
            raise ModelFolderError(path, f"is not a valid zip file ({error_reason(exc)})") from None
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
            raise ModelFolderError(self.where(name), f"cannot be read from the archive ({error_reason(exc)})") from None
        if len(data) != info.file_size:
            raise ModelFolderError(self.where(name), f"is truncated in the archive ({len(data)} of "
                                                     f"{info.file_size} bytes)")
        return data

    def safetensors(self, name: str) -> "SafetensorsFile":
        data = self.read(name, ZIP_MAX_TOTAL)
        n = header_length(name, data[:9], len(data))
        entries = parse_header(name, data[8:8 + n], len(data))
        return SafetensorsFile(name, entries, lambda: _safetensors_load(data))


def open_source(path: str | os.PathLike) -> ModelSource:
    path = Path(path)
    if path.is_dir():
        return FolderSource(path)
    if not path.exists():
        raise ModelFolderError(path, "not found; expected a model folder or a .zip of one")
    if not path.is_file():
        raise ModelFolderError(path, "is neither a model folder nor a .zip of one")
    if path.suffix.lower() != ".zip" and not zipfile.is_zipfile(path):
        raise ModelFolderError(path, "is neither a model folder nor a .zip of one")
    return ZipSource(path)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed")


def read_json(source: ModelSource, name: str, strict: bool = False) -> Any:
    raw = source.read(name, MAX_JSON_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelFolderError(name, "is not UTF-8 text") from None
    try:
        return json.loads(text, parse_constant=_reject_constant) if strict else json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ModelFolderError(name, f"is not valid JSON ({json_error_reason(exc)})") from None
