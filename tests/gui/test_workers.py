"""Workers on QThreads: streaming steps, cancellation, model loading, and a signal stress test."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, Qt, Signal, Slot  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.results import Step  # noqa: E402
from nmt_desktop.gui.models.loader import ModelInfo, ModelLoader  # noqa: E402
from nmt_desktop.gui.workers import TranslateWorker, WorkerThread  # noqa: E402


class Collector(QObject):
    """Lives in the main thread: queued signals from a worker thread land here."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[tuple[int, int, object]] = []  # (request id, unit index, core Step)
        self.seen_attention: list[np.ndarray] = []
        self.finished: list[tuple[int, list]] = []
        self.failed: list[tuple[int, str]] = []

    @Slot(int, int, object)
    def on_step(self, request_id: int, index: int, step: object) -> None:
        self.steps.append((request_id, index, step))
        self.seen_attention.append(step.cross_attention.copy())  # as it was when it crossed to this thread

    @Slot(int, object)
    def on_finished(self, request_id: int, result: object) -> None:
        self.finished.append((request_id, result))

    @Slot(int, str)
    def on_failed(self, request_id: int, message: str) -> None:
        self.failed.append((request_id, message))


class Driver(QObject):
    request = Signal(int, object, object, object)


@pytest.fixture
def worker(qtbot):
    worker = TranslateWorker()
    thread = WorkerThread(worker, "test-translate")
    collector, driver = Collector(), Driver()
    driver.request.connect(worker.run)
    worker.step.connect(collector.on_step)
    worker.finished.connect(collector.on_finished)
    worker.failed.connect(collector.on_failed)
    worker.collector, worker.driver = collector, driver
    yield worker
    assert thread.stop(), "worker thread did not stop"


def test_worker_streams_steps_and_finishes_like_translate(qtbot, worker, tiny_translator) -> None:
    cfg = DecodeConfig()
    worker.driver.request.emit(7, tiny_translator, "red cat runs", cfg)
    qtbot.waitUntil(lambda: len(worker.collector.finished) == 1, timeout=30000)
    request_id, translations = worker.collector.finished[0]
    expected = tiny_translator.translate("red cat runs", cfg)
    assert request_id == 7 and len(translations) == 1
    got = translations[0]
    assert got.text == expected.text
    assert got.target_ids == expected.target_ids
    np.testing.assert_allclose(got.attention, expected.attention, atol=1e-5)
    steps = [p for rid, unit, p in worker.collector.steps if rid == 7 and unit == 0]
    assert len(steps) == len(worker.collector.steps)
    assert [p.piece for p in steps] == got.target_tokens  # one core Step per target token, in order
    assert [p.index for p in steps] == list(range(len(steps)))
    for t, p in enumerate(steps):
        att = p.cross_attention
        assert isinstance(att, np.ndarray) and att.dtype == np.float32
        assert att.shape == (2, 4, len(got.source_tokens))
        np.testing.assert_allclose(att, got.attention[:, :, t], atol=1e-5)
        assert all(isinstance(a.piece, str) and isinstance(a.prob, float) for a in p.alternatives)
    # what a step carried across threads is never written afterwards (the search gives each position fresh
    # arrays; a Step holds a view of its position's array, not a copy)
    for p, seen in zip(steps, worker.collector.seen_attention):
        np.testing.assert_array_equal(p.cross_attention, seen)
    assert not worker.collector.failed


def test_worker_cancel_stops_without_finished(qtbot, worker, tiny_translator) -> None:
    seen: list[int] = []

    def cancel_after_three(request_id: int, index: int, step: object) -> None:  # runs in the worker thread
        seen.append(request_id)
        if len(seen) == 3:
            worker.cancel(request_id)

    worker.step.connect(cancel_after_three, Qt.DirectConnection)
    cfg = DecodeConfig(beam_size=2, nbest=1, min_length=200, max_len_b=250)
    worker.driver.request.emit(3, tiny_translator, "red cat runs\nbig dog sleeps", cfg)
    qtbot.waitUntil(lambda: len(seen) >= 3, timeout=30000)
    qtbot.waitUntil(lambda: not worker.busy, timeout=30000)
    QApplication.sendPostedEvents()  # every signal the worker sent before it went idle, delivered
    assert len(seen) == 3
    assert worker.collector.finished == [] and worker.collector.failed == []
    # the worker still serves new requests
    worker.driver.request.emit(4, tiny_translator, "big dog", DecodeConfig())
    qtbot.waitUntil(lambda: len(worker.collector.finished) == 1, timeout=30000)
    assert worker.collector.finished[0][0] == 4


def test_worker_failure_is_one_line(qtbot, worker, tiny_translator) -> None:
    too_long = " ".join(["red"] * 200)
    worker.driver.request.emit(5, tiny_translator, too_long, DecodeConfig())
    qtbot.waitUntil(lambda: len(worker.collector.failed) == 1, timeout=30000)
    request_id, message = worker.collector.failed[0]
    assert request_id == 5 and "\n" not in message and "at most" in message


def test_model_loader_loads_and_reports_bad_models(qtbot, tiny_model_dir, tmp_path) -> None:
    loader = ModelLoader()
    thread = WorkerThread(loader, "test-loader")
    driver = type("LoadDriver", (QObject,), {"request": Signal(int, str)})()
    collector = Collector()
    driver.request.connect(loader.load)
    loader.finished.connect(collector.on_finished)
    loader.failed.connect(collector.on_failed)
    try:
        driver.request.emit(1, str(tiny_model_dir))
        qtbot.waitUntil(lambda: len(collector.finished) == 1, timeout=30000)
        request_id, (translator, info) = collector.finished[0]
        assert request_id == 1 and isinstance(info, ModelInfo)
        assert (info.layers, info.heads) == (2, 4) and info.size_bytes > 0 and info.card["name"] == "tiny synthetic"
        assert translator.translate("red cat").text
        bad = tmp_path / "bad"
        shutil.copytree(tiny_model_dir, bad)
        (bad / "config.json").write_text("{not json", encoding="utf-8")
        driver.request.emit(2, str(bad))
        qtbot.waitUntil(lambda: len(collector.failed) == 1, timeout=30000)
        assert collector.failed[0][0] == 2
        assert "config.json" in collector.failed[0][1] and "\n" not in collector.failed[0][1]
        run = tmp_path / "run"  # a training run's folder opens its best model
        shutil.copytree(tiny_model_dir, run / "best")
        (run / "events.jsonl").write_text("", encoding="utf-8")
        driver.request.emit(3, str(run))
        qtbot.waitUntil(lambda: len(collector.finished) == 2, timeout=30000)
        assert collector.finished[1][0] == 3 and collector.finished[1][1][1].path == run / "best"
        assert collector.finished[1][1][1].name == "run"  # named after the run, not "best"
        (run / "empty").mkdir()
        (run / "empty" / "events.jsonl").write_text("", encoding="utf-8")
        driver.request.emit(4, str(run / "empty"))
        qtbot.waitUntil(lambda: len(collector.failed) == 2, timeout=30000)
        assert "has no complete model yet" in collector.failed[1][1]
    finally:
        assert thread.stop()


class Pump(QObject):
    """Emits the worker's `step` signal N times from the worker thread."""

    go = Signal(int)

    def __init__(self, worker: TranslateWorker) -> None:
        super().__init__()
        self.worker = worker

    @Slot(int)
    def run(self, n: int) -> None:
        for i in range(n):
            step = Step(i, i, f"t{i}", 0.0, [], np.full((2, 4, 6), i, dtype=np.float32))
            self.worker.step.emit(1, 0, step)


def test_stress_ten_thousand_step_signals(qtbot) -> None:
    """PySide6 6.12.0 aborted after thousands of emits; 6.11.3 must deliver every one (queued, cross-thread)."""
    n = 10_000
    worker, collector = TranslateWorker(), Collector()
    thread = WorkerThread(worker, "test-stress")
    pump = Pump(worker)
    pump.moveToThread(thread.thread)
    pump.go.connect(pump.run)
    worker.step.connect(collector.on_step)
    try:
        pump.go.emit(n)
        qtbot.waitUntil(lambda: len(collector.steps) == n, timeout=60000)
    finally:
        assert thread.stop()
    indices = [p.index for _, _, p in collector.steps]
    assert indices == list(range(n))
    last = collector.steps[-1][2].cross_attention
    assert last.shape == (2, 4, 6) and float(last[0, 0, 0]) == n - 1
