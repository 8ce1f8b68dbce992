"""Devices a training run can use: CUDA GPUs (name and memory), Apple MPS, and the CPU.

The window never trains, so it should not hold a CUDA context (hundreds of MB of GPU memory for as
long as the app is open): `detect_devices()` only asks torch whether CUDA is there, and reads the
GPUs' names and memory in a short child process (`cuda_details()`), which gives its context back
when it exits. Training itself runs in a child process too, so the GPU is free when a run ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

_PROBE = ("import json, torch\n"
          "p = [torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count())]\n"
          "print(json.dumps([[d.name, d.total_memory, d.major >= 8] for d in p]))")  # bf16 units: Ampere (8.0) on


@dataclass(frozen=True)
class Device:
    key: str  # the value of TrainConfig.device: "cuda:0", "mps", "cpu"
    label: str  # what the user reads
    bf16: bool | None = None  # a GPU with bfloat16 units (None: not known)

    @property
    def kind(self) -> str:
        """cpu, cuda or mps: what decides which precisions can run."""
        return self.key.split(":")[0]


def _gib(n: int) -> str:
    return f"{n / 1024 ** 3:.1f} GiB"


def cuda_details(timeout_s: float = 60.0) -> list[tuple[str, int, bool]]:
    """(name, total memory in bytes, has bf16 units) of each CUDA GPU, read in a child process ([] if that fails)."""
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=timeout_s,
                             env=dict(os.environ, PYTHONIOENCODING="utf-8"))
        rows = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else []
        return [(str(name), int(mem), bool(bf16)) for name, mem, bf16 in rows]
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return []


def detect_devices(details: bool = True) -> list[Device]:
    """Usable devices, best first (CUDA GPUs, then MPS, then the CPU, always present).

    With `details` the GPUs are named with their memory (a child process reads them); without, they
    are listed as "CUDA GPU i" at once.
    """
    import torch

    found: list[Device] = []
    try:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - a broken driver must not take the tab down
        count = 0
    info = cuda_details() if details and count else []
    for i in range(count):
        if i < len(info):
            name, memory, bf16 = info[i]
            found.append(Device(f"cuda:{i}", f"GPU {i}: {name} ({_gib(memory)}, CUDA, "
                                             f"{'bf16' if bf16 else 'no bf16'})", bf16))
        else:
            found.append(Device(f"cuda:{i}", f"GPU {i} (CUDA)"))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append(Device("mps", "Apple GPU (Metal, MPS)"))
    found.append(Device("cpu", f"CPU ({os.cpu_count() or '?'} cores)", True))
    return found


def no_gpu_message(devices: list[Device]) -> str | None:
    """A plain sentence when no GPU is usable (and what to do), or None when one is."""
    import torch

    if any(d.key != "cpu" for d in devices):
        return None
    mps = getattr(torch.backends, "mps", None)
    if torch.version.cuda is None and not (mps is not None and mps.is_built()):
        return (f"No GPU is usable: this PyTorch build is CPU-only (torch {torch.__version__}). Install a CUDA "
                f"build of PyTorch to train on an NVIDIA GPU; training on the CPU works but is slow.")
    if torch.version.cuda is not None:
        return (f"No GPU is usable: PyTorch {torch.__version__} is built for CUDA {torch.version.cuda} but sees "
                f"no NVIDIA GPU (check the driver with nvidia-smi). Training on the CPU works but is slow.")
    return ("No GPU is usable: Metal (MPS) is not available on this Mac (it needs macOS 12.3+ and Apple "
            "silicon or an AMD GPU). Training on the CPU works but is slow.")
