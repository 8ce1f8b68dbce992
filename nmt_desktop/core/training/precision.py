"""Training precision as a user choice: fp32, bf16 autocast, or fp16 autocast with a gradient scaler.

`auto` keeps what the trainer always did: bf16 autocast on a CUDA GPU that has bf16 units, fp32 elsewhere.
`precision_problem` is the one sentence the CLI and the Train tab show when a choice cannot run on a device
(it imports no torch, so the window can ask without touching the GPU); `precision_note` the sentence for a
choice that runs but slowly. `AmpPolicy` holds the autocast context and, for fp16, the GradScaler whose
state goes into every checkpoint.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def precision_problem(precision: str, device_type: str, bf16_supported: bool | None = None) -> str | None:
    """One sentence when `precision` cannot run on a device of `device_type` (cpu, cuda, mps), else None.

    `bf16_supported` is the GPU's answer (None: unknown, taken as yes)."""
    if precision not in PRECISIONS:
        return f"precision '{precision}' is not one of {', '.join(PRECISIONS)}"
    if precision == "bf16" and device_type == "cuda" and bf16_supported is False:
        return ("bf16 cannot run on this GPU (it has no bfloat16 units; they came with compute capability 8.0, "
                "Ampere); choose fp16 or fp32")
    return None


def precision_note(precision: str, device_type: str) -> str | None:
    """One sentence when `precision` runs on `device_type` but is a poor choice there, else None."""
    if precision == "fp16" and device_type == "cpu":
        return "fp16 on the CPU runs but is slow (CPUs have no fast float16 arithmetic); bf16 or fp32 is faster here"
    if precision in ("bf16", "fp16") and device_type == "mps":
        return f"{precision} on Apple GPUs needs a recent macOS and PyTorch; fp32 is the safe choice there"
    return None


def resolve_precision(precision: str, device_type: str, bf16_supported: bool) -> str:
    """`auto` -> bf16 on a CUDA GPU with bf16 units, else fp32; an explicit choice stays as it is."""
    if precision != "auto":
        return precision
    return "bf16" if device_type == "cuda" and bf16_supported else "fp32"


@dataclass
class AmpPolicy:
    """The resolved precision of a run on one device: its autocast context and, for fp16, its GradScaler."""

    precision: str  # fp32 | bf16 | fp16 (resolved)
    device_type: str  # cpu | cuda | mps
    scaler: Any = None  # torch.amp.GradScaler for fp16, else None

    @classmethod
    def for_device(cls, precision: str, device: Any) -> "AmpPolicy":
        """Resolve `precision` on a torch.device; raises ValueError with `precision_problem`'s sentence."""
        import torch

        bf16 = device.type != "cuda" or torch.cuda.is_bf16_supported(including_emulation=False)
        problem = precision_problem(precision, device.type, bf16)
        if problem:
            raise ValueError(problem)
        name = resolve_precision(precision, device.type, bf16)
        scaler = torch.amp.GradScaler(device.type) if name == "fp16" else None
        return cls(name, device.type, scaler)

    def autocast(self) -> contextlib.AbstractContextManager:
        import torch

        if self.precision == "fp32":
            return torch.autocast(self.device_type, enabled=False)
        return torch.autocast(self.device_type, dtype=torch.bfloat16 if self.precision == "bf16" else torch.float16)

    def state_dict(self) -> dict[str, Any] | None:
        """The scaler's state (JSON-able numbers) for a checkpoint; None without a scaler."""
        return dict(self.scaler.state_dict()) if self.scaler is not None else None

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        if self.scaler is not None and state:
            self.scaler.load_state_dict(state)
