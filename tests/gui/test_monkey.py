"""A seeded "monkey" drives the real main window with random actions across every tab (pytest-qt, offscreen).

It types and pastes text (empty, long, unicode, emoji), translates and stops, switches decoding options,
tabs, views and colour scales, runs Analysis jobs, exports to a temporary folder, switches between two
tiny models, starts and stops a tiny training run, and toggles the theme. It asserts that no exception
reaches Qt's handler (pytest-qt fails the test on one), that no error shown to the user is more than one
sentence, that the event loop is never blocked longer than `MAX_GAP_S` (a 20 ms heartbeat timer: the GUI
thread's CPU time between two of its ticks while the monkey runs; see Heartbeat), that Qt never reports an
object used from the wrong thread, and that the window closes with every thread joined and no training child
left. (No watchdog thread samples stacks: a Python thread of the test's own can run the garbage collector on Qt
objects, and faulthandler's timed dump reads running frames; each crashed a run of this test once.)

Actions whose widget does not exist (yet) are skipped; the test fails if any core action never ran.
NMT_MONKEY_ACTIONS (default 250, a CI-sized run) and NMT_MONKEY_SEED (default 22) choose the run;
a long run (its figures are printed):
`NMT_MONKEY_ACTIONS=20000 pytest -s -o timeout=0 tests/gui/test_monkey.py`.
"""

from __future__ import annotations

import os
import random
from collections import Counter
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import (QAbstractButton, QApplication, QCheckBox, QComboBox, QDialog,  # noqa: E402
                               QFileDialog, QMessageBox, QSpinBox, QWidget)

from nmt_desktop.core.config import TrainConfig  # noqa: E402
from nmt_desktop.gui.app import MainWindow  # noqa: E402

from tiny_models import SOURCE_WORDS, synthetic_pairs, write_tsv  # noqa: E402

ACTIONS = int(os.environ.get("NMT_MONKEY_ACTIONS", "250"))
SEED = int(os.environ.get("NMT_MONKEY_SEED", "22"))
# The test's bound on GUI-thread CPU time between two heartbeat ticks: a real stall (a decode, a file read or a
# model load on the GUI thread) costs seconds. Between two ticks the work of several actions and of the events
# they posted can add up, and how many depends on how late the loaded machine delivers the tick, so the 250 ms
# latency budget of a quiet machine is no test verdict: it is checked as a benchmark,
# `NMT_MONKEY_MAX_GAP_S=0.25 NMT_MONKEY_ACTIONS=2000 pytest -s tests/gui/test_monkey.py` on a quiet machine
# (benchmarks/RESULTS.md, "Test suite"), like benchmarks/gui_latency.py.
MAX_GAP_S = float(os.environ.get("NMT_MONKEY_MAX_GAP_S", "1.0"))
HEARTBEAT_MS = 20
# The one known stall, with its own bound: a theme change re-applies the app's style sheet, and
# QApplication.setStyleSheet repolishes every widget (about 215 ms of CPU with the whole window built; Qt resolves
# palette() in style sheets only at polish time, so a palette change alone cannot restyle). A colour map change sets
# no style sheet (about 13 ms) and is held to MAX_GAP_S like every other action. The bound is loose because the
# repolish is CPU-bound and scales with the machine's load: 215 ms idle here, 306 ms in the long run, 449 ms in one CI
# run on a busy machine.
KNOWN_STALLS = {"theme": max(3.0, 4 * MAX_GAP_S)}
CORE_ACTIONS = {"type", "paste", "translate", "stop", "decode_mode", "switch_tab", "attention_view", "focus",
                "analysis_job", "export", "switch_model", "train", "inspect"}
TEXTS = ["", " ", "\n\n", "red cat runs", "big dog eats small bird",
         "Grüße aus Köln — ½ € 日本語 Ελληνικά",
         "🙂🚀👍🏽 red 🐈", "red cat.\nblue dog sleeps.\n\nsun", "x" * 300, "\t\u200b\u00a0",
         "a\u0301\u0308 \U0001F468\u200d\U0001F469\u200d\U0001F467 ﷽"]


@dataclass
class Heartbeat:
    """A timer that ticks every HEARTBEAT_MS. Between two ticks the event loop was blocked for as long as the GUI
    thread was busy: its CPU time over the gap (wall time would also count the moments this test's neighbours
    on a shared machine held the cores). Both are kept per action (the one that ran last before the tick)."""

    timer: QTimer
    clock: QElapsedTimer = field(default_factory=QElapsedTimer)
    busy_ms: dict[str, int] = field(default_factory=dict)  # action -> largest GUI-thread CPU time between ticks
    wall_ms: dict[str, int] = field(default_factory=dict)  # action -> largest wall-clock gap between ticks
    last_action: str = "start"
    _cpu: float = 0.0

    def start(self) -> None:
        self.clock.start()
        self._cpu = time.thread_time()
        self.timer.timeout.connect(self._tick)
        self.timer.start(HEARTBEAT_MS)

    def _tick(self) -> None:
        wall, cpu = self.clock.restart(), time.thread_time()
        busy, self._cpu = round(1000 * (cpu - self._cpu)), cpu
        for table, value in ((self.busy_ms, busy), (self.wall_ms, wall)):
            table[self.last_action] = max(value, table.get(self.last_action, 0))

    def stop(self) -> None:
        self.timer.stop()

    def worst(self, table: dict[str, int], skip: tuple[str, ...] = ()) -> tuple[int, str]:
        """(largest gap in ms, the action before it), ignoring the actions in `skip`."""
        return max(((g, a) for a, g in table.items() if a not in skip), default=(0, ""))


class Monkey:
    """The random actions, each returning False when it does not apply (no such widget, nothing to do)."""

    def __init__(self, window: MainWindow, qtbot, rng: random.Random, models: list[Path], corpus: Path,
                 out: Path):
        self.w, self.qtbot, self.rng, self.models, self.corpus, self.out = window, qtbot, rng, models, corpus, out
        self.counts: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.exports = 0
        self.actions: list[tuple[str, int, Callable[[], bool]]] = [
            ("type", 8, self.type_text), ("paste", 4, self.paste), ("translate", 10, self.translate),
            ("stop", 4, self.stop), ("decode_mode", 5, self.decode_mode), ("switch_tab", 6, self.switch_tab),
            ("attention_view", 5, self.attention_view), ("focus", 4, self.focus), ("select", 4, self.select),
            ("analysis_job", 5, self.analysis_job), ("export", 3, self.export), ("switch_model", 1, self.switch_model),
            ("train", 1, self.train), ("theme", 1, self.theme), ("colormap", 1, self.colormap),
            ("poke", 6, self.poke), ("dialog", 1, self.dialog), ("inspect", 3, self.inspect),
            ("wait_idle", 2, self.wait_idle),
        ]

    # -- helpers -------------------------------------------------------------------------------------

    @property
    def panel(self):
        return self.w.translate_panel

    def text(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice(TEXTS)
        if r < 0.9:
            return " ".join(self.rng.choice(SOURCE_WORDS) for _ in range(self.rng.randint(1, 12)))
        return " ".join(self.rng.choice(SOURCE_WORDS) for _ in range(self.rng.randint(60, 400)))  # long

    def step(self) -> str:
        names, weights = zip(*[(n, w) for n, w, _ in self.actions])
        name = self.rng.choices(names, weights)[0]
        ran = dict((n, f) for n, _, f in self.actions)[name]()
        bucket = self.counts if ran else self.skipped
        bucket[name] = bucket.get(name, 0) + 1
        return name

    # -- actions -------------------------------------------------------------------------------------

    def type_text(self) -> bool:
        source = self.panel.source
        if self.rng.random() < 0.3:
            source.clear()
        text = self.text()
        if len(text) <= 20 and text.isascii() and text.isprintable() and self.rng.random() < 0.5:
            QTest.keyClicks(source, text)  # real key events, one by one (QTest types printable ASCII only)
        elif self.rng.random() < 0.5:
            source.insertPlainText(text)  # as an input method commits text
        else:
            source.setPlainText(text)
        return True

    def paste(self) -> bool:
        QApplication.clipboard().setText(self.text())
        self.panel.source.paste()
        return True

    def translate(self) -> bool:
        if self.rng.random() < 0.5:
            self.panel.translate_button.click()
        else:
            self.w.menus.actions["translate"].trigger()
        return True

    def inspect(self) -> bool:
        """Your translation (the model's, or any text, long ones too) inspected by the button or Ctrl+I's action."""
        box = self.panel.inspect_box
        if self.rng.random() < 0.5:
            box.use_model_translation()
        else:
            box.editor.setPlainText(self.text())
        if self.rng.random() < 0.5:
            box.inspect_button.click()
        else:
            self.w.menus.actions["inspect"].trigger()
        return True

    def stop(self) -> bool:
        if self.rng.random() < 0.5:
            self.panel.stop_button.click()
        else:
            self.w.menus.actions["stop"].trigger()
        return True

    def decode_mode(self) -> bool:
        o = self.panel.options
        o.mode.setCurrentIndex(self.rng.randrange(o.mode.count()))
        widget = self.rng.choice([o.beam, o.nbest, o.temperature, o.top_k, o.top_p, o.seed, o.max_len_a,
                                  o.max_len_b, o.min_length, o.length_penalty])
        lo, hi = widget.minimum(), min(widget.maximum(), 12 if isinstance(widget, QSpinBox) else 3.0)
        widget.setValue(self.rng.randint(int(lo), int(hi)) if isinstance(widget, QSpinBox)
                        else round(self.rng.uniform(lo, hi), 2))
        if self.rng.random() < 0.2:
            self.panel.as_you_type.toggle()
        return True

    def switch_tab(self) -> bool:
        if self.rng.random() < 0.5:
            self.w.tabs.setCurrentIndex(self.rng.randrange(self.w.tabs.count()))
        else:
            tabs = [a for k, a in self.w.menus.actions.items() if k.startswith("tab_")]
            if not tabs:
                return False
            self.rng.choice(tabs).trigger()
        return True

    def attention_view(self) -> bool:
        view = self.panel.view
        combo = self.rng.choice([view.kind_combo, view.scale_combo])
        combo.setCurrentIndex(self.rng.randrange(combo.count()))
        if self.rng.random() < 0.3:
            view.merge_check.toggle()
        return True

    def focus(self) -> bool:
        view = self.panel.view
        if view.focus_view.isVisible() and self.rng.random() < 0.4:
            if hasattr(view, "show_grid"):
                view.show_grid()
            else:
                view.focus_view.hide()
            return True
        info = self.w.info
        if info is None:
            return False
        try:
            view.focus(self.rng.randrange(-1, info.layers), self.rng.randrange(-1, info.heads))
        except (ValueError, IndexError):  # no such cell yet (nothing translated): refused, not a crash
            pass
        return True

    def select(self) -> bool:
        lists = [self.panel.sentence_list, self.panel.nbest_list, self.panel.alternatives]
        widget = self.rng.choice(lists)
        count = widget.count() if hasattr(widget, "count") else widget.rowCount()
        if not count:
            return False
        if hasattr(widget, "setCurrentRow"):
            widget.setCurrentRow(self.rng.randrange(count))
        else:
            widget.selectRow(self.rng.randrange(count))
        if self.rng.random() < 0.2:
            self.panel.force_alternative(self.rng.randrange(5))
        return True

    def analysis_job(self) -> bool:
        analysis = self.w.analysis_panel
        analysis.tabs.setCurrentIndex(self.rng.randrange(analysis.tabs.count()))
        page = analysis.tabs.currentWidget()
        buttons = [b for b in page.findChildren(QAbstractButton) if b.isEnabled() and b.isVisibleTo(page)]
        if not buttons:
            return False
        self.rng.choice(buttons).click()  # file dialogs are patched: they answer at once
        return True

    def export(self) -> bool:
        menu = self.panel.view.export_button.menu()
        actions = [a for a in menu.actions() if a.isEnabled()] if menu is not None else []
        if not actions:
            return False
        self.exports += 1
        self.rng.choice(actions).trigger()
        return True

    def switch_model(self) -> bool:
        self.w.load_model(str(self.rng.choice(self.models)))
        return True

    def train(self) -> bool:
        panel = self.w.train_panel
        if panel.running:
            panel.stop()
            return True
        if panel.state == "checking":  # Start was pressed and the data check is under way
            return False
        panel.form.set_form(TrainConfig(train=str(self.corpus), dev_fraction=0.1, preset="tiny", vocab_size=300,
                                        batch_tokens=400, max_steps=30, eval_every=10, log_every=1, threads=1,
                                        device="cpu", eval_sentences=10, warmup_steps=5))
        return panel.start()

    def theme(self) -> bool:
        return self._trigger_one(getattr(self.w.menus, "theme_actions", {}))

    def colormap(self) -> bool:
        return self._trigger_one(getattr(self.w.menus, "colormap_actions", {}))

    def _trigger_one(self, actions: dict) -> bool:
        if not actions:
            return False
        self.rng.choice(list(actions.values())).trigger()
        return True

    def poke(self) -> bool:
        """A random enabled combo box, check box or spin box of the tab shown."""
        tab = self.w.tabs.currentWidget()
        widgets = [x for x in tab.findChildren(QWidget) if isinstance(x, (QComboBox, QCheckBox, QSpinBox))
                   and x.isEnabled() and x.isVisibleTo(tab)]
        if not widgets:
            return False
        x = self.rng.choice(widgets)
        if isinstance(x, QComboBox) and x.count():
            x.setCurrentIndex(self.rng.randrange(x.count()))
        elif isinstance(x, QCheckBox):
            x.toggle()
        elif isinstance(x, QSpinBox):
            x.setValue(self.rng.randint(x.minimum(), min(x.maximum(), x.minimum() + 50)))
        return True

    def dialog(self) -> bool:
        """Help > Keyboard shortcuts, About, or File > Translate text file on a small file; closed again."""
        choice = self.rng.choice(["shortcuts", "about", "file"])
        if choice == "file":
            path = self.out / "doc.txt"
            path.write_text("red cat runs.\n\nblue dog sleeps.\n", encoding="utf-8")
            self.w.translate_file(path)
        else:
            self.w.menus.actions[choice].trigger()
        self.qtbot.wait(self.rng.randint(0, 50))
        for d in QApplication.topLevelWidgets():
            if isinstance(d, QDialog) and d.isVisible():
                d.close()
        return True

    def wait_idle(self) -> bool:
        """Let a translation finish now and then, so its results (and the views over them) are exercised."""
        self.qtbot.waitUntil(lambda: not self.panel.running and not self.w.models_panel.loading, timeout=60000)
        return True


def run_monkey(qtbot, window: MainWindow, models: list[Path], corpus: Path, out: Path, actions: int,
               seed: int) -> tuple[Monkey, Heartbeat, float]:
    monkey = Monkey(window, qtbot, random.Random(seed), models, corpus, out)
    beat = Heartbeat(QTimer())
    started = time.perf_counter()
    beat.start()
    for n in range(1, actions + 1):
        beat.last_action = monkey.step()
        qtbot.wait(monkey.rng.randint(0, 30))
        if n % 1000 == 0:  # a long run that dies says how far it got
            print(f"monkey: {n} actions, {time.perf_counter() - started:.0f} s", flush=True)
    beat.stop()
    return monkey, beat, time.perf_counter() - started


@pytest.fixture
def sandbox(tmp_path, monkeypatch, tiny_model_dir) -> dict:
    for var, sub in (("NMT_DESKTOP_CONFIG_DIR", "config"), ("NMT_DESKTOP_LOG_DIR", "logs"),
                     ("NMT_DESKTOP_DATA_DIR", "data")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    exports = tmp_path / "exports"
    exports.mkdir()
    names = iter(range(10**9))
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(exports / f"export-{next(names)}"), "")))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))
    warnings: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda _p, _t, text, *a, **k: warnings.append(text)))
    second = tmp_path / "models" / "tiny-second"
    shutil.copytree(tiny_model_dir, second)
    corpus = write_tsv(tmp_path / "train.tsv", synthetic_pairs(200, seed=4))
    return {"models": [tiny_model_dir, second], "corpus": corpus, "exports": exports, "warnings": warnings,
            "out": tmp_path}


def test_monkey_drives_the_whole_window(qtbot, qtlog, sandbox) -> None:
    window = MainWindow(model=str(sandbox["models"][0]))
    errors: list[str] = []
    window.show_error = lambda message, title="Error": errors.append(message)  # never a dialog
    window.train_panel.ask = lambda title, text: True
    window.train_panel.process.extra_env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.info is not None, timeout=60000)

    monkey, beat, seconds = run_monkey(qtbot, window, sandbox["models"], sandbox["corpus"], sandbox["out"],
                                       ACTIONS, SEED)
    gap, after = beat.worst(beat.busy_ms, skip=tuple(KNOWN_STALLS))
    wall, wall_after = beat.worst(beat.wall_ms)
    print(f"\nmonkey: {ACTIONS} actions, seed {SEED}, {seconds:.1f} s; longest block of the event loop {gap} ms "
          f"of GUI-thread work (after '{after}'), longest wall-clock gap {wall} ms (after '{wall_after}'); "
          f"per action, block ms {dict(sorted(beat.busy_ms.items()))}, wall ms {dict(sorted(beat.wall_ms.items()))}; "
          f"ran {dict(sorted(monkey.counts.items()))}; skipped {dict(sorted(monkey.skipped.items()))}; "
          f"errors shown {len(errors)}: {dict(Counter(m[:50] for m in errors).most_common(6))}")
    window.train_panel.shutdown(60000)
    window.close()
    assert not window.translate_panel._worker_thread.thread.isRunning()
    assert not window.models_panel._thread.thread.isRunning()
    assert not window.train_panel.running
    assert not window.isVisible()
    if ACTIONS >= 200:
        assert CORE_ACTIONS <= set(monkey.counts), f"core actions that never ran: {CORE_ACTIONS - set(monkey.counts)}"
        assert any(sandbox["exports"].iterdir()), "no export wrote a file"
    assert all("\n" not in m and "Traceback" not in m for m in errors + sandbox["warnings"]), errors
    threads = [r.message for r in qtlog.records if "another thread" in r.message or "different thread" in r.message]
    assert not threads, f"Qt objects used from the wrong thread: {threads[:3]}"
    assert gap <= MAX_GAP_S * 1000, f"the event loop stalled {gap} ms (after the action '{after}')"
    for action, limit_s in KNOWN_STALLS.items():
        assert beat.busy_ms.get(action, 0) <= limit_s * 1000, f"'{action}' stalled {beat.busy_ms[action]} ms"
