"""File > Translate file… on a real EPUB as a new user met it (issue 42, seen in a real X window): the row headers
of a long `where` were clipped mid-letter at the left ("3/wasteland-content.xhtml: <div> 7"), the ETA counted
sentences while the core translates the shortest first (it said 7 s where 43 s were left), and the status said
"742 of 742 … about 0:00 left" while alignment and formatting still ran; with the OPUS-MT-size model the first
progress said "about unknown left". Clicked on the real window, tiny model."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from nmt_desktop.core.decoding.document import line_sentences  # noqa: E402
from nmt_desktop.core.documents.formats import open_document  # noqa: E402
from nmt_desktop.gui.documents.worker import work_curve, work_done  # noqa: E402
from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402
from test_document_formats import open_dialog  # noqa: E402

WASTELAND = Path(__file__).resolve().parents[2] / "real_documents" / "files" / "epub3-wasteland.epub"


def test_work_curve_counts_the_characters_of_the_shortest_sentences_first() -> None:
    document = open_document(WASTELAND)
    curve = work_curve(document)
    sentences = [s for b in document.blocks if not b.verbatim and b.text.strip() for s in line_sentences(b.text.strip())]
    assert len(curve) == len(sentences) + 1 and curve[0] == 0 and curve[-1] == sum(map(len, sentences))
    steps = [b - a for a, b in zip(curve, curve[1:])]
    assert steps == sorted(steps)
    n = len(sentences)
    assert work_done(curve, n, n) == curve[-1] and work_done(curve, 0, n) == 0
    assert work_done(curve, n // 2, n) < 0.25 * curve[-1]  # half the sentences, the short half: a fifth of the text
    assert work_done(curve, n // 2, n + 5) <= work_done(curve, n // 2, n)  # the core cut a few more: still a share
    assert work_done([], 3, 10) == 3  # no curve (yet): sentences


def test_a_real_epub_shows_whole_row_names_an_eta_in_characters_and_the_formatting_step(
        qtbot, open_main_window, tiny_model_dir, monkeypatch, slowed_batches) -> None:
    window = open_main_window(tiny_model_dir)
    dialog = open_dialog(window, qtbot, monkeypatch, WASTELAND)
    statuses: list[str] = []
    set_text = dialog.status.setText
    monkeypatch.setattr(dialog.status, "setText", lambda text: (statuses.append(text), set_text(text)))
    eta_calls: list[tuple] = []
    update = dialog._eta.update
    monkeypatch.setattr(dialog._eta, "update", lambda *args: (eta_calls.append(args), update(*args))[1])

    qtbot.mouseClick(dialog.translate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert dialog.result is not None and window.shown_errors == []

    # the row names: a `where` wider than the header is cut at its start with "…", the whole in the tooltip
    header, pairs = dialog.table.verticalHeader(), dialog.table.pairs
    row = max(range(len(pairs.where)), key=lambda r: len(pairs.where[r]))
    assert header.fontMetrics().horizontalAdvance(pairs.where[row]) > header.width()
    assert header.textElideMode() == Qt.TextElideMode.ElideLeft
    assert pairs.headerData(row, Qt.Orientation.Vertical, Qt.ItemDataRole.ToolTipRole) == pairs.where[row]

    # the ETA was fed characters of the document, the shortest sentences' first, never sentences
    total = work_curve(dialog.document)[-1]
    assert eta_calls, "no progress arrived before the end: the batches were not slowed enough"
    assert all(args[2] == total for args in eta_calls)
    done = [args[0] for args in eta_calls]
    assert done == sorted(done) and all(0 < d < total for d in done)

    # between the last sentence and the end: the formatting step is named, not "about 0:00 left"
    formatting = [i for i, s in enumerate(statuses) if "carrying the formatting over" in s]
    finished = [i for i, s in enumerate(statuses) if s.startswith("Done:")]
    assert formatting and finished and formatting[-1] < finished[-1]
    # while it runs: "estimating the time left…" until a speed is known, then "about 12 s left", never
    # "about unknown left" (the first progress, as the OPUS-MT-size model showed) nor a clock-like "about 0:07"
    running = [s for s in statuses if " sentences translated · " in s and s not in (statuses[i] for i in formatting)]
    assert running and running[0].endswith("estimating the time left…")
    assert all(re.search(r"· (estimating the time left…|about (\d+ h \d+ min|\d+ min \d+ s|\d+ s) left)$", s) for s in running), running


def test_a_long_run_without_spaces_wraps_in_its_cell_instead_of_being_cut(qtbot, open_main_window, tiny_model_dir,
                                                                           tmp_path, monkeypatch) -> None:
    """Qt wraps table cells where Unicode allows a line break only: a checksum (or the OPUS-MT-size model's run
    of tokens, "<filler_2658><filler_2658>…", seen in the real window) was cut at the column's edge, its row one
    line high."""
    checksum = hashlib.sha512(b"nmt").hexdigest() * 2  # 256 letters and digits: no break opportunity in it
    source = tmp_path / "checksums.txt"
    source.write_text(f"red cat runs\nsee {checksum}\n", encoding="utf-8")
    window = open_main_window(tiny_model_dir)
    dialog = open_dialog(window, qtbot, monkeypatch, source)
    table = dialog.table
    table.fit_visible_rows()
    shown = table.pairs.data(table.pairs.index(1, 0))
    assert shown.replace("\u200b", "") == f"see {checksum}"  # the same text, with break opportunities
    assert table.fontMetrics().horizontalAdvance(checksum) > table.columnWidth(0)  # too wide for one line
    assert table.rowHeight(1) >= 3 * table.rowHeight(0)  # so it wraps over several lines
