"""Seeded torch generators for the data order (dev split, batch shuffling), reproducible across restarts."""

from __future__ import annotations

import hashlib

import torch


def seeded_generator(seed: int, salt: int | str) -> torch.Generator:
    """A torch generator seeded from (seed, salt) by hashing, so nearby seeds/epochs do not collide."""
    digest = hashlib.sha256(f"{seed}:{salt}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF)
