"""A model fine-tuned from another keeps the parent's glossary: the Trainer copies it into the run folder and
every model folder it writes (best/, last/, kept snapshots) with the card saying so; `nmt-desktop train --from`
and `export` carry it on; a parent without a glossary gives a model without one; a damaged one stops the run
with one sentence rather than dropping the terms."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nmt_desktop.core.config import TrainConfig
from nmt_desktop.core.documents.glossary import Glossary, Term
from nmt_desktop.core.formats.model_glossary import model_glossary_file, saved_glossary_path
from nmt_desktop.core.training.train import Trainer
from cli_runner import run_cli
from tiny_models import synthetic_pairs, write_tsv

TERMS = [Term("cat", "Mieze", "house style"), Term("house", "Villa")]


@pytest.fixture
def config_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("NMT_DESKTOP_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def corpus(tmp_path) -> dict[str, Path]:
    return {"train": write_tsv(tmp_path / "train.tsv", synthetic_pairs(200, seed=5)),
            "dev": write_tsv(tmp_path / "dev.tsv", synthetic_pairs(8, seed=6))}


def fine_tune_cfg(corpus, parent: Path, out: Path) -> TrainConfig:
    return TrainConfig(train=str(corpus["train"]), dev=str(corpus["dev"]), out=str(out), from_model=str(parent),
                       lr=1e-4, warmup_steps=1, batch_tokens=400, max_steps=2, eval_every=1, keep_checkpoints=1,
                       log_every=1, threads=1, seed=3, eval_sentences=8)


def test_fine_tuned_model_keeps_the_parents_saved_glossary(tiny_model_dir, corpus, config_dir, tmp_path) -> None:
    saved = saved_glossary_path(tiny_model_dir)  # what Save as the model's glossary wrote for the parent
    saved.parent.mkdir(parents=True)
    Glossary(TERMS).write(saved, "en", "de")
    run = tmp_path / "run"
    Trainer(fine_tune_cfg(corpus, tiny_model_dir, run)).run()

    folders = [run, run / "best", run / "last", *sorted((run / "checkpoints").iterdir())]
    assert len(folders) == 4
    for folder in folders:
        assert Glossary.read(folder / "glossary.tsv").terms == TERMS, folder
    for folder in folders[1:]:
        card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
        assert card["glossary"] == f"kept from the parent model {tiny_model_dir} (glossary.tsv)"
    assert model_glossary_file(run / "best") == run / "best" / "glossary.tsv"  # what the app loads for it


def test_parent_without_glossary_gives_a_model_without_one(tiny_model_dir, corpus, config_dir, tmp_path) -> None:
    run = tmp_path / "run"
    Trainer(fine_tune_cfg(corpus, tiny_model_dir, run)).run()
    assert not (run / "glossary.tsv").exists() and not (run / "best" / "glossary.tsv").exists()
    assert "glossary" not in json.loads((run / "best" / "card.json").read_text(encoding="utf-8"))


def test_cli_train_from_a_model_and_export_keep_its_glossary(tiny_model_dir, corpus, tmp_path) -> None:
    config = tmp_path / "config"
    env = {"NMT_DESKTOP_CONFIG_DIR": str(config), "OMP_NUM_THREADS": "1"}
    parent = tmp_path / "parent"  # a model folder carrying its own glossary (itself fine-tuned, or shipped)
    shutil.copytree(tiny_model_dir, parent)
    Glossary(TERMS).write(parent / "glossary.tsv", "en", "de")
    run = tmp_path / "run"
    proc = run_cli("train", "--from", str(parent), "--train", str(corpus["train"]), "--dev", str(corpus["dev"]),
                   "--out", str(run), "--max-steps", "2", "--eval-every", "2", "--batch-tokens", "400",
                   "--lr", "1e-4", "--warmup-steps", "1", "--threads", "1", env_extra=env)
    assert proc.returncode == 0, proc.stderr
    assert Glossary.read(run / "best" / "glossary.tsv").terms == TERMS

    shipped = tmp_path / "shipped"
    proc = run_cli("export", str(run), "--out", str(shipped), env_extra=env)
    assert proc.returncode == 0, proc.stderr
    assert Glossary.read(shipped / "glossary.tsv").terms == TERMS
    card = json.loads((shipped / "card.json").read_text(encoding="utf-8"))
    assert card["glossary"] == f"kept from the parent model {parent} (glossary.tsv)"
    assert f"Glossary: {card['glossary']}." in (shipped / "README.md").read_text(encoding="utf-8")
