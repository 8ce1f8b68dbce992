"""The Heads & methods view (gui/analysis/dataset_view.py), used by clicking: choose a file (the file dialog
answered by the test), Run, sort by a column header, click a row and read its sentences, export; Cancel
stops the run; a model change leaves no stale rows. Tiny model, offscreen."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QTableWidget  # noqa: E402

from nmt_desktop.core.analysis.dataset_report import dataset_report  # noqa: E402
from nmt_desktop.gui.analysis.dataset_view import DatasetView  # noqa: E402
from limits import SLOW_TIMEOUT_MS, TIMEOUT_MS  # noqa: E402
from tiny_models import synthetic_pairs, write_tsv  # noqa: E402


def noisy_pairs(n: int) -> list[tuple[str, str]]:
    return [(s, " ".join(t.split()[:-1]) or t) if i % 2 == 0 else (s, t)
            for i, (s, t) in enumerate(synthetic_pairs(n, seed=7))]


def click(widget) -> None:
    QTest.mouseClick(widget, Qt.LeftButton, pos=QPoint(widget.width() // 2, widget.height() // 2))


def click_header(table: QTableWidget, column: int) -> None:
    header = table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    QTest.mouseClick(header.viewport(), Qt.LeftButton, pos=QPoint(x, header.height() // 2))


def click_row(table: QTableWidget, row: int) -> None:
    QTest.mouseClick(table.viewport(), Qt.LeftButton, pos=table.visualItemRect(table.item(row, 0)).center())


@pytest.fixture
def view(qtbot, config_dir, tiny_translator):
    view = DatasetView()
    qtbot.addWidget(view)
    view.resize(1300, 800)
    view.show()
    view.set_translator(tiny_translator)
    yield view
    view.shutdown()


def only_methods(view: DatasetView, keep: set[str]) -> None:
    for method, box in view.method_boxes.items():
        if box.isChecked() != (method in keep):
            click(box)


def choose_file(view: DatasetView, monkeypatch, path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    click(view.browse_button)
    assert view.path() == str(path)


def test_run_sort_click_a_row_and_export(qtbot, view, tiny_translator, tmp_path, monkeypatch) -> None:
    assert view.stack.currentIndex() == 0 and "No report yet" in view.empty.title.text()  # empty state first
    assert not view.run_button.isEnabled()  # no file yet
    pairs = noisy_pairs(8)
    choose_file(view, monkeypatch, write_tsv(tmp_path / "dev.tsv", pairs))
    view.lines.setValue(6)
    only_methods(view, {"saliency"})
    assert view.run_button.isEnabled()
    progress: list[tuple[int, int]] = []
    view.progressed.connect(lambda _t, done, total: progress.append((done, total)))
    click(view.run_button)
    assert view.running and view.cancel_button.isEnabled() and not view.run_button.isEnabled()
    qtbot.waitUntil(lambda: view.report is not None, timeout=SLOW_TIMEOUT_MS)
    assert not view.running and view.stack.currentIndex() == 1
    assert progress[-1] == (1 + 8 + 6, 1 + 8 + 6) and view.progress.value() == view.progress.maximum()
    assert "done in" in view.eta.text()

    # the numbers are the core's for the same six lines
    expected = dataset_report(tiny_translator, pairs[:6], methods=("saliency",))
    heads = view.heads_table
    assert heads.rowCount() == 8 and view.methods_table.rowCount() == 1
    drops = {view.row_key(heads, r): float(heads.item(r, 2).data(Qt.UserRole)) for r in range(8)}
    assert drops == {(h.layer, h.head): pytest.approx(h.bleu_drop) for h in expected.heads}

    click_header(heads, 5)  # entropy
    first = view.column_values(heads, 5)
    assert first in (sorted(first), sorted(first, reverse=True))
    click_header(heads, 5)
    assert view.column_values(heads, 5) == first[::-1] or view.column_values(heads, 5) == sorted(first)[::-1]
    click_header(heads, 4)  # changed: most changed first after two clicks at most
    if view.column_values(heads, 4)[0] < max(view.column_values(heads, 4)):
        click_header(heads, 4)
    assert view.column_values(heads, 4)[0] == max(view.column_values(heads, 4))

    click_row(heads, 0)
    layer, head = view.row_key(heads, 0)
    row = view.report.head(layer, head)
    assert row.name in view.sentences_title.text()
    shown = view.sentences.toPlainText()
    if row.telling:
        top = row.telling[0]
        assert pairs[top.index][0] in shown and top.translation in shown
        assert view.report.translations[top.index] in shown and f"Without {row.name}" in shown
    else:
        assert "No sentence's translation changed" in shown

    QTest.mouseClick(view.tables.tabBar(), Qt.LeftButton, pos=view.tables.tabBar().tabRect(1).center())
    assert view.sentences.toPlainText() == ""  # the pane follows the table shown: no method picked yet
    click_row(view.methods_table, 0)
    assert "saliency" in view.sentences_title.text() and "margin" in view.sentences.toPlainText()

    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "out.csv"), ""))
    click(view.export_button)
    assert (tmp_path / "out.csv").read_text(encoding="utf-8").startswith("name,layer,head,bleu,bleu_drop")
    assert (tmp_path / "out-methods.csv").read_text(encoding="utf-8").splitlines()[1].startswith("saliency,")

    again = DatasetView()  # the file is remembered for the next time
    qtbot.addWidget(again)
    assert again.path() == str(tmp_path / "dev.tsv")
    again.shutdown()


def job_ends(view) -> list[int]:
    """The request ids of the jobs whose function returned on the view's worker thread (dropped or not)."""
    ended: list[int] = []
    view.worker.finished.connect(lambda request_id, _result: ended.append(request_id))
    view.worker.failed.connect(lambda request_id, _message: ended.append(request_id))
    return ended


def test_cancel_stops_the_run_and_a_model_change_clears(qtbot, view, tiny_translator, tmp_path, monkeypatch) -> None:
    choose_file(view, monkeypatch, write_tsv(tmp_path / "dev.tsv", noisy_pairs(30)))
    view.lines.setValue(30)
    progress: list[int] = []
    view.progressed.connect(lambda _t, done, total: progress.append(done))
    ended = job_ends(view)
    click(view.run_button)
    qtbot.waitUntil(lambda: len(progress) >= 3, timeout=TIMEOUT_MS)
    click(view.cancel_button)
    assert not view.running and view.status.text() == "Cancelled." and view.stack.currentIndex() == 0
    assert view.run_button.isEnabled() and not view.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: bool(ended), timeout=TIMEOUT_MS)  # the worker's job returned (after the unit under way)
    QApplication.sendPostedEvents()  # and what it sent before is delivered
    seen = len(progress)
    qtbot.wait(1500)  # a negative check: no progress after that (a fixed wait is fine: nothing is awaited)
    assert len(progress) == seen and max(progress) < 1 + 8 + 30 * len(view.method_boxes)  # the worker stopped

    # a finished report, then another model: no stale rows
    view.lines.setValue(3)
    only_methods(view, set())
    click(view.run_button)
    qtbot.waitUntil(lambda: view.report is not None, timeout=SLOW_TIMEOUT_MS)
    assert view.heads_table.rowCount() == 8
    click_row(view.heads_table, 0)
    from nmt_desktop.core.decoding.translator import Translator

    other = Translator(tiny_translator.model, tiny_translator.tokenizers, name="other")
    view.set_translator(other)
    assert view.report is None and view.heads_table.rowCount() == 0 and view.methods_table.rowCount() == 0
    assert view.stack.currentIndex() == 0 and view.sentences.toPlainText() == ""
    assert not view.export_button.isEnabled() and view.eta.text() == "" and view.progress.value() == 0
    view.set_translator(None)
    assert not view.run_button.isEnabled() and "No model" in view.empty.title.text()


def test_a_model_change_during_a_run_cancels_it(qtbot, view, tiny_translator, tmp_path, monkeypatch) -> None:
    choose_file(view, monkeypatch, write_tsv(tmp_path / "dev.tsv", noisy_pairs(30)))
    view.lines.setValue(30)
    ended = job_ends(view)
    click(view.run_button)
    qtbot.waitUntil(lambda: view.progress.value() >= 1, timeout=TIMEOUT_MS)
    view.set_translator(None)
    assert not view.running and view.report is None and view.stack.currentIndex() == 0
    qtbot.waitUntil(lambda: bool(ended), timeout=TIMEOUT_MS)  # the cancelled job returned
    QApplication.sendPostedEvents()  # and its result, if any, was handed to the view
    assert view.report is None  # the cancelled run's result never lands


def test_a_bad_file_says_so(qtbot, view, tmp_path, monkeypatch) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("no tab here\n", encoding="utf-8")
    choose_file(view, monkeypatch, bad)
    click(view.run_button)
    qtbot.waitUntil(lambda: not view.running, timeout=TIMEOUT_MS)
    assert view.status.text().startswith("Run failed:") and view.report is None
