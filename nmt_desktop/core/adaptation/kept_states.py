"""The memory segments' forced decoder states kept beside the memory, per model (as learned_weights.py keeps
learned weights), so a fresh process (`translate --memory M`) does not decode again the segments an earlier one
did: `<memory file>.states-<fingerprint>/`, one safetensors shard per write holding the states that write
added (each written atomically: a temporary file in the same folder, fsync'd, then `os.replace`; never pickle).

A state is named by its entry's id and a digest of its source and target, so an edited entry is decoded anew;
the fingerprint names the model (its parameters, and int8 or not: `model_fingerprint`). A shard that cannot be read is passed over
(its states are decoded again). Past `SHARDS` shards the next load merges them into one, keeping each entry's
latest state only.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import torch
from torch import Tensor, nn

from nmt_desktop.core.adaptation.learned_weights import fingerprint

__all__ = ["KeptStates", "SHARDS", "drop_kept_states", "model_fingerprint", "state_name"]

SHARDS = 16


def model_fingerprint(model: nn.Module, int8: bool) -> str:
    """16 hex digits naming the model: a float model's are learned_weights.fingerprint's (the name its learned
    weights are kept under too); an int8 copy's, of its whole state (its packed weights are no parameters) and the
    word int8, so the forced states of two models share a name only when the models are equal."""
    if not int8:
        return fingerprint(model)
    digest = hashlib.sha256(b"int8")
    for name, value in model.state_dict().items():
        for tensor in value if isinstance(value, tuple) else (value,):  # packed weights: (weight, bias)
            if isinstance(tensor, Tensor):
                tensor = tensor.dequantize() if tensor.is_quantized else tensor
                digest.update(f"{name}{tuple(tensor.shape)}{tensor.dtype}".encode())
                digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()[:16]


def state_name(entry_id: int, source: str, target: str) -> str:
    """A segment's tensor name: its entry id and 16 hex digits of the sha256 of its source and target."""
    digest = hashlib.sha256((source + "\0" + target).encode()).hexdigest()[:16]
    return f"{entry_id}-{digest}"


def drop_kept_states(memory_path: Path | str, model_fingerprint: str) -> None:
    """Delete the states kept beside `memory_path` for one model (a learned model that was replaced or cleared:
    nothing will ask for its states again); a folder that cannot be deleted is left, as a cache."""
    import shutil

    memory_path = Path(memory_path)
    shutil.rmtree(memory_path.with_name(f"{memory_path.name}.states-{model_fingerprint}"), ignore_errors=True)


class KeptStates:
    """The kept states of one model beside one memory file, read lazily (each tensor when it is asked for)."""

    def __init__(self, memory_path: Path | str, model_fingerprint: str):
        memory_path = Path(memory_path)
        self.memory_path = memory_path
        self.folder = memory_path.with_name(f"{memory_path.name}.states-{model_fingerprint}")
        self._where: dict[str, object] | None = None  # name -> the open shard holding it, or its path
        self._read_only = False  # a write failed: nothing more is written

    def _shards(self) -> list[Path]:
        try:
            return sorted(self.folder.glob("*.safetensors")) if self.folder.is_dir() else []
        except OSError:  # unreadable folder: nothing kept
            return []

    def _index(self) -> dict[str, object]:
        """Every kept name and its open shard (later shards win); opened at the first lookup."""
        if self._where is None:
            from safetensors import SafetensorError, safe_open

            shards = self._shards()
            if len(shards) > SHARDS:
                try:
                    shards = self._merge(shards)
                except OSError:  # cannot write the merged shard: read them as they are
                    pass
            self._where = {}
            for path in shards:
                try:
                    handle = safe_open(str(path), framework="pt")
                    for name in handle.keys():
                        self._where[name] = handle
                except (SafetensorError, OSError, ValueError):
                    continue  # unreadable: its segments are decoded again
        return self._where

    def get(self, name: str) -> Tensor | None:
        where = self._index().get(name)
        if isinstance(where, Path):  # written by this process: opened when asked for (no descriptor held)
            from safetensors import safe_open

            with safe_open(str(where), framework="pt") as handle:
                return handle.get_tensor(name)
        return None if where is None else where.get_tensor(name)  # type: ignore[attr-defined]

    def put(self, states: dict[str, Tensor]) -> None:
        """Keep these states: one new shard. Where the folder cannot be written (a read-only place, a full
        disk) nothing is kept from then on: the translation goes on, the next process decodes them again."""
        if not states or self._read_only:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{len(self._shards()):06d}-{uuid.uuid4().hex[:8]}.safetensors"
            self._write(path, states)
        except OSError:
            self._read_only = True
            return
        index = self._index()
        for name in states:
            index[name] = path

    @staticmethod
    def _write(path: Path, states: dict[str, Tensor]) -> None:
        from safetensors.torch import save_file

        tmp = path.with_name(path.name + ".tmp")
        save_file({k: v.detach().cpu().contiguous() for k, v in states.items()}, str(tmp))
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def _merge(self, shards: list[Path]) -> list[Path]:
        """The shards merged into one (each entry's latest state only), the old ones deleted."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        latest: dict[str, tuple[str, Tensor]] = {}  # entry id -> (name, states)
        for path in shards:
            try:
                for name, tensor in load_file(str(path)).items():
                    latest[name.split("-")[0]] = (name, tensor)
            except (SafetensorError, OSError, ValueError):
                continue
        merged = self.folder / f"{0:06d}-{uuid.uuid4().hex[:8]}.safetensors"
        self._write(merged, dict(latest.values()))
        for path in shards:
            path.unlink(missing_ok=True)
        return [merged]
