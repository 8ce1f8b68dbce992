"""A forced glossary term stands as its own word, the rest of the sentence survives, the article before it
agrees with it, and a term that cannot be placed well is left out and reported so (issue 41), on the
bundled en-de and en-fr models."""

from __future__ import annotations

import torch

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.documents.determiners import alternatives
from nmt_desktop.core.documents.glossary import Glossary, Term, glued_uses, target_as_word
from nmt_desktop.core.documents.translate_document import DocumentOptions, translate_lines

KLINIK = Term("hospital", "Klinik")


def _forced(translator, lines, term):
    torch.set_num_threads(1)  # one thread: the same floats, the same choices on a loaded machine
    options = DocumentOptions(glossary=Glossary([term]), automatic_dnt=False)
    return translate_lines(translator, lines, DecodeConfig(), options)


def test_a_forced_term_is_its_own_word_and_the_sentence_after_it_survives(en_de):
    result = _forced(en_de, ["My sister works at the hospital in the city."], KLINIK)
    text = result.blocks[0].target
    assert "in der Stadt" in text and target_as_word(text, KLINIK, inflected=False), text  # was "im Kliniktahre."
    assert [o.status for o in result.report.outcomes] == ["placed"]


def test_the_article_is_re_decided_for_the_term(en_de):
    lines = ["The hospital is big.", "My sister works at the hospital in the city."]
    assert [t.text for t in en_de.translate_batch(lines, DecodeConfig())] == \
        ["Das Krankenhaus ist groß.", "Meine Schwester arbeitet im Krankenhaus in der Stadt."]
    texts = [b.target for b in _forced(en_de, lines, KLINIK).blocks]
    assert texts[0].startswith("Die Klinik ") and " in der Klinik " in texts[1], texts  # was "Das Klinik", "im Klinik"


def test_a_fused_preposition_is_re_decided_for_the_term(en_de):
    line = "I went to the hospital yesterday."
    assert en_de.translate(line, DecodeConfig()).text == "Ich bin gestern ins Krankenhaus gegangen."
    (text,) = [b.target for b in _forced(en_de, [line], KLINIK).blocks]
    assert " in die Klinik " in text, text  # was "ins Klinik": "in die" paid for "in" too, which the sentence set


def test_the_models_own_article_stays_when_the_term_alone_would_pick_another_gender(en_de, en_fr):
    # p(term | article) alone, as before, picked "eine Herr" and "la toubib": a rare term is unlikely after
    # every article, so the article's own probability counts too
    (de,) = [b.target for b in _forced(en_de, ["I know a man who can help."], Term("man", "Herr")).blocks]
    (fr,) = [b.target for b in _forced(en_fr, ["What'd the doctor say?"], Term("doctor", "toubib")).blocks]
    assert " einen Herr" in de and " le toubib" in fr, (de, fr)


def test_a_term_that_cannot_be_placed_well_is_not_placed(en_de):
    line = "The hospital is big."
    plain = en_de.translate(line, DecodeConfig()).text
    result = _forced(en_de, [line], Term("hospital", "病院"))  # spelled byte by byte, the model derails after it
    assert result.blocks[0].target == plain  # the translation without the term, not a wrecked one
    (outcome,) = result.report.outcomes
    assert outcome.status == "not placed" and "would change the rest of the sentence" in outcome.reason
    assert result.report.missing == 1 and result.report.forced == 0


def test_a_term_the_translation_left_out_does_not_push_out_another_word(en_de):
    line = "There's no space in the room for another bed."
    assert en_de.translate(line, DecodeConfig()).text == "Es gibt keinen Platz für noch ein weiteres Bett."  # no room
    result = _forced(en_de, [line], Term("room", "Zimmer"))
    text = result.blocks[0].target
    assert "Bett" in text, text  # was "Es gibt keinen Platz für noch ein Zimmer.": the bed gone, the room in its place
    (outcome,) = result.report.outcomes
    assert outcome.status == "not placed" and "would change the rest of the sentence" in outcome.reason


def _forced_terms(translator, line, terms):
    torch.set_num_threads(1)
    options = DocumentOptions(glossary=Glossary(terms), automatic_dnt=False)
    return translate_lines(translator, [line], DecodeConfig(), options)


def test_a_later_term_does_not_take_the_place_of_an_earlier_one(en_de):
    line, terms = "How much does a first class ticket cost?", [Term("class", "Klasse"), Term("ticket", "Fahrkarte")]
    assert en_de.translate(line, DecodeConfig()).text == "Wie viel kostet eine erste Klasse?"  # no ticket
    result = _forced_terms(en_de, line, terms)
    text = result.blocks[0].target
    # was "Wie viel kostet eine erste Fahrkarte?": masking "ticket" pointed at the model's "Klasse", the word of
    # the term before, which the forced "Fahrkarte" replaced
    assert target_as_word(text, terms[0]), text
    for term, outcome in zip(terms, result.report.outcomes):  # what the report calls in stands as its own word
        assert (outcome.status != "not placed") == target_as_word(text, term), (text, outcome)
        assert glued_uses(text, term, terms) == 0, text


def test_a_term_inside_another_term_is_not_glued(en_de):
    line, terms = "A child standing by a stroller and holding a toy sword.", [Term("child", "Kind"),
                                                                          Term("stroller", "Kinderwagen")]
    result = _forced_terms(en_de, line, terms)
    text = result.blocks[0].target
    assert [o.status for o in result.report.outcomes] == ["used", "placed"], text
    assert " Kind " in text and " Kinderwagen " in text, text
    # "Kinderwagen" starts with "Kind" but is the glossary's own term, which the sentence asks for
    assert glued_uses(text, terms[0]) == 1 and glued_uses(text, terms[0], terms) == 0
    assert glued_uses("Ein Kindermädchen.", terms[0], terms) == 1 and glued_uses("Die Kinder.", terms[0], terms) == 0


def test_determiner_forms_keep_the_case():
    assert alternatives("das", "de", "Klinik", plural=False) == ["das", "den", "der", "die"]
    assert alternatives("im", "de", "Klinik", plural=False) == ["im", "in der"]
    assert alternatives("der", "de", "Klinik", plural=False, before="in") == ["der", "dem"]
    assert alternatives("Le", "fr", "hôpital") == ["Le", "L'", "Les"]
    assert alternatives("groß", "de", "Klinik") == []
