"""File > Translate file… on bilingual files (issue 44), clicked on the real window with the tiny model: the
XLIFF file filter offered, an XLIFF 2 file's empty segments listed and filled, the reviewed and final ones and
translate="no" left as they were, the file saved as XLIFF with its tags and a trust estimate per segment."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from nmt_desktop.core.bilingual import read_bilingual  # noqa: E402
from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402
from test_document_formats import open_dialog, pick  # noqa: E402
from tests.core.bilingual.samples import write_xliff20  # noqa: E402


def test_an_xliff_file_filled_in_the_dialog(qtbot, open_main_window, tiny_model_dir, tmp_path, monkeypatch) -> None:
    window = open_main_window(tiny_model_dir)
    seen: list = []
    source = write_xliff20(tmp_path)
    pick(monkeypatch, "getOpenFileName", source, seen)
    window.menus.actions["translate_file"].trigger()
    dialog = window.document_dialog
    assert "XLIFF (*.xlf *.xliff)" in seen[0][1] and "PO/POT (*.po *.pot)" in seen[0][1]
    assert [b.where for b in dialog.document.blocks] == ["unit u1/s1", "unit u5", "unit u6", "unit u4"]

    qtbot.mouseClick(dialog.translate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert window.shown_errors == [] and dialog.result is not None, dialog.status.text()
    out = tmp_path / "filled.xlf"
    pick(monkeypatch, "getSaveFileName", out)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert out.exists() and "Saved" in dialog.status.text(), dialog.status.text()

    before, after = {u.id: u for u in read_bilingual(source).units}, {u.id: u for u in read_bilingual(out).units}
    assert list(after) == list(before)
    for unit_id in ("u1/s1", "u5", "u6", "u4"):
        assert after[unit_id].target.strip() and after[unit_id].state == "initial"
        assert Counter((t.kind, t.id) for t in after[unit_id].target_tags) == Counter((t.kind, t.id) for t in before[unit_id].tags)
    for unit_id in ("u1/s2", "u2", "u3"):
        assert (after[unit_id].target, after[unit_id].state) == (before[unit_id].target, before[unit_id].state)
    assert out.read_text(encoding="utf-8").count("<mtc:match ") == 4
