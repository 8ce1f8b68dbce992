"""File > Translate file… on bilingual files (issue 44), clicked on the real window with the tiny model: the
XLIFF file filter offered, an XLIFF 2 file's empty segments listed and filled, the reviewed and final ones and
translate="no" left as they were, the file saved as XLIFF with its tags and a trust estimate per segment."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, Qt  # noqa: E402

from nmt_desktop.core.bilingual import read_bilingual  # noqa: E402
from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402
from test_document_formats import open_dialog, pick  # noqa: E402
from tests.core.bilingual.samples import write_xliff20  # noqa: E402


def translate_and_save(qtbot, window, monkeypatch, out):
    """Translate clicked, then Save… answered with `out`; `out`."""
    dialog = window.document_dialog
    qtbot.mouseClick(dialog.translate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert window.shown_errors == [] and dialog.result is not None, dialog.status.text()
    pick(monkeypatch, "getSaveFileName", out)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert out.exists() and "Saved" in dialog.status.text(), dialog.status.text()
    return out


def test_an_xliff_file_filled_in_the_dialog(qtbot, open_main_window, tiny_model_dir, tmp_path, monkeypatch) -> None:
    window = open_main_window(tiny_model_dir)
    seen: list = []
    source = write_xliff20(tmp_path)
    pick(monkeypatch, "getOpenFileName", source, seen)
    window.menus.actions["translate_file"].trigger()
    dialog = window.document_dialog
    assert "XLIFF (*.xlf *.xliff)" in seen[0][1] and "PO/POT (*.po *.pot)" in seen[0][1]
    assert [b.where for b in dialog.document.blocks] == ["unit u1/s1", "unit u5", "unit u6", "unit u4"]

    out = translate_and_save(qtbot, window, monkeypatch, tmp_path / "filled.xlf")

    before, after = {u.id: u for u in read_bilingual(source).units}, {u.id: u for u in read_bilingual(out).units}
    assert list(after) == list(before)
    for unit_id in ("u1/s1", "u5", "u6", "u4"):
        assert after[unit_id].target.strip() and after[unit_id].state == "initial"
        assert Counter((t.kind, t.id) for t in after[unit_id].target_tags) == Counter((t.kind, t.id) for t in before[unit_id].tags)
    for unit_id in ("u1/s2", "u2", "u3"):
        assert (after[unit_id].target, after[unit_id].state) == (before[unit_id].target, before[unit_id].state)
    assert out.read_text(encoding="utf-8").count("<mtc:match ") == 4


def tick(qtbot, box) -> None:
    """A click on the box's indicator (its left end: the box spans the form's width, its label does not)."""
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))


def test_the_overwrite_box_translates_segments_with_a_target_again(qtbot, open_main_window, tiny_model_dir, tmp_path,
                                                                  monkeypatch) -> None:
    """The box (translate-file --overwrite) is shown for a bilingual file only; ticked, the final and reviewed
    segments are listed and translated again; a file whose every segment has a target needs it to translate."""
    window = open_main_window(tiny_model_dir)
    text = tmp_path / "plain.txt"
    text.write_text("The cat sleeps.\n", encoding="utf-8")
    pick(monkeypatch, "getOpenFileName", text)
    window.menus.actions["translate_file"].trigger()
    dialog = window.document_dialog
    assert not dialog.options.overwrite.isVisible()

    source = write_xliff20(tmp_path)
    pick(monkeypatch, "getOpenFileName", source)
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    box = dialog.options.overwrite
    assert box.isVisible() and not box.isChecked() and dialog.table.pairs.rowCount() == 4
    tick(qtbot, box)
    assert box.isChecked()
    assert [b.where for b in dialog.document.blocks] == ["unit u1/s1", "unit u1/s2", "unit u3", "unit u5", "unit u6",
                                                         "unit u4"]
    assert dialog.table.pairs.rowCount() == 6
    out = translate_and_save(qtbot, window, monkeypatch, tmp_path / "again.xlf")
    before, after = {u.id: u for u in read_bilingual(source).units}, {u.id: u for u in read_bilingual(out).units}
    for unit_id in ("u1/s2", "u3"):  # final and reviewed before: the model's now, for review
        assert before[unit_id].confirmed and not after[unit_id].confirmed and after[unit_id].state == "initial"
    assert after["u2"].target == before["u2"].target == ""  # translate="no"

    pick(monkeypatch, "getOpenFileName", out)  # every segment has a target now
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    assert dialog.path == out and not dialog.options.overwrite.isChecked() and dialog.document.blocks == []
    assert not dialog.translate_button.isEnabled() and "Every segment has a target" in dialog.status.text()
    tick(qtbot, dialog.options.overwrite)
    assert dialog.translate_button.isEnabled() and dialog.table.pairs.rowCount() == 6
