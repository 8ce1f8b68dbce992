"""File > Translate file… on a .txt file, on the real window and the tiny model: the saved file keeps the
source's line structure, Cancel stops without writing, a bad file is one sentence naming it; and the headless
`gui --translate-file --screenshot` mode. (Other formats, options and clicks: test_document_formats.py.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nmt_desktop.core.documents.formats import open_document  # noqa: E402
from nmt_desktop.gui.documents.table import TARGET  # noqa: E402
from cli_runner import REPO_ROOT  # noqa: E402
from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402

# paragraphs, several blank lines (one leading), a whitespace-only line, and a line longer than the tiny
# model's 64 positions (cut into sentences by the core, joined back on one line)
LONG_LINE = " ".join(["red cat runs . blue dog sleeps ."] * 12)
DOCUMENT = f"\nred cat runs\nblue dog sleeps\n\n\nbig house\n   \n{LONG_LINE}\nsmall tree\n"


def test_round_trip_keeps_lines_and_blank_lines(qtbot, open_main_window, tiny_model_dir, tiny_translator,
                                                tmp_path) -> None:
    window = open_main_window(tiny_model_dir)
    source = tmp_path / "letter.txt"
    source.write_text(DOCUMENT, encoding="utf-8")
    assert window.menus.actions["translate_file"].shortcut().toString() == "Ctrl+Shift+O"
    dialog = window.translate_file(source)
    assert dialog is not None and dialog.isVisible() and dialog.running
    assert not dialog.save_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert window.shown_errors == []
    source_lines = DOCUMENT.splitlines()
    assert len(dialog.lines) == len(source_lines)
    # a line with text is translated as the Translate tab would; a blank or whitespace-only line stays as it is
    expected = [t.text if line.strip() else line
                for line, t in zip(source_lines, tiny_translator.translate_batch(source_lines, dialog.cfg))]
    assert dialog.lines == expected
    assert dialog.progress.value() == dialog.progress.maximum()
    assert dialog.save_button.isEnabled()
    assert dialog.table.column_text(TARGET) == "\n".join(expected)

    saved = dialog.save(tmp_path / "letter.de.txt")
    out_lines = saved.read_text(encoding="utf-8").splitlines()
    assert len(out_lines) == len(source_lines)
    for src, out in zip(source_lines, out_lines):
        assert (src.strip() == "") == (out.strip() == ""), (src, out)  # blank stays blank, text gets a translation
    assert dialog.result.sentences > len([line for line in source_lines if line.strip()])  # the long line was split
    assert sorted(p.name for p in tmp_path.iterdir()) == ["letter.de.txt", "letter.txt"]  # no temporary file left


def test_cancel_stops_and_writes_nothing(qtbot, open_main_window, tiny_model_dir, tiny_translator, tmp_path,
                                         slowed_batches) -> None:
    window = open_main_window(tiny_model_dir)
    source = tmp_path / "long.txt"
    source.write_text("\n".join(["red cat runs big house", "blue dog sleeps small tree"] * 200) + "\n",
                      encoding="utf-8")
    dialog = window.translate_file(source)
    progress: list[tuple[int, int]] = []
    dialog.worker.progressed.connect(lambda _r, done, total: progress.append((done, total)))  # worker thread
    qtbot.waitUntil(lambda: any(done > 0 for done, _t in progress), timeout=TIMEOUT_MS)
    dialog.cancel_button.click()
    assert not dialog.running and dialog.lines is None
    assert "Cancelled" in dialog.status.text()
    qtbot.waitUntil(lambda: not dialog.worker.busy, timeout=TIMEOUT_MS)
    done, total = progress[-1]
    assert done < total  # it stopped between batches, it did not run to the end
    assert dialog.result is None and not dialog.save_button.isEnabled()
    out = tmp_path / "long.de.txt"
    assert dialog.save(out) is None and not out.exists()
    # a new file translates normally after a cancel
    short = tmp_path / "short.txt"
    short.write_text("red cat\n", encoding="utf-8")
    assert dialog.translate_file(short) is None
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert dialog.lines == [tiny_translator.translate_batch(["red cat"], dialog.cfg)[0].text]
    # closing the window (Esc, Close) during a translation cancels it
    assert dialog.translate_file(source) is None and dialog.running
    dialog.close_button.click()
    assert not dialog.isVisible() and not dialog.running
    qtbot.waitUntil(lambda: not dialog.worker.busy, timeout=TIMEOUT_MS)


@pytest.mark.parametrize("name, content, words", [
    ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "not a text file"),
    ("empty.txt", b"  \n\n", "has no text"),
    ("missing.txt", None, "does not exist"),
    ("folder.txt", "dir", "is a folder"),
])
def test_bad_file_is_one_sentence_naming_it(qtbot, open_main_window, tiny_model_dir, tmp_path, name, content,
                                            words) -> None:
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    window = open_main_window(tiny_model_dir)
    assert window.translate_file(path) is None
    assert len(window.shown_errors) == 1
    message = window.shown_errors[0]
    assert name in message and words in message and "\n" not in message
    assert window.document_dialog is None or not window.document_dialog.isVisible()


def test_no_model_is_one_sentence(qtbot, open_main_window, tmp_path) -> None:
    window = open_main_window(None)
    path = tmp_path / "doc.txt"
    path.write_text("red cat\n", encoding="utf-8")
    assert window.translate_file(path) is None
    assert window.shown_errors == ["no model is loaded: open a model first, then translate a file"]


def test_utf8_bom_is_dropped(tmp_path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffÄpfel\r\n\r\nBirnen".encode("utf-8"))
    assert [block.text for block in open_document(path).blocks] == ["Äpfel", "", "Birnen"]


def test_cli_gui_translate_file_screenshot(tiny_model_dir, tmp_path) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_text("red cat runs\n\nblue dog sleeps\n", encoding="utf-8")
    out = tmp_path / "doc.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OMP_NUM_THREADS="1", PYTHONIOENCODING="utf-8",
               NMT_DESKTOP_CONFIG_DIR=str(tmp_path / "cfg"), NMT_DESKTOP_LOG_DIR=str(tmp_path / "log"))
    proc = subprocess.run([sys.executable, "-m", "nmt_desktop", "gui", "-m", str(tiny_model_dir), "--translate-file",
                           str(doc), "--theme", "dark", "--screenshot", str(out)], capture_output=True, text=True,
                          timeout=240, cwd=REPO_ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PySide6.QtGui import QColor, QImage

    image = QImage(str(out))
    assert QColor(image.pixel(4, image.height() // 2)).lightness() < 80  # --theme dark: a dark window
    assert "theme" not in (tmp_path / "cfg" / "settings.json").read_text(encoding="utf-8")  # for this run only
    log = (tmp_path / "log" / "nmt-desktop.log").read_text(encoding="utf-8")
    assert "translating file" in log and "doc.txt" in log
    bad = subprocess.run([sys.executable, "-m", "nmt_desktop", "gui", "-m", str(tiny_model_dir), "--translate-file",
                          str(tmp_path / "nope.txt"), "--screenshot", str(out)], capture_output=True, text=True,
                         timeout=240, cwd=REPO_ROOT, env=env)
    assert bad.returncode == 1 and "nope.txt does not exist" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
