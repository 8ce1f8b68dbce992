"""The Translate tab's Qt-free state (gui/translate/document_model.py) and its output HTML, fed by the core's
document stream as the worker feeds it."""

from __future__ import annotations

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.gui.translate.document_model import TranslationDocument
from nmt_desktop.gui.translate.output_html import output_html, parse_token_link, token_link


def test_document_streams_finishes_and_keeps_the_lines(tiny_translator) -> None:
    cfg = DecodeConfig(beam_size=3, nbest=2)
    stream = tiny_translator.stream_document("red cat runs\n\nbig dog sleeps", cfg)
    document = TranslationDocument()
    document.begin(stream.units, tiny_translator.config.eos_id)
    assert [u.text for u in document.units] == ["red cat runs", "big dog sleeps"] and document.lines() == [[0], [], [1]]
    for index, step in stream:
        assert document.add_step(index, step)
        if index == 0:
            assert "▍" in output_html(document, running=True)  # the cursor follows the unit being decoded
    assert not document.add_step(5, step)  # no such unit
    streamed = document.output_text()
    document.finish(stream.results)
    texts = [t.text for t in stream.results]
    assert document.output_text() == f"{texts[0]}\n\n{texts[1]}"
    assert streamed.split("\n")[1] == ""  # the blank line was there while streaming too
    unit = document.units[0]
    assert [s.token_id for s in unit.steps] == unit.translation.best.token_ids  # the final best hypothesis
    assert not document.add_step(0, unit.steps[0])  # a finished unit takes no more steps
    document.shown = 0
    assert document.show_hypothesis(1) and [s.piece for s in unit.steps] == unit.translation.nbest[1].tokens
    assert not document.show_hypothesis(2)
    html = output_html(document, running=False)
    assert token_link(0, 0) in html and token_link(1, 0) in html and "<br><br>" in html and "▍" not in html
    assert parse_token_link(token_link(1, 4)) == (1, 4) and parse_token_link("http://x") is None
