"""The Train tab with real `nmt-desktop train` child processes (tiny model, tiny synthetic corpus).

Every run goes through the tab exactly as a user's would: the form is filled, Start checks the data
and runs `python -m nmt_desktop train --config RUN/train_config.toml --progress json` as a QProcess.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import torch  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QFileDialog  # noqa: E402

from nmt_desktop.core.training.checkpoint import read_state  # noqa: E402
from nmt_desktop.core.config import TrainConfig  # noqa: E402
from nmt_desktop.core.formats.model_folder import load_model  # noqa: E402
from nmt_desktop.gui.app import MainWindow  # noqa: E402
from nmt_desktop.gui.train.process import LineBuffer, command_lines, parse_event  # noqa: E402
from cli_runner import REPO_ROOT  # noqa: E402
from tiny_models import synthetic_pairs, write_tsv  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402
from qt_layout import wait_laid_out  # noqa: E402

CHILD_MS = 180000  # a child process training the tiny model: ~25 s on a quiet machine, over 60 s under load


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("corpus")
    pairs = synthetic_pairs(750, seed=3)
    return {"train": write_tsv(d / "train.tsv", pairs[:400]), "dev": write_tsv(d / "dev.tsv", pairs[400:430]),
            "big_dev": write_tsv(d / "big_dev.tsv", pairs[430:])}  # 320 pairs: five decoding batches


@pytest.fixture
def window(qtbot, dirs):
    window = MainWindow(model=None)
    window.shown_errors = []
    window.show_error = lambda message, title="Error": window.shown_errors.append(message)
    panel = window.train_panel
    panel.asked = []
    panel.ask = lambda title, text: panel.asked.append(title) or True
    panel.process.extra_env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    qtbot.addWidget(window)
    window.show()
    window.show_tab("train")
    yield window
    panel.shutdown(30000)  # never leave a child running
    window.close()
    assert not panel.running


def tiny_config(corpus, **overrides) -> TrainConfig:
    base = dict(train=str(corpus["train"]), dev=str(corpus["dev"]), preset="tiny", vocab_size=400, batch_tokens=600,
                eval_every=10, log_every=1, max_steps=40, threads=1, eval_sentences=30, device="cpu",
                probe="red cat sleeps", lr=2e-3, warmup_steps=20)
    base.update(overrides)
    return TrainConfig(**base)


def events_of(panel) -> list[dict]:
    seen: list[dict] = []
    panel.trainEvent.connect(seen.append)
    return seen


def test_run_fills_plots_probe_and_model_picker(qtbot, window, corpus, dirs) -> None:
    panel = window.train_panel
    panel.form.set_form(tiny_config(corpus))
    seen = events_of(panel)
    assert panel.start()
    qtbot.waitUntil(lambda: panel.state in ("finished", "failed"), timeout=CHILD_MS)
    assert panel.state == "finished", panel.error_text
    # runs go to the user data dir under a readable name
    run = panel.run_dir
    assert run.parent == dirs / "data" / "runs"
    assert re.fullmatch(r"src-tgt-\d{8}-\d{6}", run.name)
    assert (run / "train_config.toml").is_file() and (run / "events.jsonl").is_file()
    # plots received points
    x, y = panel.plots.curves["train_loss"].getData()
    assert len(x) == 40 and np.all(np.isfinite(y))
    evals = [e for e in seen if e["event"] == "eval"]
    assert len(evals) == 4
    for key in ("dev_loss", "bleu", "chrf"):
        assert len(panel.plots.curves[key].getData()[0]) == len(evals)
    curves = panel.plots.curves
    assert len(curves["lr"].getData()[0]) == 40 and len(curves["tokens_per_s"].getData()[0]) == 40
    assert panel.progress.value() == 40 and panel.progress.maximum() == 40
    assert panel.samples_table.rowCount() == 3 * len(evals)
    # the probe heatmap was redrawn at each evaluation with the probe's (T, S) shape
    assert panel.probe.updates == len(evals) >= 2
    probe = evals[-1]["probe"]
    assert panel.probe.view.matrix().shape == (len(probe["target_tokens"]), len(probe["source_tokens"]))
    att = np.asarray(probe["attention"], dtype=np.float32)
    panel.probe.layer.setValue(1)
    panel.probe.head.setValue(2)
    np.testing.assert_allclose(panel.probe.view.matrix(), att[0, 1], atol=1e-6)
    # the best model is in the model picker and loads with one click
    best = str(run / "best")
    assert panel.trained_model == best
    assert best in window.models_panel.recent
    assert window.models_panel.recent_list.item(0).text() == run.name
    assert panel.load_model_button.isEnabled()
    panel.load_model_button.click()
    qtbot.waitUntil(lambda: window.info is not None, timeout=CHILD_MS)
    assert str(window.info.path) == best
    # the loaded model is named after its run, never "best" (issue 29, point 7)
    assert window.info.name == run.name
    assert window.windowTitle().split(" (")[0] == run.name
    assert window.model_label.text().startswith(f"Model: {run.name} ")
    assert window.models_panel.recent_list.item(0).text() == f"{run.name}  (loaded)"
    assert "best" not in window.windowTitle() + window.model_label.text()
    # fine-tuning is now offered from the loaded model
    assert panel.form.model_path == best
    # an earlier run can be opened again: its curves come back from events.jsonl
    panel.open_run(run)
    assert len(curves["train_loss"].getData()[0]) == 40 and len(curves["bleu"].getData()[0]) == 4
    assert panel.probe.updates == 4 and panel.trained_model == best
    assert panel.state == "finished" and not panel.resume_button.isEnabled()  # it reached max_steps


def test_stop_resume_and_close_during_run(qtbot, window, corpus) -> None:
    panel = window.train_panel
    panel.form.set_form(tiny_config(corpus, max_steps=5000, eval_every=25))
    seen = events_of(panel)
    assert panel.start()
    qtbot.waitUntil(lambda: panel.state == "running" and panel.last_step >= 12, timeout=CHILD_MS)
    assert panel.stop_button.isEnabled() and not panel.resume_button.isEnabled()
    panel.stop_button.click()
    qtbot.waitUntil(lambda: panel.state in ("stopped", "failed"), timeout=CHILD_MS)
    assert panel.state == "stopped", panel.error_text
    assert "Stopped at step" in panel.state_label.text()
    end = [e for e in seen if e["event"] == "end"][-1]
    assert end["reason"] == "interrupted"
    stopped_step = end["step"]
    run = panel.run_dir
    loaded = load_model(run / "last")  # Stop left a loadable checkpoint
    assert loaded.config.d_model == 64
    assert read_state(run / "last")["step"] == stopped_step > 0
    assert panel.resume_button.isEnabled()

    # Resume continues the step count
    seen.clear()
    panel.resume_button.click()
    qtbot.waitUntil(lambda: any(e["event"] == "step" for e in seen), timeout=CHILD_MS)
    start = next(e for e in seen if e["event"] == "start")
    assert start["resumed"] and start["step"] == stopped_step
    first = next(e for e in seen if e["event"] == "step")
    assert first["step"] == stopped_step + 1
    xs = panel.plots.curves["train_loss"].getData()[0]
    assert xs[0] == 1 and np.all(np.diff(xs) > 0)  # the curve goes on from before the stop

    # closing the window during the run asks; "no" keeps it running
    panel.ask = lambda title, text: False
    window.close()
    assert window.isVisible() and panel.running
    # "yes" stops the child cleanly (exit 0) and keeps its checkpoint
    panel.ask = lambda title, text: True
    window.close()
    assert not panel.running
    qtbot.waitUntil(lambda: panel.state in ("stopped", "failed"), timeout=CHILD_MS)
    assert panel.state == "stopped", panel.error_text
    assert read_state(run / "last")["step"] > stopped_step


@pytest.mark.parametrize("kind", ["tsv", "aligned"])
def test_bad_corpus_shows_file_and_line_and_starts_nothing(qtbot, window, tmp_path, kind) -> None:
    panel = window.train_panel
    if kind == "tsv":
        bad = tmp_path / "bad.tsv"
        bad.write_text("a b\tx y\nc d\tz w\nno tab on this line\n", encoding="utf-8")
        cfg = TrainConfig(train=str(bad), preset="tiny", dev_fraction=0.1)
        expected = [str(bad), "line 3"]
    else:
        src, tgt = tmp_path / "train.en", tmp_path / "train.de"
        src.write_text("a\nb\nc\n", encoding="utf-8")
        tgt.write_text("x\ny\n", encoding="utf-8")
        cfg = TrainConfig(train_src=str(src), train_tgt=str(tgt), preset="tiny", dev_fraction=0.1)
        expected = [str(src), str(tgt), "3 lines"]
    panel.form.set_form(cfg)
    assert panel.start()
    qtbot.waitUntil(lambda: panel.state == "idle" and panel.form.data_error.isVisible(), timeout=CHILD_MS)
    for text in expected:
        assert text in panel.form.data_error.text()
        assert text in panel.error_label.text()
    assert panel.process._proc is None and not panel.running  # no child process was started
    assert panel.run_dir is None
    runs = Path(os.environ["NMT_DESKTOP_DATA_DIR"]) / "runs"
    assert not runs.exists() or not any(runs.iterdir())


def test_crashing_child_shows_its_error_and_window_stays(qtbot, window, corpus, tmp_path) -> None:
    panel = window.train_panel
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    panel.form.set_form(tiny_config(corpus, from_model=str(broken)))
    assert panel.form.finetune_radio.isChecked()
    assert panel.start()
    qtbot.waitUntil(lambda: panel.state in ("failed", "finished", "stopped"), timeout=CHILD_MS)
    assert panel.state == "failed"
    assert "config.json" in panel.error_label.text() and panel.error_label.isVisible()
    # the child's error event, said once: its stderr line that repeats it is left out of the lines shown with it
    assert panel.error_label.text().count("is not valid JSON") == 1, panel.error_label.text()
    assert "nmt-desktop: error:" not in panel.error_label.text()
    assert window.shown_errors and "config.json" in window.shown_errors[-1]
    assert window.isVisible() and panel.start_button.isEnabled() and not panel.running


def test_devices_listed_with_plain_no_gpu_message(window) -> None:
    panel = window.train_panel
    labels = [panel.form.device.itemText(i) for i in range(panel.form.device.count())]
    assert any("CPU" in label for label in labels)
    if not torch.cuda.is_available() and torch.version.cuda is None and not torch.backends.mps.is_available():
        assert panel.form.device.currentData() == "cpu"
        assert panel.form.device_message.text().startswith("No GPU is usable: this PyTorch build is CPU-only")
        assert "Install a CUDA build of PyTorch" in panel.form.device_message.text()
    elif torch.cuda.is_available():
        assert panel.form.device.currentData() == "cuda:0" and "GiB" in labels[0]


def test_defaults_toml_round_trip_and_command_line(window, corpus, tmp_path) -> None:
    panel = window.train_panel
    panel.form.scratch_radio.setChecked(True)
    scratch = panel.form.form_config(out="X")
    assert (scratch.lr, scratch.warmup_steps, scratch.preset, scratch.vocab_size, scratch.epochs) == \
        (7e-4, 4000, "small", 8000, 20.0)
    panel.form.model_path = "/some/model"
    panel.form.finetune_radio.setChecked(True)
    fine = panel.form.form_config(out="X")
    assert (fine.lr, fine.warmup_steps, fine.max_steps, fine.eval_every, fine.patience, fine.dropout) == \
        (1e-4, 500, 2000, 200, 5, None)
    assert fine.from_model == "/some/model"

    panel.form.set_form(tiny_config(corpus, schedule="cosine", adam_beta2=0.997, reverse=True, src_lang="de",
                               tgt_lang="en", dev=None, dev_fraction=0.05, seed=7))
    path = tmp_path / "run.toml"
    panel.form.save_config(path)
    before = panel.form.form_config(out="X")
    assert TrainConfig.from_toml(path) == dataclasses.replace(before, out=None)  # the CLI reads the same file
    panel.form.apply_defaults(scratch=True)
    panel.form.train_file.setText("")
    assert panel.form.form_config(out="X") != before
    panel.load_config(path)
    assert panel.form.form_config(out="X") == before
    short, flags = command_lines(before)
    assert short == "nmt-desktop train --config X/train_config.toml --progress json"
    assert "--schedule cosine" in flags and "--reverse" in flags and f"--train {corpus['train']}" in flags
    assert "--dev-fraction 0.05" in flags and "--adam-beta2 0.997" in flags
    shown = panel.form.command_view.toPlainText()
    assert short in shown or "train_config.toml" in shown


def test_line_buffer_and_event_parsing() -> None:
    buf = LineBuffer()
    assert buf.feed(b'{"event": "st') == []
    assert buf.feed(b'ep", "step": 1}\nplain text\n{"x": 1}\n') == ['{"event": "step", "step": 1}', "plain text",
                                                                     '{"x": 1}']
    assert parse_event('{"event": "step", "step": 1}') == {"event": "step", "step": 1}
    assert parse_event("plain text") is None and parse_event('{"x": 1}') is None and parse_event("{broken") is None
    assert buf.feed("ünïcode\r\n".encode()) == ["ünïcode"]
    buf.feed(b"tail without newline")
    assert buf.flush() == ["tail without newline"]


def test_gui_train_tab_screenshot(tmp_path) -> None:
    out = tmp_path / "train.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OMP_NUM_THREADS="1",
               NMT_DESKTOP_CONFIG_DIR=str(tmp_path / "config"), NMT_DESKTOP_LOG_DIR=str(tmp_path / "logs"),
               NMT_DESKTOP_DATA_DIR=str(tmp_path / "data"))
    result = subprocess.run([sys.executable, "-m", "nmt_desktop", "gui", "--tab", "train", "--screenshot", str(out)],
                            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10000


def test_step_count_and_time_left_agree_through_a_run_with_evaluations(qtbot, window, corpus) -> None:
    """Issue 29, point 7: the bar said "25 / 60 steps" while the status said step 26 (the bar moved only on
    logged steps), "ETA 1:54" stayed after Stop, and "ETA 12:41" read like a clock time."""
    panel = window.train_panel
    panel.form.set_form(tiny_config(corpus, max_steps=5000, eval_every=10, log_every=3))
    checks: list[tuple[str, int, int, str]] = []
    panel.trainEvent.connect(lambda e: checks.append((e["event"], panel.progress.value(), panel.last_step,
                                                      panel.eta_label.text())))
    assert panel.start()
    qtbot.waitUntil(lambda: sum(c[0] == "eval" for c in checks) >= 2 or panel.state == "failed", timeout=CHILD_MS)
    panel.stop_button.click()
    qtbot.waitUntil(lambda: panel.state in ("stopped", "failed"), timeout=CHILD_MS)
    assert panel.state == "stopped", panel.error_text
    with_step = [c for c in checks if c[0] != "start"]
    assert {c[0] for c in with_step} >= {"step", "eval", "end"}, checks
    assert all(bar == step for _, bar, step, _ in with_step), [c for c in with_step if c[1] != c[2]]
    shown = [text for kind, _, _, text in checks if kind == "step" and "left" in text]
    assert shown and all(re.search(r"about \d+ (s|min \d\d s|h \d\d min) left", t) for t in shown), shown
    assert not any("ETA" in text for *_, text in checks)
    assert "left" not in panel.eta_label.text() and "loss" in panel.eta_label.text()  # stopped: no time left
    assert f"Stopped at step {panel.last_step}" in panel.state_label.text()
    assert panel.progress.value() == panel.last_step


def seconds_left(text: str) -> float | None:
    """The seconds in "… · about 1 min 05 s left" (None without a time left)."""
    m = re.search(r"about (?:(\d+) h )?(?:(\d+) min )?(?:(\d+) s )?left", text)
    return None if m is None else sum(int(v or 0) * k for v, k in zip(m.groups(), (3600, 60, 1)))


def test_evaluations_show_their_state_and_the_time_left_counts_them(qtbot, window, corpus) -> None:
    """Issue 29, point 7: during an evaluation the tab froze with no "evaluating" state, and the time left
    jumped (12:41 -> 1:25 -> 2:01). A real run through the Start button, evaluating every 3 steps on 320 dev
    sentences (the pauses take most of the run's time): at every event the bar's step is the status's, the
    evaluating state shows while (and only while) the child evaluates, and the time left is what the run so far
    implies, pauses included (steps left at its seconds per step, evaluations left at their mean length), without
    jumps between readings. Not the wall time the run then took: on a busy machine the rest of a run can be twice
    as slow as its start, and a test of that tests the machine."""
    panel = window.train_panel
    panel.form.set_form(tiny_config(corpus, dev=str(corpus["big_dev"]), eval_sentences=0, eval_beam=2, max_steps=45,
                                    eval_every=3, probe=""))
    seen: list[tuple[dict, str, str, str, bool, int, int]] = []
    panel.trainEvent.connect(lambda e: seen.append((e, panel.progress.text(), panel.state_label.text(),
                                                    panel.eta_label.text(), panel.eval_bar.isVisible(),
                                                    panel.eval_bar.value(), panel.eval_bar.maximum())))
    QTest.mouseClick(panel.start_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: panel.state in ("finished", "failed"), timeout=CHILD_MS)
    assert panel.state == "finished", panel.error_text
    kinds = [e["event"] for e, *_ in seen]
    assert kinds.count("eval_start") == kinds.count("eval") == 15 and kinds.count("eval_progress") == 15 * 5

    readings = []  # (seconds shown, seconds the run so far implies: training time and pauses still to come)
    for i, (ev, bar, status, eta, eval_shown, eval_done, eval_total) in enumerate(seen):
        if ev["event"] == "start":
            continue
        bar_step = int(re.match(r"(\d+) / 45 steps", bar).group(1))
        assert bar_step == ev["step"], (ev, bar)
        assert all(int(n) == bar_step for n in re.findall(r"step (\d+)", status + eta)), (bar, status, eta)
        evaluating = ev["event"] in ("eval_start", "eval_progress")
        assert evaluating == eval_shown == status.startswith(f"Evaluating on the dev set at step {bar_step}…"), \
            (ev["event"], status, eval_shown)
        if ev["event"] == "eval_progress":
            assert (eval_done, eval_total) == (ev["done"], 320)
        if ev["event"] == "step" and (shown := seconds_left(eta)) is not None and "plus evaluations" not in eta:
            before = [e for e, *_ in seen[:i]]
            first = next(e for e in before if e["event"] == "step")
            pauses = [e["pause_s"] for e in before if e["event"] == "checkpoint"]
            per_step = (ev["elapsed_s"] - first["elapsed_s"]) / (ev["step"] - first["step"])
            evals_left = sum(1 for s in range(ev["step"], 46) if s % 3 == 0 or s == 45)
            implied = (45 - ev["step"]) * per_step + evals_left * sum(pauses) / len(pauses)
            readings.append((shown, implied))
    assert panel.state_label.text().startswith("Finished") and not panel.eval_bar.isVisible()
    assert len(readings) >= 30, readings  # from the first timed evaluation on, every step's reading
    for shown, implied in readings:
        if implied >= 2.0:  # whole seconds are shown: the last ones say little
            assert 0.5 * implied - 1 <= shown <= 2.0 * implied + 1, readings
    for (before, _), (after, _) in zip(readings, readings[1:]):
        assert 0.5 * before - 1 <= after <= 1.5 * before + 1, readings


PROBE_SOURCE = ["▁I", "▁don", "'", "t", "▁think", "▁that", "▁Tom", "▁will", "▁be", "▁able", "▁to", "▁help", "▁us",
                "▁tomorrow", ".", "</s>"]
PROBE_TARGET = ["▁Ich", "▁glaube", "▁nicht", ",", "▁dass", "▁Tom", "▁uns", "▁morgen", "▁helfen", "▁kann", ".", "</s>"]


def run_with_probe(corpus, folder: Path) -> Path:
    """A finished run's folder whose one evaluation (step 40) drew a 16-piece probe sentence."""
    folder.mkdir()
    (folder / "train_config.toml").write_text(tiny_config(corpus, out=str(folder)).to_toml(), encoding="utf-8")
    attention = np.full((3, 4, len(PROBE_TARGET), len(PROBE_SOURCE)), 1 / len(PROBE_SOURCE)).tolist()
    probe = {"source": "I don't think that Tom will be able to help us tomorrow.",
             "translation": "Ich glaube nicht, dass Tom uns morgen helfen kann.", "source_tokens": PROBE_SOURCE,
             "target_tokens": PROBE_TARGET, "attention": attention}
    events = [{"event": "start", "step": 0, "epoch": 0, "total_steps": 40},
              {"event": "eval", "step": 40, "epoch": 0, "dev_loss": 1.0, "bleu": 10.0, "chrf": 20.0, "probe": probe}]
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return folder


def open_run_by_click(qtbot, window, run: Path, monkeypatch) -> None:
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args, **kw: str(run))
    QTest.mouseClick(window.train_panel.form.open_run_button, Qt.LeftButton)
    view = window.train_panel.probe.view
    qtbot.waitUntil(lambda: view.tokens()[0] == PROBE_SOURCE, timeout=TIMEOUT_MS)


def test_probe_labels_are_drawn_inside_the_plot_at_the_default_window_size(qtbot, window, corpus, tmp_path,
                                                                          monkeypatch) -> None:
    """Issue 29, point 7: at the default size the probe heatmap's source labels were cut off at the bottom of
    its scroll area. A run whose probe is a 16-piece sentence, opened with "Open run…": every label the axes
    paint lies inside the visible part of the plot, and the window keeps its size."""
    run = run_with_probe(corpus, tmp_path / "run-with-probe")
    size = window.size()
    open_run_by_click(qtbot, window, run, monkeypatch)
    view = window.train_panel.probe.view
    wait_laid_out(qtbot, window)  # the splitters give the heatmap its room
    for axis in view.axes.values():
        axis.picture = None  # painted again by the grab
    window.grab()
    viewport = view.scroll.viewport()
    assert window.size() == size
    for name, tokens in (("bottom", PROBE_SOURCE), ("left", PROBE_TARGET)):
        axis = view.axes[name]
        assert len(axis.painted) == len(tokens)
        for label, box in axis.painted:
            scene = axis.mapRectToScene(box)
            on_screen = view.graphics.mapFromScene(scene).boundingRect()
            on_screen.moveTopLeft(view.graphics.mapTo(viewport, on_screen.topLeft()))
            assert viewport.rect().adjusted(-1, -1, 1, 1).contains(on_screen), (name, label, on_screen,
                                                                                viewport.rect())


def test_a_new_run_clears_the_previous_runs_probe(qtbot, window, corpus, tmp_path, monkeypatch) -> None:
    """Issue 41: after Start, the probe heatmap still showed the previous run's step 40 until the new run's first
    evaluation. It is cleared when the new run launches (and says so)."""
    panel = window.train_panel
    open_run_by_click(qtbot, window, run_with_probe(corpus, tmp_path / "earlier-run"), monkeypatch)
    probe = panel.probe
    assert "step 40" in probe.view.plot.titleLabel.text
    panel.form.set_form(tiny_config(corpus, max_steps=5000, eval_every=4000))  # no evaluation for a long while
    QTest.mouseClick(panel.start_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: panel.state == "running", timeout=CHILD_MS)
    assert probe.view.matrix().size == 0 and probe.view.tokens() == ([], [])
    assert "step 40" not in probe.view.plot.titleLabel.text
    assert "Tom" not in probe.label.text() and "first evaluation" in probe.label.text()
    panel.stop_button.click()
    qtbot.waitUntil(lambda: panel.state in ("stopped", "failed"), timeout=CHILD_MS)
