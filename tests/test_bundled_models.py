"""The bundled models in models/: size budget, cards, and everyday sentences translated sensibly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_cli

from nmt_desktop.core.locations import bundled_models_dir, default_model_path
from nmt_desktop.core.formats.model_folder import load_model
from nmt_desktop.core.decoding.translator import Translator

MiB = 1024 * 1024
MODELS = bundled_models_dir()
ATTRIBUTION = "Tatoeba Project (tatoeba.org) via manythings.org/anki"

# (model, English source, words of which the translation must contain at least one, lowercased)
EVERYDAY = [
    ("en-de", "I love you.", ["liebe"]),
    ("en-de", "Thank you very much.", ["danke", "dank"]),
    ("en-de", "Where is the train station?", ["bahnhof"]),
    ("en-de", "I don't know.", ["weiß", "weiss"]),
    ("en-de", "The cat is sleeping.", ["katze"]),
    ("en-fr", "Thank you very much.", ["merci"]),
    ("en-fr", "I love you.", ["aime", "adore"]),
    ("en-fr", "I don't know.", ["sais"]),
    ("en-fr", "The cat is sleeping.", ["chat"]),
    ("en-fr", "Where is the train station?", ["gare"]),
]


@pytest.fixture(scope="module")
def translators() -> dict[str, Translator]:
    return {name: Translator.load(MODELS / name) for name in ("en-de", "en-fr")}


@pytest.mark.parametrize("name", ["en-de", "en-fr"])
def test_size_budget_and_half_precision(name: str) -> None:
    folder = MODELS / name
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) <= 32 * MiB
    assert max(p.stat().st_size for p in files) <= 16 * MiB
    from safetensors import safe_open

    for weights in folder.glob("*.safetensors"):
        with safe_open(str(weights), framework="pt") as f:
            assert {str(f.get_slice(k).get_dtype()) for k in f.keys()} <= {"F16", "BF16"}


@pytest.mark.parametrize("name, tgt", [("en-de", "de"), ("en-fr", "fr")])
def test_card_states_data_scores_and_training(name: str, tgt: str) -> None:
    loaded = load_model(MODELS / name)
    card = loaded.card
    assert (loaded.config.src_lang, loaded.config.tgt_lang) == ("en", tgt)
    assert card["attribution"] == ATTRIBUTION and "CC-BY 2.0" in card["license"]
    dev = card["eval"]["dev"]
    assert dev["sentences"] > 1000 and dev["command"].startswith("nmt-desktop eval")
    assert 0 < dev["bleu"] <= 100 and 0 < dev["chrf"] <= 100
    assert card["parameters"] == sum(p.numel() for p in loaded.model.parameters())
    for key in ("steps", "wall_time_s", "hardware"):
        assert card["training"][key]
    readme = (MODELS / name / "README.md").read_text(encoding="utf-8")
    assert ATTRIBUTION in readme and f"| dev | {dev['sentences']} |" in readme
    assert (Path(__file__).parents[1] / "resources" / "training" / f"{name}.toml").is_file()


@pytest.mark.parametrize("name, source, expected", EVERYDAY)
def test_everyday_sentences(translators: dict[str, Translator], name: str, source: str, expected: list[str]) -> None:
    text = translators[name].translate(source).text.lower()
    assert any(word in text for word in expected), f"{name}: {source!r} -> {text!r}"


def test_default_is_en_de() -> None:
    assert default_model_path() == MODELS / "en-de"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, env_extra={"OMP_NUM_THREADS": "1"}, timeout=120)


def test_cli_default_model_and_short_name() -> None:
    de = _cli("translate", "I love you.")
    assert de.returncode == 0, de.stderr
    assert "liebe" in de.stdout.lower()
    fr = _cli("translate", "-m", "en-fr", "Thank you very much.")
    assert fr.returncode == 0, fr.stderr
    assert "merci" in fr.stdout.lower()
    info = _cli("info", "--json")
    assert info.returncode == 0, info.stderr
    described = json.loads(info.stdout)
    assert described["name"] == "en-de" and described["languages"] == {"source": "en", "target": "de"}
    assert described["card"]["eval"]["dev"]["bleu"] > 0
