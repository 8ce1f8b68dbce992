"""Trainer: learning, exact resume after a kill, progress events, torchrun with gloo."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from nmt_desktop.core.config import DecodeConfig, TrainConfig
from nmt_desktop.core.formats.model_folder import load_model
from nmt_desktop.core.training.schedule import learning_rate
from nmt_desktop.core.training.train import Trainer, TrainingError
from nmt_desktop.core.decoding.translator import Translator
from cli_runner import REPO_ROOT as REPO
from tiny_models import reference, synthetic_pairs, write_tsv



@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("corpus")
    return {"train": write_tsv(d / "train.tsv", synthetic_pairs(3000, seed=5)),
            "dev": write_tsv(d / "dev.tsv", synthetic_pairs(60, seed=6))}


def tiny_cfg(corpus, out: Path, **kw) -> TrainConfig:
    base = dict(train=str(corpus["train"]), dev=str(corpus["dev"]), out=str(out), preset="tiny", vocab_size=400,
                lr=3e-3, warmup_steps=30, batch_tokens=600, eval_every=100, log_every=1, threads=1, seed=3,
                dropout=0.0, label_smoothing=0.0, eval_sentences=60)
    base.update(kw)
    return TrainConfig(**base)


def test_learning_rate_schedules():
    cfg = TrainConfig(out="x", train="t", lr=1e-3, warmup_steps=100, max_steps=1000)
    assert learning_rate(100, cfg) == pytest.approx(1e-3)
    assert learning_rate(50, cfg) == pytest.approx(5e-4)
    assert learning_rate(400, cfg) == pytest.approx(5e-4)  # 1e-3 * sqrt(100 / 400)
    cfg.schedule = "cosine"
    assert learning_rate(1000, cfg) == pytest.approx(0.0, abs=1e-12)
    assert learning_rate(550, cfg) == pytest.approx(5e-4)
    cfg.schedule = "constant"
    assert learning_rate(5000, cfg) == pytest.approx(1e-3)


def test_tiny_model_learns_synthetic_task(corpus, tmp_path):
    events = []
    end = Trainer(tiny_cfg(corpus, tmp_path / "run", max_steps=300, eval_every=150), events.append).run()
    assert end["reason"] == "max_steps"
    evals = [e for e in events if e["event"] == "eval"]
    assert len(evals) == 2 and evals[-1]["bleu"] > 80, evals[-1]
    losses = [e["loss"] for e in events if e["event"] == "step"]
    assert losses[-1] < losses[0] / 4
    translator = Translator.load(tmp_path / "run" / "best")
    pairs = synthetic_pairs(40, seed=77)
    exact = sum(translator.translate(s, DecodeConfig()).text == reference(s) for s, _ in pairs)
    assert exact >= 32


def test_progress_event_schema(corpus, tmp_path):
    events = []
    Trainer(tiny_cfg(corpus, tmp_path / "run", max_steps=20, eval_every=10, probe="red cat runs"),
            events.append).run()
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end"
    for e in events:
        assert {"event", "step", "epoch"} <= set(e)
        json.dumps(e)  # every event is plain JSON
    step = next(e for e in events if e["event"] == "step")
    assert {"loss", "lr", "tokens_per_s", "eta_s", "grad_norm", "elapsed_s"} <= set(step)
    ev = next(e for e in events if e["event"] == "eval")
    assert {"dev_loss", "dev_ppl", "bleu", "chrf", "samples", "best", "probe"} <= set(ev)
    assert ev["samples"] and {"source", "reference", "hypothesis"} <= set(ev["samples"][0])
    probe = ev["probe"]
    L, H = 2, 4
    attn = probe["attention"]
    assert len(attn) == L and len(attn[0]) == H
    assert len(attn[0][0]) == len(probe["target_tokens"]) and len(attn[0][0][0]) == len(probe["source_tokens"])
    ckpt = next(e for e in events if e["event"] == "checkpoint")
    assert Path(ckpt["last"]).is_dir()
    # each evaluation says when it starts and how far its decoding is (the Train tab shows it), and the
    # checkpoint how long the training paused for it (the time left counts it)
    at_10 = [(e["event"], e.get("sentences"), e.get("done"), e.get("total")) for e in events
             if e["step"] == 10 and e["event"] != "step"]
    assert at_10 == [("eval_start", 60, None, None), ("eval_progress", None, 60, 60), ("eval", 60, None, None),
                     ("checkpoint", None, None, None)]
    assert 0 < ckpt["pause_s"] < 60
    lines = (tmp_path / "run" / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == kinds


def test_existing_run_needs_resume(corpus, tmp_path):
    Trainer(tiny_cfg(corpus, tmp_path / "run", max_steps=5, eval_every=5)).run()
    with pytest.raises(TrainingError, match="--resume"):
        Trainer(tiny_cfg(corpus, tmp_path / "run", max_steps=10)).run()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "nmt_desktop", *args]


def _train_args(corpus, out: Path, max_steps: int, eval_every: int) -> list[str]:
    return ["train", "--train", str(corpus["train"]), "--dev", str(corpus["dev"]), "--out", str(out),
            "--preset", "tiny", "--vocab-size", "400", "--lr", "3e-3", "--warmup-steps", "30",
            "--batch-tokens", "600", "--eval-every", str(eval_every), "--log-every", "1", "--threads", "1",
            "--seed", "3", "--eval-sentences", "10", "--max-steps", str(max_steps), "--progress", "json"]


def _step_losses(stdout: str) -> dict[int, float]:
    return {e["step"]: e["loss"] for e in map(json.loads, stdout.splitlines()) if e["event"] == "step"}


def test_resume_after_kill_matches_uninterrupted_run(corpus, tmp_path):
    full = subprocess.run(_cli(*_train_args(corpus, tmp_path / "full", 60, 10)), capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert full.returncode == 0, full.stderr
    reference_losses = _step_losses(full.stdout)

    run = tmp_path / "killed"
    proc = subprocess.Popen(_cli(*_train_args(corpus, run, 60, 10)), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    seen_checkpoints = 0
    for line in proc.stdout:
        if json.loads(line)["event"] == "checkpoint":
            seen_checkpoints += 1
            if seen_checkpoints == 2:
                proc.kill()  # SIGKILL: no chance to save
                break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    resumed = subprocess.run(_cli(*_train_args(corpus, run, 60, 10), "--resume"), capture_output=True, text=True,
                             timeout=300, cwd=REPO)
    assert resumed.returncode == 0, resumed.stderr
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    start = events[0]
    assert start["event"] == "start" and start["resumed"] is True
    first_step = min(_step_losses(resumed.stdout))
    assert first_step >= 21  # at most one checkpoint interval was lost
    for step, loss in _step_losses(resumed.stdout).items():
        assert loss == reference_losses[step], (step, loss, reference_losses[step])
    assert load_model(run / "last").model is not None


def test_sigterm_saves_and_exits_cleanly(corpus, tmp_path):
    run = tmp_path / "term"
    proc = subprocess.Popen(_cli(*_train_args(corpus, run, 100000, 100000)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    for line in proc.stdout:
        event = json.loads(line)
        if event["event"] == "step" and event["step"] >= 5:
            proc.send_signal(signal.SIGTERM)
            break
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    end = json.loads(out.splitlines()[-1])
    assert end["event"] == "end" and end["reason"] == "interrupted"
    state = json.loads((run / "last" / "trainer_state" / "state.json").read_text())
    assert state["step"] == end["step"] >= 5
    load_model(run / "last")


@pytest.mark.skipif(not hasattr(torch.distributed, "is_available") or not torch.distributed.is_available(),
                    reason="torch.distributed is not available in this build")
def test_torchrun_two_gloo_processes(corpus, tmp_path):
    run = tmp_path / "ddp"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29533",
           "-m", "nmt_desktop", *_train_args(corpus, run, 6, 3)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert events[0]["world_size"] == 2
    assert sum(e["event"] == "start" for e in events) == 1  # only rank 0 logs
    shards = [json.loads((run / "shards" / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert shards[0]["batches"] == shards[1]["batches"]
    assert set(shards[0]["fingerprints"]).isdisjoint(shards[1]["fingerprints"])
    loaded = load_model(run / "last")
    state = json.loads((run / "last" / "trainer_state" / "state.json").read_text())
    assert state["step"] == 6
    assert Translator(loaded.model, loaded.tokenizers).translate("red cat").text is not None


def test_keep_checkpoints_keeps_the_newest_and_they_average(corpus, tmp_path):
    from nmt_desktop.core.formats.averaging import AveragingError, average_models

    run = tmp_path / "run"
    Trainer(tiny_cfg(corpus, run, max_steps=50, eval_every=10, keep_checkpoints=3), lambda e: None).run()
    kept = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert kept == ["step-0000030", "step-0000040", "step-0000050"]  # steps 10 and 20 were pruned
    paths = [run / "checkpoints" / name for name in kept]
    models = [load_model(p) for p in paths]
    assert [m.card["training"]["steps"] for m in models] == [30, 40, 50]
    words = models[-1].card["data"]["source_words"]  # how long the training sentences were (the GUI's length hint)
    assert words["median"] <= words["p99"] <= words["max"] <= 7
    averaged = average_models(paths)
    for name, value in averaged.model.state_dict().items():
        expected = sum(m.model.state_dict()[name].double() for m in models) / 3
        torch.testing.assert_close(value.double(), expected, rtol=1e-6, atol=1e-7)
    assert not torch.equal(averaged.model.state_dict()["encoder_layers.0.ffn.fc1.weight"],
                           models[-1].model.state_dict()["encoder_layers.0.ffn.fc1.weight"])
    assert averaged.card["averaged_from"] == kept and averaged.card["training"]["steps"] == 50
    assert "dev" not in averaged.card  # the newest snapshot's own dev score does not describe the average

    other = tmp_path / "other"  # another run: a different BPE vocabulary, so not averageable
    Trainer(tiny_cfg(corpus, other, max_steps=10, eval_every=10, vocab_size=380), lambda e: None).run()
    with pytest.raises(AveragingError, match="other/best: its (architecture|vocabulary) differs"):
        average_models([paths[0], other / "best"])


def test_token_loss_skips_padding_but_equals_the_padded_loss():
    """Padding positions' FFNs and logits are left out; the loss and every gradient stay the same."""
    import torch.nn.functional as F

    from nmt_desktop.core.training.train import token_loss
    from tiny_models import tiny_config, tiny_tokenizers
    from nmt_desktop.core.model.transformer import build_model

    model = build_model(tiny_config(tiny_tokenizers(), dropout=0.0), seed=0)
    pad = model.config.pad_id
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(4, model.config.src_vocab_size, (3, 7), generator=gen)
    tgt_out = torch.randint(4, model.config.tgt_vocab_size, (3, 6), generator=gen)
    tgt_out[0, 4:], tgt_out[2, 2:] = pad, pad  # right padding
    src[1, 3:], src[2, 5:] = pad, pad
    tgt_in = torch.cat([torch.full((3, 1), model.config.decoder_start_id), tgt_out[:, :-1]], 1)
    ours = token_loss(model, src, tgt_in, tgt_out, pad, 0.1)
    ours.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    logits = model(src, tgt_in)  # (B, T, V): every position, padding included
    full = F.cross_entropy(logits.view(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad,
                           label_smoothing=0.1, reduction="sum")
    full.backward()
    torch.testing.assert_close(ours, full)
    for name, p in model.named_parameters():
        torch.testing.assert_close(grads[name], p.grad, rtol=1e-4, atol=1e-6, msg=name)


def test_best_checkpoint_card_says_the_runs_steps_and_its_own(corpus, tmp_path, monkeypatch):
    """Issue 41: best/card.json said "steps 20" for a 60-step run (the best checkpoint's step) and nothing of the
    run's 60. It keeps the checkpoint's own step and gains the run's steps (`run_steps`), updated at every later
    evaluation; the README rendered from it says both."""
    from nmt_desktop.core.formats.model_card import render_readme

    evaluate = Trainer.evaluate
    bleu_at = {20: 50.0, 40: 40.0, 60: 30.0}  # the first evaluation is the best one

    def declining(self):
        return {**evaluate(self), "bleu": bleu_at[self.state.step]}

    monkeypatch.setattr(Trainer, "evaluate", declining)
    Trainer(tiny_cfg(corpus, tmp_path / "run", max_steps=60, eval_every=20), lambda e: None).run()
    card = json.loads((tmp_path / "run" / "best" / "card.json").read_text(encoding="utf-8"))
    assert card["training"]["steps"] == 20 and card["training"]["run_steps"] == 60 and card["dev"]["step"] == 20
    assert "60 steps; this model is its best checkpoint, at step 20" in render_readme(card)
    last = json.loads((tmp_path / "run" / "last" / "card.json").read_text(encoding="utf-8"))
    assert last["training"]["steps"] == 60 and "run_steps" not in last["training"]
    assert load_model(tmp_path / "run" / "best").card == card  # still a valid model folder
