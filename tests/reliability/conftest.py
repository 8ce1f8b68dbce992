"""Shared fixtures of the reliability suite: a SMALL saved model folder (fast to load many times)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SMALL = dict(d_model=32, n_heads=4, encoder_layers=1, decoder_layers=1, ffn_dim=64, max_positions=64)


@pytest.fixture(scope="session")
def small_pair():
    """(model, tokenizers): a 1+1-layer d=32 model with the tiny joint vocabulary, weights perturbed."""
    from tiny_models import perturbed_model, tiny_config, tiny_tokenizers

    tokenizers = tiny_tokenizers()
    return perturbed_model(tiny_config(tokenizers, **SMALL), seed=0), tokenizers


@pytest.fixture(scope="session")
def small_model_dir(small_pair, tmp_path_factory) -> Path:
    """The small model saved as a model folder (read-only: copy before editing)."""
    from nmt_desktop.core.formats.model_folder import save_model

    model, tokenizers = small_pair
    return save_model(tmp_path_factory.mktemp("small") / "small-en-xx", model, tokenizers,
                      card={"name": "small reliability model"})


@pytest.fixture
def small_folder(tmp_path, small_model_dir) -> Path:
    """A private copy of the small model folder, free to edit."""
    return Path(shutil.copytree(small_model_dir, tmp_path / "model"))

