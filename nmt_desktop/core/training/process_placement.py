"""Where a training process runs: its place in a torchrun group and the hardware it trains on."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

import torch


@dataclass
class Distributed:
    """This process's rank among `world` processes (torchrun sets RANK, WORLD_SIZE, LOCAL_RANK)."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @classmethod
    def from_env(cls) -> "Distributed":
        return cls(int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)),
                   int(os.environ.get("LOCAL_RANK", 0)))


def hardware_name(device: torch.device) -> str:
    """The GPU's name, or the CPU and its thread count: what a model card records as the training hardware."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    n = torch.get_num_threads()
    return f"{platform.processor() or platform.machine()} CPU, {n} thread{'' if n == 1 else 's'}"
