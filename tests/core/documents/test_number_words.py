"""A small number counts as kept when the translation writes it in digits or in the target language's words for
that number; one turned into another number is forced back ("54" came out as "fünfundzwanzig")."""

from __future__ import annotations

import pytest

from nmt_desktop.core.documents.number_words import number_words, says_number
from nmt_desktop.core.documents.placeholders import small_number_spans
from nmt_desktop.core.documents.translate_document import translate_lines


@pytest.mark.parametrize(("value", "language", "word"), [
    (54, "de", "vierundfünfzig"), (21, "de", "einundzwanzig"), (30, "de", "dreißig"), (1, "de", "eine"),
    (71, "fr", "soixante et onze"), (80, "fr", "quatre-vingts"), (97, "fr", "quatre-vingt-dix-sept"),
    (21, "fra", "vingt-et-un"), (18, "fr", "dix-huit"), (45, "en", "forty-five"), (12, "eng", "twelve"),
])
def test_a_number_has_its_words_in_each_listed_language(value, language, word):
    assert word in number_words(value, language)


def test_no_words_for_an_unlisted_language_or_a_large_number():
    assert number_words(5, "es") is None
    assert number_words(100, "de") is None


def test_a_number_word_counts_only_as_a_word_of_its_own():
    words = number_words(20, "de")
    assert says_number("Er ist Zwanzig.", words)
    assert not says_number("Er ist einundzwanzig.", words)  # 21, not 20
    assert not says_number("quatre-vingt-dix", number_words(10, "fr"))  # 90, not 10


@pytest.mark.parametrize(("text", "found"), [
    ("18 apples", ["18"]), ("3 times 5 is 15.", ["3", "5", "15"]), ("Article 9 of it", ["9"]),
    ("home by 2:30.", []), ("multiply by 5/9", []), ("pages 2-3", []), ("3.5 GHz and 5 kg", []), ("v2, 2nd", []),
    ("In 2024 we sold 12", ["12"]),
])
def test_small_numbers_are_bare_one_or_two_digit_numbers(text, found):
    assert [text[s:e] for s, e in small_number_spans(text)] == found


def test_a_small_number_the_model_changed_is_forced_back_and_one_it_spelled_out_is_left(en_de):
    changed, spelled = "She died when she was 54 years old.", "I haven't seen Tom in 2 months."
    result = translate_lines(en_de, [changed, spelled])
    assert "54" in result.blocks[0].target.split(), result.blocks[0].target
    assert "fünfundzwanzig" not in result.blocks[0].target  # what the model wrote for 54 on its own
    assert result.blocks[1].target == "Ich habe Tom seit zwei Monaten nicht mehr gesehen."  # "zwei" is 2: as it was
    kept = [o for o in result.report.outcomes if o.kept]
    assert sorted((o.term.target, o.status) for o in kept) == [("2", "used"), ("54", "placed")]


def test_a_number_forced_in_may_not_push_out_a_small_number_the_model_spelled_out(en_fr):
    # the model wrote 15 as "quinze" and left out 215: placing 215 is judged with "quinze" counting as 15
    result = translate_lines(en_fr, ["There were 215 votes for the motion and 15 votes against it."])
    target = result.blocks[0].target
    assert "215" in target.split() and "quinze" in target.split(), target
    assert sorted((o.term.target, o.status) for o in result.report.outcomes) == [("15", "used"), ("215", "placed")]
