"""File > Translate file… on documents with formatting, driven by clicks on the real window and the tiny model:
a .docx opened through Open file…, translated, previewed block by block and saved with its paragraphs; Cancel
writes nothing; a hostile file is one sentence and the app stays up; the options (do-not-translate pattern,
glossary); and a dropped Markdown file opens the dialog."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
docx = pytest.importorskip("docx")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QFileDialog  # noqa: E402

from nmt_desktop.core.documents.translate_document import output_path  # noqa: E402
from nmt_desktop.gui.documents.table import SOURCE, TARGET  # noqa: E402
from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402


def make_docx(path: Path, paragraphs: int = 0) -> Path:
    """A Word file: a bold word mid-sentence, a plain paragraph, an empty one, a 1x2 table; `paragraphs` more."""
    document = docx.Document()
    p = document.add_paragraph("red cat ")
    p.add_run("runs").bold = True
    p.add_run(" big house")
    document.add_paragraph("blue dog sleeps")
    document.add_paragraph("")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "green bird", "small tree"
    for n in range(paragraphs):
        document.add_paragraph(("red cat runs big house", "blue dog sleeps small tree")[n % 2])
    document.save(str(path))
    return path


def pick(monkeypatch, method: str, path: Path | str, seen: list | None = None) -> None:
    """Answer the system's file dialog (QFileDialog.`method`) with `path`, noting the suggested name."""
    def answer(_parent, _caption, suggested="", filters="", *args, **kwargs):
        if seen is not None:
            seen.append((suggested, filters))
        return str(path), ""

    monkeypatch.setattr(QFileDialog, method, staticmethod(answer))


def open_dialog(window, qtbot, monkeypatch, path: Path):
    """File > Translate file…, Open file… answered with `path`; the dialog (read, not yet translated)."""
    seen: list = []
    pick(monkeypatch, "getOpenFileName", path, seen)
    window.menus.actions["translate_file"].trigger()
    dialog = window.document_dialog
    assert dialog is not None and dialog.isVisible() and not dialog.running
    assert "All supported (" in seen[0][1] and "*.docx" in seen[0][1] and "Markdown (*.md" in seen[0][1]
    return dialog


def test_docx_translated_previewed_and_saved_with_its_paragraphs(qtbot, open_main_window, tiny_model_dir,
                                                                 tmp_path, monkeypatch) -> None:
    window = open_main_window(tiny_model_dir)
    source = make_docx(tmp_path / "report.docx")
    dialog = open_dialog(window, qtbot, monkeypatch, source)
    blocks = dialog.document.blocks
    model = dialog.table.model()
    assert model.rowCount() == len(blocks) and "red cat runs big house" in dialog.table.column_text(SOURCE)
    assert model.headerData(0, Qt.Orientation.Vertical) == blocks[0].where  # "body, paragraph 1"
    assert not dialog.save_button.isEnabled() and dialog.translate_button.isEnabled()

    qtbot.mouseClick(dialog.translate_button, Qt.MouseButton.LeftButton)
    assert dialog.running and not dialog.translate_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert window.shown_errors == [] and dialog.result is not None, dialog.status.text()
    assert model.rowCount() == len(blocks) == len(dialog.result.blocks)
    for row, block in enumerate(blocks):
        target = model.data(model.index(row, TARGET))
        assert bool(target.strip()) == bool(block.text.strip()), (row, block.text, target)
    assert "Done:" in dialog.status.text() and dialog.progress.value() == dialog.progress.maximum()
    tip = model.data(model.index(0, TARGET), Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(blocks[0].where) and "formatted: “runs” → “" in tip  # where the bold word went

    seen: list = []
    out = tmp_path / "report.de.docx"
    pick(monkeypatch, "getSaveFileName", out, seen)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert seen[0][0] == str(output_path(source, dialog.target_lang or None))
    assert out.exists() and "Saved" in dialog.status.text()
    before, after = docx.Document(str(source)), docx.Document(str(out))
    assert len(after.paragraphs) == len(before.paragraphs)
    assert len(after.tables) == 1 and after.tables[0].cell(0, 0).text.strip()
    assert any(run.bold for run in after.paragraphs[0].runs)  # the bold word's run is still bold
    assert after.paragraphs[0].text != before.paragraphs[0].text  # and it was translated

    pick(monkeypatch, "getSaveFileName", source)  # saving over the source is refused in one sentence
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert "is the file being translated" in dialog.status.text()
    assert docx.Document(str(source)).paragraphs[0].text == before.paragraphs[0].text


def test_cancel_mid_way_writes_nothing(qtbot, open_main_window, tiny_model_dir, tmp_path, monkeypatch,
                                       slowed_batches) -> None:
    window = open_main_window(tiny_model_dir)
    source = make_docx(tmp_path / "long.docx", paragraphs=400)
    dialog = open_dialog(window, qtbot, monkeypatch, source)
    qtbot.mouseClick(dialog.translate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: 0 < dialog.progress.value() < dialog.progress.maximum(), timeout=TIMEOUT_MS)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert not dialog.running and dialog.result is None and "Cancelled" in dialog.status.text()
    assert not dialog.save_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.worker.busy, timeout=TIMEOUT_MS)
    assert dialog.result is None and dialog.save() is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.docx"]
    assert dialog.translate_button.isEnabled()  # and it can start again


@pytest.mark.parametrize("name, content, words", [
    ("broken.docx", b"this is not a zip archive", "not a zip archive"),
    ("empty.md", b"\n\n   \n", "has no text to translate"),
])
def test_hostile_or_broken_file_is_one_sentence_and_the_app_stays_up(qtbot, open_main_window, tiny_model_dir,
                                                                     tmp_path, monkeypatch, name, content,
                                                                     words) -> None:
    window = open_main_window(tiny_model_dir)
    bad = tmp_path / name
    bad.write_bytes(content)
    dialog = open_dialog(window, qtbot, monkeypatch, bad)
    message = dialog.status.text()
    assert message.startswith("⚠ ") and name in message and words in message and "\n" not in message
    assert dialog.document is None and not dialog.translate_button.isEnabled()
    # the dialog still works: a good file opens and translates
    good = make_docx(tmp_path / "good.docx")
    pick(monkeypatch, "getOpenFileName", good)
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.translate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert dialog.result is not None and window.isVisible()
    # given to the window directly (a drop): the usual error box, one sentence
    assert window.translate_file(bad) is None
    assert len(window.shown_errors) == 1 and words in window.shown_errors[0]


def test_dnt_pattern_and_glossary_options(qtbot, open_main_window, tiny_model_dir, tmp_path, monkeypatch) -> None:
    window = open_main_window(tiny_model_dir)
    source = make_docx(tmp_path / "terms.docx")
    dialog = open_dialog(window, qtbot, monkeypatch, source)
    options = dialog.options
    qtbot.keyClicks(options.dnt, "big(")
    assert options.error.text().startswith("⚠ Do not translate: ") and "not a valid regular expression" in \
        options.error.text() and "\n" not in options.error.text()
    assert not dialog.translate_button.isEnabled()
    qtbot.keyClick(options.dnt, Qt.Key.Key_Backspace)
    assert options.error.text() == "" and dialog.translate_button.isEnabled()

    glossary = tmp_path / "terms.tsv"
    glossary.write_text("cat\tMieze\nhouse\tVilla\n", encoding="utf-8")
    pick(monkeypatch, "getOpenFileName", glossary)
    combo = options.glossary_combo
    combo.activated.emit(combo.findText("Choose file…"))  # what choosing the item in the open combo sends
    assert combo.currentText() == "terms.tsv (2 terms)"
    qtbot.mouseClick(dialog.translate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert dialog.result is not None, dialog.status.text()
    assert "Glossary: 2 glossary term uses: " in dialog.status.text() and " placed" in dialog.status.text()
    target, status = dialog.result.blocks[0].target, dialog.status.text()
    for source, term in (("cat", "Mieze"), ("house", "Villa")):  # in the text, or said not to be (the tiny model
        assert term in target or f'"{source}" -> "{term}" not placed' in status, (target, status)  # is no German)
    assert "big" in dialog.result.blocks[0].target  # kept as it is: the do-not-translate pattern "big"

    bad = tmp_path / "bad.tsv"
    bad.write_text("cat only\n", encoding="utf-8")
    pick(monkeypatch, "getOpenFileName", bad)
    combo.activated.emit(combo.findText("Choose file…"))
    assert "bad.tsv, line 1" in options.error.text() and combo.currentText() == "terms.tsv (2 terms)"


def test_dropping_a_markdown_file_opens_the_dialog(qtbot, open_main_window, tiny_model_dir, tmp_path) -> None:
    from PySide6.QtCore import QMimeData, QPoint, QPointF, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    window = open_main_window(tiny_model_dir)
    doc = tmp_path / "notes.md"
    doc.write_text("# red cat\n\nblue dog **sleeps** small tree\n\n```\ncode stays\n```\n", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(doc))])
    enter = QDragEnterEvent(QPoint(20, 20), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(window, enter)
    QApplication.sendEvent(window, QDropEvent(QPointF(20, 20), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))
    assert enter.isAccepted()
    dialog = window.document_dialog
    assert dialog is not None and dialog.isVisible() and dialog.path == doc
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert window.shown_errors == [] and dialog.result is not None
    model = dialog.table.model()
    assert model.rowCount() == len(dialog.document.blocks)
    code = [row for row, block in enumerate(dialog.document.blocks) if block.verbatim]
    assert code and model.data(model.index(code[0], TARGET)) == dialog.document.blocks[code[0]].text
    assert model.data(model.index(code[0], SOURCE), Qt.ItemDataRole.ForegroundRole) is not None  # greyed
