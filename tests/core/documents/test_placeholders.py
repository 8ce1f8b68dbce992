"""Do-not-translate spans: found, replaced by names the text lacks, and put back exactly."""

from __future__ import annotations

import pytest

from nmt_desktop.core.documents.placeholders import NAMES, compile_dnt, dnt_spans, number_spans, protect, restore


@pytest.mark.parametrize("text, hidden, numbers", [
    ("See https://example.com/a?b=1 now.", ["https://example.com/a?b=1"], []),
    ("Write to ann.lee+x@mail.example.org today.", ["ann.lee+x@mail.example.org"], []),
    ("It weighs 5 kg, costs $20 and runs at 3.5 GHz.", [], ["5 kg", "$20", "3.5 GHz"]),
    ("In 2024 we sold 1,000 units; call 555-1234.", [], ["2024", "1,000", "555-1234"]),
    ("I love you 😀 and 👍🏽!", ["😀", "👍🏽"], []),
    ("I have 3 cats.", [], []),  # a small number the models copy: left to the model
])
def test_automatic_spans(text, hidden, numbers):
    assert [text[s:e] for s, e in dnt_spans(text)] == hidden
    assert [text[s:e] for s, e in number_spans(text, dnt_spans(text))] == numbers


def test_user_pattern_first_and_names_not_in_the_text():
    text = "Tom installs Zorg-7 from www.zorg.example."
    pattern = compile_dnt(r"Zorg-\d+")
    spans = dnt_spans(text, pattern)
    assert [text[s:e] for s, e in spans] == ["Zorg-7", "www.zorg.example"]
    protected = protect(text, spans)
    assert "Tom" == protected.text[:3] and [p.name for p in protected.placeholders] == list(NAMES[1:3])
    for p in protected.placeholders:
        assert protected.text[p.start:p.end] == p.name
    assert restore(protected.text, protected.placeholders) == text


def test_restore_survives_a_glued_ending_and_keeps_a_lost_span():
    protected = protect("Mail me@x.org now.", dnt_spans("Mail me@x.org now."))
    assert restore("Schreib Tomen jetzt.", protected.placeholders) == "Schreib me@x.org jetzt."
    assert restore("Schreib jetzt.", protected.placeholders) == "Schreib jetzt. me@x.org"


@pytest.mark.parametrize("pattern, message", [("(", "not a valid regular expression"), ("a*", "empty string")])
def test_bad_patterns_are_one_sentence(pattern, message):
    with pytest.raises(ValueError, match=message):
        compile_dnt(pattern)
