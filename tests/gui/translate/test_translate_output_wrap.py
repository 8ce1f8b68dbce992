"""The Translate tab's output wraps between words only, never at a subword boundary inside one
(issue 22: "eine|m", "Berl|in"), and shows several lines before it scrolls (pytest-qt, offscreen)."""

from __future__ import annotations

import re

import pytest

from nmt_desktop.core.decoding.results import Unit
from nmt_desktop.core.decoding.results import Alternative, Step
from nmt_desktop.gui.translate.document_model import TranslationDocument
from nmt_desktop.gui.translate.output_html import output_html, parse_token_link, token_link, words_html

# Many words of several pieces each, so a narrow pane must wrap often.
PIECES = ["▁Ich", "▁wohn", "e", "▁in", "▁eine", "m", "▁Hau", "s", "▁in", "▁Berl", "in", ",", "▁a", "uf",
          "▁der", "▁Stra", "ß", "e", "▁zwischen", "▁den", "▁Bäum", "en", "."] * 3


def step(index: int, piece: str) -> Step:
    return Step(index=index, token_id=index, piece=piece, logprob=-0.1 * (index % 7),
                alternatives=[Alternative(1, "▁x", 0.1)], cross_attention=None)


def document(pieces: list[str] = PIECES) -> TranslationDocument:
    doc = TranslationDocument()
    doc.begin([Unit(line=0, text="src", source_ids=[1], source_tokens=["▁src"])])
    for i, piece in enumerate(pieces):
        doc.add_step(0, step(i, piece))
    doc.add_step(0, Step(len(pieces), 0, "</s>", 0.0, [], None, is_eos=True))
    return doc


def plain_text(pieces: list[str]) -> str:
    return "".join(pieces).replace("▁", " ").strip()


def test_a_words_links_share_one_unbreakable_span() -> None:
    html = words_html(0, [step(i, p) for i, p in enumerate(["▁Berl", "in", ",", "▁a", "uf"])], set())
    spans = re.findall(r'<span style="white-space:nowrap;">(.*?)</span>', html)
    assert [re.findall(r'href="([^"]+)"', s) for s in spans] == [[token_link(0, 0), token_link(0, 1), token_link(0, 2)],
                                                                 [token_link(0, 3), token_link(0, 4)]]
    assert '</span> <span' in html  # a real space (a break opportunity) between words only
    full = output_html(document(), running=False)
    links = [parse_token_link(h) for h in re.findall(r'href="([^"]+)"', full)]
    assert links == [(0, i) for i in range(len(PIECES))]  # every token still its own link, the eos none


@pytest.mark.parametrize("width", [140, 200, 330])
def test_lines_break_only_between_words(qtbot, width: int) -> None:
    pytest.importorskip("PySide6")
    from PySide6.QtWidgets import QTextBrowser

    browser = QTextBrowser()
    qtbot.addWidget(browser)
    browser.setFixedWidth(width)
    browser.setHtml(output_html(document(), running=False))
    doc = browser.document()
    doc.setTextWidth(width - 30)
    doc.adjustSize()
    text = doc.toPlainText().replace("\u00a0", " ")
    assert text.strip() == plain_text(PIECES)
    word_starts = {0} | {m.end() for m in re.finditer(r" +", text)}
    starts, block = [], doc.begin()
    while block.isValid():
        layout = block.layout()
        starts += [block.position() + layout.lineAt(i).textStart() for i in range(layout.lineCount())]
        block = block.next()
    assert len(starts) > 5  # it did wrap, several times
    assert [s for s in starts if s not in word_starts] == [], [text[s - 5:s + 5] for s in starts]


def test_the_output_pane_shows_six_lines_before_it_scrolls(qtbot) -> None:
    pytest.importorskip("PySide6")
    from nmt_desktop.gui.translate import TranslatePanel
    from nmt_desktop.gui.translate.output_html import OUTPUT_LINES

    panel = TranslatePanel()
    qtbot.addWidget(panel)
    panel.resize(1264, 740)  # the panel's room in the main window at its default size
    panel.show()
    try:
        panel.output.setHtml(output_html(document(), running=False))
        from qt_layout import wait_laid_out

        wait_laid_out(qtbot, panel)  # the panel's layout gives the output its height
        panel.output.document().documentLayout().documentSize()  # and the document is laid out, now
        layout = panel.output.document().begin().layout()
        pitch = layout.lineAt(1).y() - layout.lineAt(0).y()  # one line's height, line spacing included
        assert OUTPUT_LINES >= 6 and panel.output.viewport().height() >= OUTPUT_LINES * pitch
    finally:
        panel.shutdown()
