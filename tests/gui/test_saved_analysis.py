"""File > Save analysis… / Open analysis… (gui/analysis_session.py, saved_analysis.py) through the menu actions
of the real window: a saved analysis opened in another window, on another model, restores the same text,
model, settings, sentence, head, views, selection, ablated heads and inspected translation; a model that is
not installed, a changed model and broken files are each one sentence, and nothing is lost."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QFileDialog  # noqa: E402

from nmt_desktop.gui.analysis_session import capture  # noqa: E402
from nmt_desktop.gui.saved_analysis import AnalysisFileError, read_analysis  # noqa: E402
from nmt_desktop.gui.translate.inspect_view import MODEL  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TEXT = "red cat runs\nblue dog sleeps"


@pytest.fixture
def model_a(tiny_model_dir, tmp_path):
    return shutil.copytree(tiny_model_dir, tmp_path / "tiny-a")


def save_through_menu(window, path, monkeypatch) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    window.menus.actions["save_analysis"].trigger()


def open_through_menu(qtbot, window, path, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    with qtbot.waitSignal(window.analysis_session.restored, timeout=TIMEOUT_MS):
        window.menus.actions["open_analysis"].trigger()


def analysed_window(qtbot, open_main_window, model):
    """A window on `model` with an analysis worth saving: two lines, the second shown, L2 H3 focused on a log
    scale, a token selected, two heads ablated, a translation of one's own inspected and the model's shown."""
    window = open_main_window(model)
    panel, analysis = window.translate_panel, window.analysis_panel
    panel.options.mode.setCurrentIndex(1)  # beam search
    panel.options.beam.setValue(3)
    panel.source.setPlainText(TEXT)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    panel.select_sentence(1)
    panel.view.scale_combo.setCurrentIndex(panel.view.scale_combo.findData("log"))
    panel.view.focus(1, 2)
    panel.links.tokens.select(1, -1)
    analysis.ablation.boxes[(0, 1)].setChecked(True)
    analysis.ablation.boxes[(1, 3)].setChecked(True)
    panel.inspect_box.editor.setPlainText("rot katze rennt\nblau hund isst")
    with qtbot.waitSignal(panel.inspect_box.inspected, timeout=TIMEOUT_MS):
        panel.inspect_box.inspect_button.click()
    panel.inspect_box.view.show_buttons[MODEL].click()
    window.show_tab("analysis")
    analysis.tabs.setCurrentWidget(analysis.alignment)
    return window


def test_an_analysis_opens_again_exactly(qtbot, open_main_window, model_a, tiny_model_dir, tmp_path,
                                         monkeypatch) -> None:
    first = analysed_window(qtbot, open_main_window, model_a)
    path = tmp_path / "mine.nmtanalysis.json"
    save_through_menu(first, path, monkeypatch)
    saved = read_analysis(path)
    assert path.stat().st_size < 4000 and saved.model.path == str(model_a) and saved.model.fingerprint
    assert saved.source == TEXT and saved.sentence == 1 and saved.inspected_shown == "model"
    assert saved.attention == {"kind": "cross", "scale": "log", "merge_words": False, "focus": [1, 2]}
    assert saved.ablated == [(0, 1), (1, 3)] and saved.tab == "analysis" and saved.analysis_view == "Alignments"

    second = open_main_window(tiny_model_dir)  # another window, on another model folder
    assert second.info.path != first.info.path
    open_through_menu(qtbot, second, path, monkeypatch)
    assert str(second.info.path) == str(model_a)  # the analysis' model was loaded
    panel = second.translate_panel
    assert panel.source.toPlainText() == TEXT and panel.shown_sentence == 1
    assert panel.options.to_dict() == first.translate_panel.options.to_dict()
    assert [u.translation.text for u in panel.sentences] == [u.translation.text
                                                               for u in first.translate_panel.sentences]
    assert panel.view.color_scale() == "log" and panel.view.focused_cell() == (1, 2)
    assert panel.inspect_box.shown == MODEL and panel.view.status_label.text().startswith("Showing the model's")
    assert second.analysis_panel.ablation.selected_heads() == [(0, 1), (1, 3)]
    assert second.tabs.currentWidget() is second.analysis_panel
    assert second.analysis_panel.tabs.currentWidget() is second.analysis_panel.alignment
    assert capture(second) == capture(first)
    assert not second.shown_errors


def test_the_selection_is_saved_and_restored(qtbot, open_main_window, model_a, tmp_path, monkeypatch) -> None:
    window = open_main_window(model_a)
    panel = window.translate_panel
    panel.source.setPlainText("red cat runs")
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    panel.links.tokens.select(-1, 1)
    path = tmp_path / "sel.json"
    save_through_menu(window, path, monkeypatch)
    panel.source.setPlainText("green bird")
    open_through_menu(qtbot, window, path, monkeypatch)
    assert panel.source.toPlainText() == "red cat runs"
    assert panel.view.highlight() == (-1, 1) and panel.links.highlighted_text()[0] == "cat"


def test_a_model_that_is_not_installed_is_said_and_nothing_changes(qtbot, open_main_window, model_a, tiny_model_dir,
                                                                  tmp_path, monkeypatch) -> None:
    window = analysed_window(qtbot, open_main_window, model_a)
    path = tmp_path / "a.json"
    save_through_menu(window, path, monkeypatch)
    data = json.loads(path.read_text())
    data["model"] = {"name": "opus-mt-xx-yy", "path": str(tmp_path / "gone"), "fingerprint": "0" * 64}
    path.write_text(json.dumps(data))
    other = open_main_window(tiny_model_dir)
    other.translate_panel.source.setPlainText("my own text")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    other.menus.actions["open_analysis"].trigger()
    assert other.shown_errors == [f"This analysis was made with the model “opus-mt-xx-yy”, which is not installed "
                                  f"here (it was in {tmp_path / 'gone'}): get it in the Models tab or open its "
                                  f"folder, then open the analysis again."]
    assert other.translate_panel.source.toPlainText() == "my own text" and str(other.info.path) == str(tiny_model_dir)


def test_a_changed_model_is_said_and_the_analysis_opens(qtbot, open_main_window, model_a, tmp_path,
                                                        monkeypatch) -> None:
    window = open_main_window(model_a)
    panel = window.translate_panel
    panel.source.setPlainText("red cat runs")
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    path = tmp_path / "a.json"
    save_through_menu(window, path, monkeypatch)
    card = json.loads((model_a / "card.json").read_text())
    card["name"] = "tiny synthetic, retrained"
    (model_a / "card.json").write_text(json.dumps(card))
    panel.source.clear()
    open_through_menu(qtbot, window, path, monkeypatch)
    assert panel.source.toPlainText() == "red cat runs" and panel.sentences[0].translation is not None
    assert len(window.shown_errors) == 1 and "has changed since this analysis was saved" in window.shown_errors[0]


@pytest.mark.parametrize("content, message", [
    ("{not json", "bad.json, line 1: not valid JSON"),
    ('{"format": "something else"}', "bad.json is not an NMT Desktop analysis"),
    ('{"format": "nmt-desktop analysis", "version": 1, "model": {"name": "m", "path": "p"}}',
     "bad.json: the field 'source' is missing."),
    ('{"format": "nmt-desktop analysis", "version": 1, "model": {"name": "m", "path": "p"}, "source": 3}',
     "bad.json: the field 'source' should be str, not int."),
    ('{"format": "nmt-desktop analysis", "version": 9, "model": {}, "source": ""}', "saved by a newer NMT Desktop"),
    (b"\xff\xfe\x00", "bad.json is not UTF-8 text"),
])
def test_broken_files_are_one_sentence(qtbot, open_main_window, tiny_model_dir, tmp_path, monkeypatch, content,
                                       message) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(AnalysisFileError, match=None) as raised:
        read_analysis(path)
    assert message in str(raised.value) and "\n" not in str(raised.value)
    window = open_main_window(tiny_model_dir)
    window.translate_panel.source.setPlainText("kept")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.menus.actions["open_analysis"].trigger()
    assert window.shown_errors == [str(raised.value)] and window.translate_panel.source.toPlainText() == "kept"
