"""What online learning (online_learning.py) learned, kept beside the memory it learned from: one safetensors file
per model (`<memory file>.learned-<fingerprint>.safetensors`), so a later `translate --memory M` (or another
model) finds the update that belongs to it. Written atomically (a temporary file in the same folder, fsync'd,
then `os.replace`); never pickle.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from torch import Tensor, nn

__all__ = ["LearnedWeights", "LearnedWeightsError", "fingerprint", "learned_beside"]


class LearnedWeightsError(ValueError):
    """A learned-weights file that cannot be read (one sentence, naming the file)."""


def fingerprint(model: nn.Module) -> str:
    """16 hex digits of the sha256 of the model's parameter names, shapes and float32 bytes (the parent's)."""
    digest = hashlib.sha256()
    for name, p in model.named_parameters():
        digest.update(f"{name}{tuple(p.shape)}".encode())
        digest.update(p.detach().float().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def learned_beside(memory_path: Path | str) -> bool:
    """Whether any model's learned update is kept beside this memory file."""
    memory_path = Path(memory_path)
    return any(memory_path.parent.glob(f"{memory_path.name}.learned-*.safetensors"))


class LearnedWeights:
    """The file of one model's learned update beside one memory file."""

    def __init__(self, memory_path: Path | str, model_fingerprint: str):
        memory_path = Path(memory_path)
        self.memory_path = memory_path
        self.path = memory_path.with_name(f"{memory_path.name}.learned-{model_fingerprint}.safetensors")

    def load(self) -> tuple[dict[str, Tensor], dict[str, str]] | None:
        """(tensors, metadata), or None when nothing was kept."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file, safe_open

        if not self.path.is_file():
            return None
        try:
            with safe_open(str(self.path), framework="pt") as f:
                meta = dict(f.metadata() or {})
            return load_file(str(self.path)), meta
        except (SafetensorError, OSError, ValueError) as exc:
            raise LearnedWeightsError(f"{self.path}: cannot read the learned weights ({exc}); delete the file to "
                                      f"start from the parent model") from None

    def save(self, tensors: dict[str, Tensor], metadata: dict[str, str]) -> None:
        from safetensors.torch import save_file

        tmp = self.path.with_name(self.path.name + ".tmp")
        save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, str(tmp), metadata=metadata)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def drop(self) -> None:
        self.path.unlink(missing_ok=True)
