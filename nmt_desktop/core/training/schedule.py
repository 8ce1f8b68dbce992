"""The learning-rate schedules (inverse_sqrt, constant, cosine), each with a linear warmup."""

from __future__ import annotations

import math

from nmt_desktop.core.config import TrainConfig


def learning_rate(step: int, cfg: TrainConfig) -> float:
    """Learning rate at optimizer step `step` (1-based)."""
    step = max(step, 1)
    warm = max(cfg.warmup_steps, 1)
    if cfg.schedule == "inverse_sqrt":  # the paper's shape, peaking at cfg.lr after warmup
        return cfg.lr * min(step / warm, math.sqrt(warm / step))
    if cfg.schedule == "constant":
        return cfg.lr * min(1.0, step / warm)
    # cosine: linear warmup, then cosine decay to min_lr at max_steps
    if step < warm:
        return cfg.lr * step / warm
    progress = min(1.0, (step - warm) / max(1, (cfg.max_steps or step) - warm))
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1.0 + math.cos(math.pi * progress))
