"""Out of GPU memory, simulated on the CPU by an allocator stand-in (a forward pre-hook that raises
torch.OutOfMemoryError for a batch wider than a limit): the run ends in one sentence naming the failed batch and
the largest that fits, and its last checkpoint is kept and resumes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nmt_desktop.core.config import TrainConfig
from nmt_desktop.core.training.train import Trainer, TrainingError
from small_gpu import small_gpu_setup
from tiny_models import synthetic_pairs, write_tsv

LIMIT = 250  # padded tokens (rows x width) the pretend GPU holds, once the run is past its first steps
SENTENCE = re.compile(r"out of GPU memory at batch (\d+) tokens; the largest batch that fit was (\d+) tokens "
                      r"\(try --batch-tokens (\d+)\); the last checkpoint (.+) is kept, continue with --resume")


def tiny_cfg(corpus: Path, out: Path, **kw) -> TrainConfig:
    base = dict(train=str(corpus), out=str(out), preset="tiny", vocab_size=400, lr=3e-3, warmup_steps=30,
                batch_tokens=600, eval_every=5, log_every=1, threads=1, seed=3, dropout=0.0, max_steps=20)
    base.update(kw)
    return TrainConfig(**base)


def small_gpu(monkeypatch, from_forward: int) -> list[int]:
    """The trainer's model on a pretend GPU of LIMIT tokens; returns the sizes of the forwards let through."""
    passed: list[int] = []
    monkeypatch.setattr(Trainer, "setup", small_gpu_setup(Trainer.setup, LIMIT, from_forward, passed))
    return passed


def test_out_of_memory_ends_in_one_sentence_and_keeps_the_checkpoint(tmp_path, monkeypatch):
    corpus = write_tsv(tmp_path / "train.tsv", synthetic_pairs(3000, seed=5))
    run = tmp_path / "run"
    passed = small_gpu(monkeypatch, from_forward=7)
    events = []
    with pytest.raises(TrainingError) as caught:
        Trainer(tiny_cfg(corpus, run), events.append).run()
    sentence = str(caught.value)
    match = SENTENCE.fullmatch(sentence)
    assert match, sentence
    failed, fit, advised = int(match[1]), int(match[2]), int(match[3])
    assert failed > LIMIT >= fit == advised > 0 and fit == passed[-1]  # the probe's last forward fitted
    assert match[4] == str(run / "last")
    state = json.loads((run / "last" / "trainer_state" / "state.json").read_text())
    steps_done = max(e["step"] for e in events if e["event"] == "step")
    assert state["step"] == steps_done == 7  # the steps after the checkpoint at 5 are kept too

    monkeypatch.undo()  # a bigger GPU, or the batch the sentence advised: the run continues where it stopped
    resumed = []
    end = Trainer(tiny_cfg(corpus, run, batch_tokens=advised, max_steps=9), resumed.append, resume=True).run()
    assert end["reason"] == "max_steps" and end["step"] == 9
    assert resumed[0]["resumed"] is True and min(e["step"] for e in resumed if e["event"] == "step") == 8
