"""The Train tab's precision and device controls, through key clicks on the real form (offscreen), and an
out-of-memory run's one sentence in the real window (a training child on a pretend small GPU)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from nmt_desktop.core.config import TrainConfig  # noqa: E402
from nmt_desktop.gui.app import MainWindow  # noqa: E402
from nmt_desktop.gui.train.device_detection import Device  # noqa: E402
from nmt_desktop.gui.train.form import TrainForm  # noqa: E402
from cli_runner import REPO_ROOT  # noqa: E402
from tiny_models import synthetic_pairs, write_tsv  # noqa: E402

CHILD_MS = 180000  # a training child under load
OLD_GPU = Device("cuda:0", "GPU 0: Tesla T4 (15.0 GiB, CUDA, no bf16)", bf16=False)
CPU = Device("cpu", "CPU (2 cores)", True)


def choose(qtbot, combo, data: str) -> None:
    """Pick the entry whose data is `data` with the keyboard, as a user tabbing through the form would."""
    combo.setFocus()
    key = Qt.Key_Down if combo.findData(data) > combo.currentIndex() else Qt.Key_Up
    for _ in range(combo.count()):
        if combo.currentData() == data:
            return
        QTest.keyClick(combo, key)
    assert combo.currentData() == data


def test_precision_and_device_reach_the_command_and_say_what_cannot_run(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path))
    form = TrainForm([OLD_GPU, CPU])
    qtbot.addWidget(form)
    form.train_file.edit.setText(str(tmp_path / "train.tsv"))
    form.show()
    assert [form.precision.itemData(i) for i in range(form.precision.count())] == ["auto", "fp32", "bf16", "fp16"]
    assert form.device.currentData() == "cuda:0" and form.precision.currentData() == "auto"
    assert not form.precision_message.isVisible()

    choose(qtbot, form.precision, "bf16")  # this GPU has no bf16 units: one sentence says so
    assert form.precision_message.isVisible()
    assert form.precision_message.text().startswith("bf16 cannot run on this GPU (it has no bfloat16 units")
    cfg = form.form_config()
    assert (cfg.device, cfg.precision) == ("cuda:0", "bf16")
    assert "--precision bf16" in form.command_view.toPlainText()

    choose(qtbot, form.device, "cpu")  # bf16 runs on the CPU (autocast): no sentence
    assert not form.precision_message.isVisible()
    assert "--device cpu" in form.command_view.toPlainText()

    choose(qtbot, form.precision, "fp16")  # runs on the CPU, slowly: said so
    assert form.precision_message.isVisible() and "slow" in form.precision_message.text()
    assert form.form_config().precision == "fp16" and "--precision fp16" in form.command_view.toPlainText()

    path = tmp_path / "run.toml"  # the choice survives a saved config
    form.save_config(path)
    again = TrainForm([OLD_GPU, CPU])
    qtbot.addWidget(again)
    again.set_form(TrainConfig.from_toml(path))
    assert (again.precision.currentData(), again.device.currentData()) == ("fp16", "cpu")


def test_out_of_memory_in_a_run_shows_one_sentence_and_keeps_the_checkpoint(qtbot, tmp_path, monkeypatch):
    for name, sub in (("CONFIG", "config"), ("LOG", "logs"), ("DATA", "data")):
        monkeypatch.setenv(f"NMT_DESKTOP_{name}_DIR", str(tmp_path / sub))
    window = MainWindow(model=None)
    window.shown_errors = []
    window.show_error = lambda message, title="Error": window.shown_errors.append(message)
    panel = window.train_panel
    stand_in = Path(REPO_ROOT) / "tests" / "gpu_stand_in"
    panel.process.extra_env = {"OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([str(stand_in), str(REPO_ROOT)]),
                               "NMT_TEST_GPU_TOKENS": "250", "NMT_TEST_GPU_AFTER": "7"}
    qtbot.addWidget(window)
    window.show()
    window.show_tab("train")
    try:
        train = write_tsv(tmp_path / "train.tsv", synthetic_pairs(400, seed=3))
        out = tmp_path / "run"
        panel.form.set_form(TrainConfig(train=str(train), preset="tiny", vocab_size=400, batch_tokens=600,
                                        eval_every=5, log_every=1, max_steps=40, threads=1, device="cpu",
                                        out=str(out)))
        qtbot.mouseClick(panel.start_button, Qt.LeftButton)
        qtbot.waitUntil(lambda: panel.state in ("failed", "finished", "stopped"), timeout=CHILD_MS)
        assert panel.state == "failed"
        text = panel.error_label.text()
        assert panel.error_label.isVisible() and text.count("out of GPU memory at batch") == 1, text  # said once
        assert "(try --batch-tokens " in text and f"the last checkpoint {out / 'last'} is kept" in text
        assert "Traceback" not in text
        assert (out / "last" / "trainer_state" / "state.json").is_file()
    finally:
        panel.shutdown(30000)
        window.close()
