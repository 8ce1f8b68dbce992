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


def test_stop_keeps_finished_units_and_names_the_cut_one(tiny_translator) -> None:
    """Issue 41: a Stop drops the partial hypothesis of the unit being decoded; the report names it."""
    from nmt_desktop.gui.translate.document_model import StopReport

    stream = tiny_translator.stream_document("red cat runs\nbig dog sleeps\nred dog runs", DecodeConfig(beam_size=3))
    document = TranslationDocument()
    document.begin(stream.units, tiny_translator.config.eos_id)
    for index, step in stream:
        if index == 1 and step.index == 1:
            break
        assert document.add_step(index, step)
    assert document.finish_unit(0, stream.results[0]) and not document.finish_unit(7, stream.results[0])
    assert document.units[1].steps  # the partial hypothesis shows while it decodes
    report = document.stop()
    assert report == StopReport(1, 3, 1) and document.units[1].cut and not document.units[1].steps
    assert document.output_text().rstrip("\n") == stream.results[0].text
    assert report.message() == "Stopped: 1 of 3 sentences translated; sentence 2 was cut and is not shown"
    assert StopReport(2, 3).message() == "Stopped: 2 of 3 sentences translated"  # between two units
    assert "no translation is shown" in StopReport(0, 1, 0).message()
