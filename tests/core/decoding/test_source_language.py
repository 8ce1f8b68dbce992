"""The warning that a text is not in the language the model reads (core/decoding/source_language.py), with
the real identifier (py3langid's model, shipped in its wheel)."""

from __future__ import annotations

import pytest

from nmt_desktop.core.decoding.source_language import guess_language, identifier_code, language_warning, text_words


@pytest.mark.parametrize("text, found", [
    ("我今天很累，想早点睡觉。", "Chinese (zh)"),
    ("我喜欢吃苹果，你呢？", "Chinese (zh)"),  # the identifier's best guess is Cantonese: counted as Chinese
    ("Я не знаю, что мне делать завтра.", "Russian (ru)"),
    ("Где находится вокзал?", "Russian (ru)"),
    ("Ich habe heute keine Zeit für dich.", "German (de)"),
    ("Je ne sais pas ce que tu veux dire.", "French (fr)"),
    ("今日はとても疲れました。", "Japanese (ja)"),
])
def test_another_language_is_said_in_one_sentence(text, found):
    warning = language_warning(text, "en")
    assert warning == (f"This looks like {found}, not English (en): the model only reads English, so its "
                       f"translation will be nonsense.")


@pytest.mark.parametrize("text", [
    "I am very tired today.",
    "Don't run. Walk slowly.",
    "Tom went to München yesterday.",
    "Where is the Hauptbahnhof?",
    "TOM IS HERE NOW",
    # too short to judge, or no language at all: a name, a number, one or two words
    "Tom", "Angela Merkel", "Barack Obama 2009", "42", "3.14 2.71 1.41", "OK", "Hello!", "你好", "",
    # names the identifier cannot place: no language clearly ahead
    "Hello Wolfgang Amadeus Mozart",
])
def test_no_warning_on_english_or_on_too_little_text(text):
    assert language_warning(text, "en") is None


def test_the_models_language_in_any_spelling():
    assert language_warning("Ich habe heute keine Zeit für dich.", "de") is None
    assert language_warning("Ich habe heute keine Zeit für dich.", "deu") is None
    assert language_warning("我今天很累，想早点睡觉。", "zh") is None
    assert language_warning("我今天很累，想早点睡觉。", "cmn") is None
    assert language_warning("I am very tired today and want to sleep.", "zh").startswith(
        "This looks like English (en), not Chinese (zh)")
    assert language_warning("I am very tired today.", "en-US") is None
    assert [identifier_code(c) for c in ("en", "eng", "en_GB", "nb", "sh")] == ["en", "en", "en", "no", "sr"]


def test_no_judgement_for_a_language_the_identifier_does_not_know():
    for code in ("mul", "roa", ""):  # groups (OPUS-MT's mul-en) or a model card without a language
        assert identifier_code(code) is None
        assert guess_language("我今天很累，想早点睡觉。", code) is None
        assert language_warning("我今天很累，想早点睡觉。", code) is None


def test_a_target_language_token_is_not_part_of_the_text():
    assert language_warning(">>fra<< I am very tired today.", "en") is None
    guess = guess_language(">>deu<< Je ne sais pas ce que tu veux dire.", "en")
    assert guess is not None and guess.best == "fr" and guess.words == 9


def test_text_words_counts_scripts_without_spaces_by_half_characters():
    assert text_words("Tom and Mary, 2009!") == 3
    assert text_words("你好") == 1 and text_words("我今天很累。") == 2.5
    assert text_words("Hello 世界") == 2
