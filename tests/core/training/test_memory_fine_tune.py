"""Fine-tuning on a translation memory (issue 45, slow adaptation): a tiny trained model fine-tuned on a real
SQLite memory of a "new domain" (one word translated otherwise) with general data replayed beside it; the loss
is finite and falls, the card and the end event say the parent and the scores before and after on the memory's
domain and on general text; `nmt-desktop train --memory` does the same from the command line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nmt_desktop.core.config import ConfigError, TrainConfig
from nmt_desktop.core.memory import Entry, Pair, TranslationMemory
from nmt_desktop.core.memory.segments import pair_segments
from nmt_desktop.core.training.corpus_formats import CorpusError
from nmt_desktop.core.training.memory_data import memory_pair
from nmt_desktop.core.training.train import Trainer, TrainingError
from cli_runner import run_cli
from tiny_models import synthetic_pairs, write_tsv


def domain_pairs(n: int, seed: int) -> list[tuple[str, str]]:
    """The memory's domain: the synthetic task where "cat" is "mieze", not "katze"."""
    return [(s, t.replace("katze", "mieze")) for s, t in synthetic_pairs(n, seed=seed) if "cat" in s.split()]


@pytest.fixture
def memory(tmp_path) -> Path:
    path = tmp_path / "memory.sqlite"
    with TranslationMemory(path) as tm:
        tm.add(Entry(s, t, Pair.of("en", "de"), origin="confirmed") for s, t in domain_pairs(300, seed=7))
        tm.add([Entry("cat", "chat", Pair.of("en", "fr"), origin="confirmed")])  # another pair: never read
    return path


@pytest.fixture
def general(tmp_path) -> dict[str, Path]:
    return {"replay": write_tsv(tmp_path / "general.tsv", synthetic_pairs(400, seed=8)),
            "dev": write_tsv(tmp_path / "general-dev.tsv", synthetic_pairs(12, seed=9))}


def memory_cfg(memory: Path, parent: Path, out: Path, **fields) -> TrainConfig:
    base = dict(memory=str(memory), pair="en-de", from_model=str(parent), out=str(out), lr=2e-3, warmup_steps=1,
                schedule="constant", batch_tokens=300, max_steps=24, eval_every=12, log_every=1, threads=1, seed=3,
                eval_sentences=12, label_smoothing=0.0)
    return TrainConfig(**{**base, **fields})


def test_fine_tune_on_a_memory_with_replay(tiny_model_dir, memory, general, tmp_path) -> None:
    events: list[dict] = []
    run = tmp_path / "run"
    cfg = memory_cfg(memory, tiny_model_dir, run, replay=str(general["replay"]), replay_ratio=0.5,
                     general_dev=str(general["dev"]))
    end = Trainer(cfg, events.append, segments=pair_segments).run()

    losses = [e["loss"] for e in events if e["event"] == "step"]
    assert all(math.isfinite(x) for x in losses) and len(losses) == 24
    assert sum(losses[-6:]) < sum(losses[:6])
    start = next(e for e in events if e["event"] == "start")
    in_memory = len(domain_pairs(300, seed=7))
    dev = round(in_memory * 0.1)  # held out of the memory
    replayed = round(0.5 * (in_memory - dev))
    assert start["train_pairs"] == in_memory - dev + replayed and start["dev_pairs"] == dev

    card = json.loads((run / "best" / "card.json").read_text(encoding="utf-8"))
    assert card["parent"] == str(tiny_model_dir.absolute())
    note = card["memory"]
    assert (note["pair"], note["entries"], note["memory_dev_pairs"]) == ("en-de", in_memory, dev)
    assert note["replay"] == {"file": str(general["replay"]), "pairs": replayed}
    for domain, sentences in (("memory", dev), ("general", 12)):
        for when in ("before", "after"):
            scores = note["scores"][domain][when]
            assert scores["sentences"] == sentences and 0 <= scores["bleu"] <= 100 and 0 <= scores["chrf"] <= 100
    assert note["scores"]["memory"]["after"]["bleu"] == card["dev"]["bleu"]  # the dev set is the memory's part
    assert end["memory"] == note  # the end event says what the best model's card says
    before = json.loads((run / "memory_before.json").read_text(encoding="utf-8"))
    assert before == {d: note["scores"][d]["before"] for d in ("memory", "general")}


def test_parent_scores_are_kept_across_a_resume(tiny_model_dir, memory, general, tmp_path) -> None:
    run = tmp_path / "run"
    cfg = memory_cfg(memory, tiny_model_dir, run, replay=str(general["replay"]), general_dev=str(general["dev"]),
                     max_steps=12)
    Trainer(cfg, segments=pair_segments).run()
    before = (run / "memory_before.json").read_text(encoding="utf-8")
    Trainer(memory_cfg(memory, tiny_model_dir, run, replay=str(general["replay"]), general_dev=str(general["dev"]),
                       max_steps=24), resume=True, segments=pair_segments).run()
    card = json.loads((run / "best" / "card.json").read_text(encoding="utf-8"))
    assert card["memory"]["scores"]["general"]["before"] == json.loads(before)["general"]


def test_no_replay_and_no_general_text_are_said(tiny_model_dir, memory, tmp_path) -> None:
    run = tmp_path / "run"
    end = Trainer(memory_cfg(memory, tiny_model_dir, run, max_steps=2, eval_every=2), segments=pair_segments).run()
    assert end["memory"]["replay"] == {"file": None, "pairs": 0}
    assert end["memory"]["scores"]["general"] == {"before": {}, "after": {}}
    assert [n.split(":")[0] for n in end["memory"]["notes"]] == ["no replay", "no general score"]


def test_a_memory_without_the_pair_or_a_parent_is_refused(tiny_model_dir, memory, tmp_path) -> None:
    with pytest.raises(CorpusError, match=r"memory.sqlite: the memory holds 0 entries of de-en"):
        Trainer(memory_cfg(memory, tiny_model_dir, tmp_path / "run", pair="de-en"), segments=pair_segments).run()
    with pytest.raises(TrainingError, match="needs its reader"):
        Trainer(memory_cfg(memory, tiny_model_dir, tmp_path / "run"))
    with pytest.raises(ConfigError, match="needs the model it starts from"):
        memory_cfg(memory, tiny_model_dir, tmp_path / "run", from_model=None).validate()
    with pytest.raises(ConfigError, match="field 'pair' must be SOURCE-TARGET"):
        memory_pair(TrainConfig(pair="en-us-de"), ("", ""))
    assert memory_pair(TrainConfig(pair="en-US:de"), ("", "")) == ("en-us", "de")
    assert memory_pair(TrainConfig(), ("en", "de")) == ("en", "de")


def test_cli_train_on_a_memory(tiny_model_dir, memory, general, tmp_path) -> None:
    run = tmp_path / "run"
    proc = run_cli("train", "--from", str(tiny_model_dir), "--memory", str(memory), "--pair", "en-de",
                   "--replay", str(general["replay"]), "--replay-ratio", "1", "--general-dev", str(general["dev"]),
                   "--out", str(run), "--max-steps", "2", "--eval-every", "2", "--batch-tokens", "300",
                   "--warmup-steps", "1", "--threads", "1", "--eval-sentences", "12",
                   env_extra={"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "the memory's domain" in proc.stderr and "general text (12 sentences): BLEU" in proc.stderr
    assert json.loads((run / "best" / "card.json").read_text(encoding="utf-8"))["memory"]["replay"]["pairs"] > 0
