"""Fixtures of the document tests: the bundled en-de and en-fr models (real alignments and glossary forcing need a
model that translates; the tiny synthetic one does not know English)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def en_de():
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import bundled_models_dir

    return Translator.load(bundled_models_dir() / "en-de")


@pytest.fixture(scope="session")
def en_fr():
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import bundled_models_dir

    return Translator.load(bundled_models_dir() / "en-fr")
