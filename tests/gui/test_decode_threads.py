"""The app's decoding thread policy (gui/decode_threads.py, issue 42): a Translate click and File > Translate
file… decode on the policy's torch thread count, set on the worker thread itself; OMP_NUM_THREADS, the user's
word, is left alone; and the app's own recent decoding is not counted as other work.

The machine's load is the one thing faked (core/decoding/threads.py's `busy_cores` and `usable_cores`): a
real busy machine cannot be ordered up for a test. What runs is the real window, worker threads and tiny model."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import torch  # noqa: E402

from nmt_desktop.core.decoding import threads  # noqa: E402
from nmt_desktop.gui import decode_threads  # noqa: E402
from nmt_desktop.gui.decode_threads import LOAD_WINDOW_S, OwnLoad  # noqa: E402
from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402


class Clocks:
    """A process CPU clock and a wall clock the test moves."""

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0

    def run(self, seconds: float, cores: float) -> None:
        self.wall += seconds
        self.cpu += seconds * cores


@pytest.fixture
def machine(monkeypatch):
    """A 4-core machine whose load the test sets (`machine.load = 3.0`); the app's own CPU use held at 0 so
    that the load is all other work, unless a test gives its own OwnLoad."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    state = type("Machine", (), {"load": 0.0})()
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads, "busy_cores", lambda: state.load)
    monkeypatch.setattr(threads, "_own", OwnLoad(cpu=lambda: 0.0))
    before = torch.get_num_threads()
    yield state
    torch.set_num_threads(before)  # the count later threads of this test process start with, as it was


def recording(function, seen: list[int]):
    """`function`, noting torch's thread count on the thread that calls it (the worker's) at each call."""
    def wrapper(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return function(*args, **kwargs)
    return wrapper


def test_translate_button_and_document_dialog_decode_on_the_policys_threads(
        qtbot, open_main_window, tiny_model_dir, tmp_path, machine, monkeypatch) -> None:
    from nmt_desktop.gui.documents import worker as document_worker

    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    seen_tab: list[int] = []
    monkeypatch.setattr(panel.translator, "stream_document", recording(panel.translator.stream_document, seen_tab))

    machine.load = 3.0  # three of four cores busy elsewhere: one thread
    panel.source.setPlainText("red cat runs")
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    machine.load = 0.4  # an idle machine: four threads (the policy's most)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    assert seen_tab == [1, 4]

    seen_document: list[int] = []
    monkeypatch.setattr(document_worker, "translate_document",
                        recording(document_worker.translate_document, seen_document))
    source = tmp_path / "letter.txt"
    source.write_text("red cat runs\nblue dog sleeps\n", encoding="utf-8")
    machine.load = 2.2  # two busy cores: two threads
    dialog = window.translate_file(source)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    machine.load = 5.0  # more load than cores: still one thread
    dialog.translate_button.click()
    assert dialog.running
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert seen_document == [2, 1]
    assert window.shown_errors == [] and dialog.result is not None


def test_omp_num_threads_is_the_users_word(qtbot, open_main_window, tiny_model_dir, machine, monkeypatch) -> None:
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    seen: list[int] = []
    monkeypatch.setattr(panel.translator, "stream_document", recording(panel.translator.stream_document, seen))
    machine.load = 3.0
    panel.source.setPlainText("red cat runs")
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # torch read it at start-up; the policy must not override it
    machine.load = 0.0  # the policy alone would now say four
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    assert seen == [1, 1]


def test_the_apps_own_decoding_is_not_other_work(monkeypatch) -> None:
    """A minute of two-thread decoding raises the 1-minute load to 2(1 - 1/e) on an idle 2-core machine; the
    next job must still get both cores, and a machine busy with others' work still gets one."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    clocks = Clocks()
    own = OwnLoad(cpu=lambda: clocks.cpu, wall=lambda: clocks.wall)
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    load = [0.0]
    monkeypatch.setattr(threads, "busy_cores", lambda: load[0])

    assert decode_threads.decoding_threads(own) == 2  # idle, nothing decoded yet
    clocks.run(LOAD_WINDOW_S, cores=2.0)  # the app decodes on both cores for a minute
    decode_threads.end_decoding(own)
    load[0] = 2.0 * (1 - 1 / 2.718281828)  # what the kernel's load average shows now: all of it the app's
    assert own.average == pytest.approx(load[0], rel=1e-6)
    assert threads.default_threads(load=load[0]) == 1  # the plain policy would halve the next job's threads
    assert decode_threads.decoding_threads(own) == 2

    load[0] += 1.0  # another process now keeps one core busy
    assert decode_threads.decoding_threads(own) == 1
    clocks.run(10 * LOAD_WINDOW_S, cores=0.0)  # ten idle minutes: the app's share has decayed away
    decode_threads.end_decoding(own)
    assert own.average < 0.01
    load[0] = 1.6  # the machine busy with others' work only
    assert decode_threads.decoding_threads(own) == 1


def test_a_long_document_follows_the_load_between_batches(qtbot, open_main_window, tiny_model_dir, tmp_path,
                                                          machine, monkeypatch) -> None:
    """The load read at the start of a book is stale minutes later: the dialog's worker reads the policy
    again between batches, so a machine that got idle (or busy) mid-document changes the next batch's count."""
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.gui.documents import worker as document_worker

    monkeypatch.setattr(document_worker, "RETHREAD_EVERY_S", 0.0)
    seen: list[int] = []
    monkeypatch.setattr(Translator, "translate_units", recording(Translator.translate_units, seen))
    window = open_main_window(tiny_model_dir)
    loads = iter([3.0])  # busy when the job starts, idle from the first batch on
    monkeypatch.setattr(threads, "busy_cores", lambda: next(loads, 0.0))
    source = tmp_path / "long.txt"
    source.write_text("\n".join(["red cat runs", "blue dog sleeps"] * 40) + "\n", encoding="utf-8")
    dialog = window.translate_file(source)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert dialog.result is not None and dialog.result.sentences == 80
    assert len(seen) >= 2 and seen[0] == 1 and set(seen[1:]) == {4}
