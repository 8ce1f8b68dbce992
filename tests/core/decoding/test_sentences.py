"""How a text is cut into sentences (`split_sentences`) and a line into the units the model translates
(`line_units`): every sentence of a line is a unit, because the bundled models, trained on single
sentences, degenerate on two at once (benchmarks/RESULTS.md, "Sentence policy and language identification")."""

from __future__ import annotations

import pytest

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.document import InputTooLongError, document_lines, line_units, split_sentences


@pytest.mark.parametrize("text, sentences", [
    ("I'm tired. I'm going to lie down.", ["I'm tired.", "I'm going to lie down."]),
    ("Really?! Yes. No!", ["Really?!", "Yes.", "No!"]),
    ("hello. how are you?", ["hello.", "how are you?"]),  # typed in lower case: still two sentences
    ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ("(He left.) She stayed.", ["(He left.)", "She stayed."]),
    ("¿Qué? ¡Nada!", ["¿Qué?", "¡Nada!"]),
    ("Wait... What? I don't know… Maybe.", ["Wait...", "What?", "I don't know…", "Maybe."]),
    ("你好。再见！真的吗？", ["你好。", "再见！", "真的吗？"]),  # CJK stops need no space after them
    ("「行こう。」彼は言った。", ["「行こう。」", "彼は言った。"]),
    ("So did I. Then we left.", ["So did I.", "Then we left."]),  # "I": no initial
    ("One; two: three.", ["One; two: three."]),  # clauses are not sentences
])
def test_sentences_end_at_sentence_marks(text, sentences):
    assert split_sentences(text) == sentences


@pytest.mark.parametrize("text", [
    "Mr. Smith went to Washington.",
    "Mrs. Smith and Dr. Kawamura met Prof. Jones.",
    "Take a tool, e.g. this one, or i.e. that.",
    "It costs 3.5 euros and 2.75 dollars.",
    "The U.S. Department of Health says so.",
    "J. R. R. Tolkien wrote it.",
    "We met at 3 p.m. today.",
    "See No. 5 in the list.",
    "Apples, pears vs. oranges.",
    "I think… maybe not.",  # an ellipsis the sentence goes on from
    "Tom left.Mary stayed.",  # no space after the stop: not taken for a sentence end
])
def test_no_sentence_end_inside_a_sentence(text):
    assert split_sentences(text) == [text]


def test_split_sentences_strips_and_drops_blanks():
    assert split_sentences("  ") == [] and split_sentences("") == []
    assert split_sentences("  One.   Two.  ") == ["One.", "Two."]
    assert split_sentences("It is No. 5. No. It is not.") == ["It is No. 5.", "No.", "It is not."]


def words(text: str) -> list[int]:
    return [0] * len(text.split())  # a word a token


def test_every_sentence_of_a_line_is_a_unit():
    assert line_units("  ", words, 4) == []
    assert line_units(" one two ", words, 4) == [(" one two ", [0, 0])]  # one sentence: the line as it is
    assert line_units("one two. three", words, 4) == [("one two.", [0, 0]), ("three", [0])]
    assert line_units("Mr. Smith came. He sat.", words, 8) == [("Mr. Smith came.", [0, 0, 0]), ("He sat.", [0, 0])]


def test_a_sentence_too_long_is_cut_at_clauses_else_refused():
    assert line_units("one two; three four five", words, 3) == [("one two;", [0, 0]), ("three four five", [0, 0, 0])]
    assert line_units("Short. one two: three four", words, 3) == [
        ("Short.", [0]), ("one two:", [0, 0]), ("three four", [0, 0])]
    with pytest.raises(InputTooLongError, match="has 5 tokens but this model accepts at most 4"):
        line_units("one two three four five", words, 4)


def test_the_policy_on_a_tiny_model(tiny_translator):
    """A two-sentence line is translated sentence by sentence, the translations joined with a space; a line
    of one sentence is one unit; the GUI's document stream cuts the text the same way (one policy)."""
    tr = tiny_translator
    cfg = DecodeConfig()
    text = "red cat runs. blue dog sleeps.\nbig bird eats"
    assert [u.text for u in tr.units(["red cat runs. blue dog sleeps."])] == ["red cat runs.", "blue dog sleeps."]
    first, second = tr.translate_batch(document_lines(text), cfg)
    parts = [tr.translate("red cat runs.", cfg), tr.translate("blue dog sleeps.", cfg)]
    assert [s.source for s in first.segments] == ["red cat runs.", "blue dog sleeps."]
    assert [s.target_ids for s in first.segments] == [p.target_ids for p in parts]
    assert first.text == f"{parts[0].text} {parts[1].text}"
    assert not second.segments and second.source == "big bird eats"
    doc = tr.stream_document(text, cfg)
    assert [(u.line, u.text) for u in doc.units] == [(0, "red cat runs."), (0, "blue dog sleeps."),
                                                     (1, "big bird eats")]
    list(doc)
    assert [t.text for t in doc.translations()] == [first.text, second.text]
