"""Instant adaptation shown in the Translate tab (issue 45): with a real SQLite memory holding a post-edit the model
would never give, the sentence typed and translated by click comes out in the memory's words; each token that came
from the memory is underlined on the theme's memory tint and its tooltip names that memory segment (not the other
one) with its weight; the Memory tab lists the sentence's match; "Adapt to my memory" off gives the plain model and
is kept per model across a restart; "Clear memory influence" drops the segments confirmed before it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, Qt  # noqa: E402
from PySide6.QtGui import QHelpEvent, QTextCursor  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from nmt_desktop.core.memory import Entry, Pair, TranslationMemory, default_memory_path  # noqa: E402
from nmt_desktop.gui import theme  # noqa: E402
from nmt_desktop.gui.translate import trust  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

SOURCE = "red cat runs"
EDITED = "rennt katze rot"  # a post-edit the model would never give (it keeps word order)
PAIR = Pair.of("en", "de")


@pytest.fixture
def model(tiny_model_dir, tmp_path, monkeypatch) -> Path:
    """The tiny model as an en-de one (the memory's pair), in a data folder of the test's own."""
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(trust, "estimator", lambda: None)  # no quality marks: the memory's marks alone
    folder = tmp_path / "en-de"
    shutil.copytree(tiny_model_dir, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "src_lang": "en", "tgt_lang": "de"}), encoding="utf-8")
    return folder


def confirm(*pairs: tuple[str, str], changed: int = 0) -> dict[str, int]:
    """Segments confirmed into the user's memory, as the desk does (at `changed`, default now); their ids by
    source."""
    with TranslationMemory(default_memory_path()) as tm:
        entries = [Entry(s, t, PAIR, origin="confirmed", created=changed, changed=changed) for s, t in pairs]
        tm.add(entries)
    return {e.source: e.id for e in entries}


def translate(qtbot, panel, text: str) -> str:
    panel.source.clear()
    QTest.mouseClick(panel.source.viewport(), Qt.LeftButton)
    qtbot.keyClicks(panel.source, text)
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    wait_translated(qtbot, panel)
    return panel.output_text()


def wait_translated(qtbot, panel) -> None:
    qtbot.waitUntil(lambda: not panel.running and panel.document.current() is not None
                    and panel.document.current().translation is not None, timeout=TIMEOUT_MS)


def open_memory_tab(panel) -> None:
    bar = panel.inspect_tabs.tabBar()
    QTest.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(3).center())
    assert panel.memory_view.isVisible()


def tokens(browser) -> list[tuple[str, str, int]]:
    """(text, tooltip, position) of each token link in the output."""
    found = []
    block = browser.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().isAnchor() and fragment.text().strip():
                found.append((fragment.text(), fragment.charFormat().toolTip(), fragment.position()))
            it += 1
        block = block.next()
    return found


def test_tokens_from_the_memory_are_marked_and_name_their_segment(qtbot, open_main_window, model) -> None:
    ids = confirm((SOURCE, EDITED), ("green bird eats", "gruen vogel isst"))
    window = open_main_window(model)
    panel = window.translate_panel
    assert panel.memory_view.adapt.isChecked()  # on by default

    assert translate(qtbot, panel, SOURCE) == EDITED
    shown = tokens(panel.output)
    assert shown and "".join(t for t, _, _ in shown).replace(" ", "") == EDITED.replace(" ", "")
    named = f"#{ids[SOURCE]} “{SOURCE}” → “{EDITED}”"
    for text, tip, position in shown:  # every token: underlined on the memory tint, the segment named
        assert named in tip and "From your memory:" in tip, (text, tip)
        assert f"#{ids['green bird eats']}" not in tip
        cursor = QTextCursor(panel.output.document())
        cursor.setPosition(position + 1)
        fmt = cursor.charFormat()
        assert fmt.fontUnderline() and fmt.background().color().name() == theme.current().memory_background
    cursor = QTextCursor(panel.output.document())
    cursor.setPosition(shown[0][2] + 1)
    rect = panel.output.cursorRect(cursor)  # hovering a token shows the segment it came from
    QApplication.sendEvent(panel.output.viewport(), QHelpEvent(QEvent.ToolTip, rect.center(),
                                                               panel.output.viewport().mapToGlobal(rect.center())))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and named in QToolTip.text(), timeout=TIMEOUT_MS)
    QToolTip.hideText()

    # the Memory tab: the sentence's match, the confirmed segment, at full weight
    tabs = panel.inspect_tabs
    assert tabs.tabText(3) == "Memory (1)"
    table = panel.memory_view.table
    assert table.rowCount() == 1 and table.item(0, 0).text() == "100%"
    assert (table.item(0, 1).text(), table.item(0, 2).text()) == (SOURCE, EDITED)
    assert table.item(0, 0).data(Qt.UserRole) == ids[SOURCE]

    # a sentence the memory has nothing for: no mark, no match
    plain_other = translate(qtbot, panel, "sun moon water")
    assert all("From your memory" not in tip for _, tip, _ in tokens(panel.output)) and plain_other
    assert tabs.tabText(3) == "Memory (0)" and table.rowCount() == 0

    # the switch: off gives the plain model (translated again at once), and it is kept for this model
    translate(qtbot, panel, SOURCE)
    open_memory_tab(panel)
    QTest.mouseClick(panel.memory_view.adapt, Qt.LeftButton)
    wait_translated(qtbot, panel)
    assert not panel.memory_view.adapt.isChecked() and panel.output_text() != EDITED
    assert all("From your memory" not in tip for _, tip, _ in tokens(panel.output))
    assert not panel.memory_view.clear_button.isEnabled()
    window.close()
    again = open_main_window(model)  # a restart: the switch is still off for this model
    assert not again.translate_panel.memory_view.adapt.isChecked()
    assert again.translate_panel.translator.adaptation.enabled is False


def test_clear_memory_influence_keeps_only_later_segments(qtbot, open_main_window, model) -> None:
    confirm((SOURCE, EDITED))
    window = open_main_window(model)
    panel = window.translate_panel
    assert translate(qtbot, panel, SOURCE) == EDITED
    open_memory_tab(panel)
    QTest.mouseClick(panel.memory_view.clear_button, Qt.LeftButton)  # translated again, without what was there
    wait_translated(qtbot, panel)
    plain = panel.output_text()
    assert plain != EDITED and panel.memory_view.table.rowCount() == 0
    assert "Segments confirmed since" in panel.memory_view.status.text()
    later = int(panel.translator.adaptation.since) + 1  # the memory keeps whole seconds
    ids = confirm(("red cat runs", "rot katze rennt schnell"), changed=later)
    assert translate(qtbot, panel, SOURCE) == "rot katze rennt schnell"  # confirmed after the click: it adapts
    assert f"#{ids[SOURCE]}" in tokens(panel.output)[0][1]


def test_a_token_whose_neighbours_name_no_segment_still_says_its_share() -> None:
    from nmt_desktop.core.adaptation.memory_use import MemorySource, MemoryUse
    from nmt_desktop.gui.translate.memory_marks import memory_tip

    assert memory_tip(MemoryUse(0.4, ())) == "From your memory: 40% of this token's probability"
    many = tuple(MemorySource(i, f"s{i}", f"t{i}", 0.2) for i in range(5))
    assert memory_tip(MemoryUse(0.9, many)).splitlines() == [
        "From your memory: 90% of this token's probability, from", "  #0 “s0” → “t0”  (20%)",
        "  #1 “s1” → “t1”  (20%)", "  #2 “s2” → “t2”  (20%)", "  and 2 more"]


def test_weights_learned_beside_the_memory_are_used_switched_and_cleared(qtbot, open_main_window, model) -> None:
    """What `translate --memory M --learn` learned (core/adaptation/online_learning.py), kept beside the user's
    memory, translates in the app; "Adapt to my memory" off gives the parent; "Clear memory influence" brings the
    parent back for good and deletes the file."""
    from nmt_desktop.core.adaptation.online_learning import OnlineLearner, OnlineLearning
    from nmt_desktop.core.decoding.translator import Translator

    memory = default_memory_path()
    memory.parent.mkdir(parents=True, exist_ok=True)
    learning = Translator.load(model)
    learner = OnlineLearner.attach(learning, memory, [], OnlineLearning(enabled=True, lr=3e-3, steps=10, l2sp=0.0))
    learner.learn([(SOURCE, EDITED)])  # no memory entry: what comes back is the weights' doing, not kNN's
    learner.save()
    window = open_main_window(model)
    panel = window.translate_panel
    assert translate(qtbot, panel, SOURCE) == EDITED
    assert all("From your memory" not in tip for _, tip, _ in tokens(panel.output))
    open_memory_tab(panel)
    QTest.mouseClick(panel.memory_view.adapt, Qt.LeftButton)  # off: the parent model
    wait_translated(qtbot, panel)
    parent = panel.output_text()
    assert parent != EDITED
    QTest.mouseClick(panel.memory_view.adapt, Qt.LeftButton)  # on again: the learned weights
    wait_translated(qtbot, panel)
    assert panel.output_text() == EDITED
    QTest.mouseClick(panel.memory_view.clear_button, Qt.LeftButton)
    wait_translated(qtbot, panel)
    assert panel.output_text() == parent
    assert not list(memory.parent.glob(f"{memory.name}.learned-*.safetensors"))
    window.close()
    again = open_main_window(model)
    assert translate(qtbot, again.translate_panel, SOURCE) == parent
