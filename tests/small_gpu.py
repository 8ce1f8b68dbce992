"""A GPU too small for the batch, on the CPU (test helper): an allocator stand-in that raises
torch.OutOfMemoryError, as CUDA's caching allocator does, for any forward wider than `limit` padded tokens once
`from_forward` forwards have run. Used in-process (monkeypatch) and in a training child
(tests/gpu_stand_in/sitecustomize.py)."""

from __future__ import annotations

from typing import Callable

import torch


def small_gpu_setup(setup: Callable, limit: int, from_forward: int, passed: list[int]) -> Callable:
    """`Trainer.setup` followed by the stand-in on the trainer's model; `passed` gets the sizes let through."""

    def setup_with_a_small_gpu(self) -> None:
        setup(self)
        calls = iter(range(10**9))

        def allocate(module: torch.nn.Module, args: tuple) -> None:
            src, tgt_in = args[0], args[1]  # (B, S), (B, T)
            size = src.shape[0] * max(src.shape[1], tgt_in.shape[1])
            if next(calls) >= from_forward and size > limit:
                raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {size} tokens' activations")
            passed.append(size)

        self.model.register_forward_pre_hook(allocate)

    return setup_with_a_small_gpu
