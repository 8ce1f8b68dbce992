"""Tools > Fine-tune on my memory… through the window's own controls (issue 45, slow adaptation): the Train form is
filled from the loaded model and the user's memory (a real SQLite file), Start trains it in a real child process,
the trained model's card shows the scores before and after, and the Models tab's "Back to the parent model"
loads the parent again with one click."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from nmt_desktop.core.memory import Entry, Pair, TranslationMemory, default_memory_path  # noqa: E402
from nmt_desktop.gui.app import MainWindow  # noqa: E402
from nmt_desktop.gui.train.form import MEMORY_KIND  # noqa: E402
from tiny_models import synthetic_pairs, write_tsv  # noqa: E402

CHILD_MS = 240000  # a child fine-tuning the tiny model and scoring it four times, on a busy machine


@pytest.fixture
def parent(tiny_model_dir, dirs) -> Path:
    """The tiny model as an en-de model whose card names its training and dev files, as a trained one's does."""
    folder = dirs / "parent"
    shutil.copytree(tiny_model_dir, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "src_lang": "en", "tgt_lang": "de"}), encoding="utf-8")
    card = {"name": "parent", "data": {"train": str(write_tsv(dirs / "general.tsv", synthetic_pairs(300, seed=8))),
                                       "dev": str(write_tsv(dirs / "general-dev.tsv", synthetic_pairs(10, seed=9)))}}
    (folder / "card.json").write_text(json.dumps(card), encoding="utf-8")
    return folder


@pytest.fixture
def memory(dirs) -> Path:
    """The user's memory, where the desk confirms into: 40 segments of the domain where "cat" is "mieze"."""
    pairs = list(dict.fromkeys((s, t.replace("katze", "mieze")) for s, t in synthetic_pairs(300, seed=7)
                               if "cat" in s.split()))[:40]
    with TranslationMemory(default_memory_path()) as tm:
        tm.add(Entry(s, t, Pair.of("en", "de"), origin="confirmed") for s, t in pairs)
    return default_memory_path()


@pytest.fixture
def window(qtbot, dirs):
    window = MainWindow(model=None)
    window.shown_errors = []
    window.show_error = lambda message, title="Error": window.shown_errors.append(message)
    window.train_panel.process.extra_env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    qtbot.addWidget(window)
    window.show()
    yield window
    window.train_panel.shutdown(30000)
    window.close()


def load(qtbot, window, path: Path) -> None:
    window.load_model(path)
    qtbot.waitUntil(lambda: window.info is not None and Path(window.info.path).resolve() == path.resolve(),
                    timeout=60000)


def test_fine_tune_on_my_memory_and_back_to_the_parent(qtbot, window, parent, memory) -> None:
    action = window.menus.actions["fine_tune_memory"]
    action.trigger()  # no model loaded yet: said, nothing filled
    assert window.shown_errors[-1].startswith("Load the model to fine-tune first")
    load(qtbot, window, parent)

    action.trigger()
    panel, form = window.train_panel, window.train_panel.form
    assert window.tabs.currentWidget() is panel
    assert form.finetune_radio.isChecked() and form.train_kind.currentIndex() == MEMORY_KIND
    assert form.memory_rows.memory.isVisibleTo(form) and not form.train_file.isVisibleTo(form)
    assert form.memory_rows.memory.text() == str(memory)
    assert form.memory_rows.replay.text() == str(parent.parent / "general.tsv")  # the parent's card's files
    assert form.memory_rows.general_dev.text() == str(parent.parent / "general-dev.tsv")
    qtbot.waitUntil(lambda: "Memory: 40 segments of en-de" in form.data_summary.text() or form.data_error.isVisibleTo(form), timeout=60000)
    assert not form.data_error.isVisibleTo(form), form.data_error.text()
    assert "4 held out as the dev set" in form.data_summary.text()
    assert "Replay: 36 general pairs" in form.data_summary.text()
    assert "--memory" in form.command_view.toPlainText()

    form.limit_value.setValue(6)
    form.eval_every.setValue(3)
    form.batch_tokens.setValue(300)
    form.threads.setValue(1)
    panel.start_button.click()
    qtbot.waitUntil(lambda: panel.state in ("finished", "failed"), timeout=CHILD_MS)
    assert panel.state == "finished", panel.error_text
    card = json.loads((panel.run_dir / "best" / "card.json").read_text(encoding="utf-8"))
    assert card["parent"] == str(parent.absolute())
    assert set(card["memory"]["scores"]) == {"step", "memory", "general"}
    assert card["memory"]["scores"]["general"]["before"]["sentences"] == 10

    panel.load_model_button.click()
    qtbot.waitUntil(lambda: window.info is not None and Path(window.info.path) == panel.run_dir / "best",
                    timeout=60000)
    models = window.models_panel
    assert models.parent_button.isVisibleTo(models) and "(parent)" in models.parent_button.text()
    page = models.info_view.toPlainText()
    assert "Fine-tuned on your memory" in page and "Your memory's domain" in page and "General text" in page
    models.parent_button.click()
    qtbot.waitUntil(lambda: Path(window.info.path).resolve() == parent.resolve(), timeout=60000)
    assert not models.parent_button.isVisibleTo(models)  # the parent has no parent of its own
    assert os.path.samefile(window.info.path, parent)
