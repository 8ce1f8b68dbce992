"""Constrained decoding: glossary terms forced in where the model put its own translation of the source
term, on every decoding backend and search, with attention for every token; a term the model uses anyway
costs no extra decode."""

from __future__ import annotations

import numpy as np
import pytest

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.documents.constraints import Constraint, ConstraintReport, source_pieces, translate_constrained
from nmt_desktop.core.documents.glossary import Term, find_terms, target_present

TERMS = [Term("dog", "Köter"), Term("garden", "Hof"), Term("house", "Gebäude")]
SENTENCES = ["I saw the dog in the garden.", "The dogs play in front of the house.", "He sold his house last year."]


def _constrained(translator, sentences, cfg, terms=TERMS):
    units = translator.units(sentences)
    constraints = [[Constraint(m.start, m.end, m.term) for m in find_terms(u.text, terms)] for u in units]
    report = ConstraintReport()
    return units, translate_constrained(translator, units, constraints, cfg, report=report), report


@pytest.mark.parametrize("backend, int8, beam", [("compiled", False, 1), ("python", False, 1), ("reference", False, 1),
                                                 ("python", True, 1), ("python", False, 4)])
def test_terms_forced_in_on_every_backend_and_search(backend, int8, beam):
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import bundled_models_dir

    translator = Translator.load(bundled_models_dir() / "en-de", int8=int8, backend=backend)
    cfg = DecodeConfig(beam_size=beam, nbest=1)
    plain = [t.text for t in translator.translate_batch(SENTENCES, cfg)]
    assert not any(target_present(p, t) for p in plain for t in TERMS)  # the model alone never uses them
    units, out, report = _constrained(translator, SENTENCES, cfg)
    texts = [t.text for t in out]
    assert "Köter" in texts[0] and "Hof" in texts[0] and "Gebäude" in texts[1] and "Gebäude" in texts[2], texts
    assert report.asked == 5 and report.forced == 5 and report.missing == 0
    for translation in out:  # attention for every token, forced ones included
        attention = np.asarray(translation.attention)
        assert attention.shape[2] == len(translation.target_tokens) and np.isfinite(attention).all()
    # the words around a forced term are the model's own: the rest of the sentence is kept
    assert texts[2].startswith("Er hat") and texts[2].endswith("verkauft."), texts[2]


def test_a_term_the_model_uses_anyway_costs_nothing(en_de):
    cfg = DecodeConfig()
    plain = en_de.translate("I saw the dog in the garden.", cfg).text
    assert "Hund" in plain
    _units, out, report = _constrained(en_de, ["I saw the dog in the garden."], cfg, [Term("dog", "Hund")])
    assert out[0].text == plain and report.repairs == 0 and report.met == 1


def test_source_pieces_cover_the_term_characters(en_de):
    unit = en_de.units(["The power supplies failed."])[0]
    pieces = source_pieces(unit, 4, 18)  # "power supplies"
    assert "".join(unit.source_tokens[p] for p in pieces).replace("▁", " ").strip() == "power supplies"
