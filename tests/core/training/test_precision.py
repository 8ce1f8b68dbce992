"""Precision as a user choice: each of fp32, bf16 and fp16 trains a tiny model on the CPU, fp16's gradient
scaler is kept by checkpoints, and a choice a device cannot run is refused in one sentence."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nmt_desktop.core.config import ConfigError, TrainConfig
from nmt_desktop.core.training.precision import precision_note, precision_problem
from nmt_desktop.core.training.train import Trainer
from tiny_models import synthetic_pairs, write_tsv


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_tsv(tmp_path_factory.mktemp("corpus") / "train.tsv", synthetic_pairs(3000, seed=5))


def tiny_cfg(corpus: Path, out: Path, **kw) -> TrainConfig:
    base = dict(train=str(corpus), out=str(out), preset="tiny", vocab_size=400, lr=3e-3, warmup_steps=30,
                batch_tokens=600, eval_every=1000, log_every=5, threads=1, seed=3, dropout=0.0, label_smoothing=0.0)
    base.update(kw)
    return TrainConfig(**base)


@pytest.mark.parametrize("precision, steps", [("fp32", 30), ("bf16", 30), ("fp16", 15)])  # fp16 is slow on a CPU
def test_each_precision_trains_a_tiny_model_on_the_cpu(corpus, tmp_path, precision, steps):
    events = []
    end = Trainer(tiny_cfg(corpus, tmp_path / "run", precision=precision, device="cpu", max_steps=steps),
                  events.append).run()
    assert end["reason"] == "max_steps"
    start = events[0]
    assert start["precision"] == precision
    assert (start["precision_note"] is not None) == (precision == "fp16")  # fp16 on a CPU: runs, said to be slow
    losses = [e["loss"] for e in events if e["event"] == "step"]
    assert len(losses) >= 3 and all(math.isfinite(x) for x in losses)
    assert losses[-1] < 0.8 * losses[0], losses
    card = json.loads((tmp_path / "run" / "last" / "card.json").read_text())
    assert card["training"]["precision"] == precision


def test_fp16_checkpoint_keeps_the_gradient_scaler(corpus, tmp_path):
    Trainer(tiny_cfg(corpus, tmp_path / "run", precision="fp16", max_steps=4, eval_every=4)).run()
    saved = json.loads((tmp_path / "run" / "last" / "trainer_state" / "state.json").read_text())["grad_scaler"]
    assert saved["_growth_tracker"] == 4 and saved["scale"] > 0  # four steps without an overflow
    resumed = Trainer(tiny_cfg(corpus, tmp_path / "run", precision="fp16", max_steps=6), resume=True)
    resumed.setup()
    assert resumed.amp.scaler.state_dict() == saved
    Trainer(tiny_cfg(corpus, tmp_path / "fp32", max_steps=1)).run()
    fp32 = json.loads((tmp_path / "fp32" / "last" / "trainer_state" / "state.json").read_text())
    assert fp32["grad_scaler"] is None


def test_auto_is_fp32_on_the_cpu(corpus, tmp_path):
    trainer = Trainer(tiny_cfg(corpus, tmp_path / "run", device="cpu", max_steps=1))
    trainer.setup()
    assert trainer.amp.precision == "fp32" and trainer.amp.scaler is None


def test_a_choice_the_device_cannot_run_is_one_sentence():
    sentence = precision_problem("bf16", "cuda", bf16_supported=False)
    assert sentence and "bf16 cannot run on this GPU" in sentence and "\n" not in sentence
    assert precision_problem("bf16", "cuda", bf16_supported=True) is None
    assert all(precision_problem(p, "cpu") is None for p in ("auto", "fp32", "bf16", "fp16"))
    assert "slow" in precision_note("fp16", "cpu") and precision_note("bf16", "cpu") is None
    with pytest.raises(ConfigError, match="precision"):
        TrainConfig(train="t", out="o", precision="fp8").validate()


def test_cli_flag_reaches_the_config():
    import argparse

    from nmt_desktop.cli.train import add_parser, train_config_from_args

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(), argparse.ArgumentParser(add_help=False))
    args = parser.parse_args(["train", "--train", "t.tsv", "--out", "o", "--precision", "bf16", "--device", "cpu",
                              "--compile"])
    cfg = train_config_from_args(args)
    assert (cfg.precision, cfg.device, cfg.compile) == ("bf16", "cpu", True)
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--precision", "fp8"])
