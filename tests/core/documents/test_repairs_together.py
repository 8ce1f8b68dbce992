"""Many sentences' repairs run together (decoding/lockstep.py): the same translations and outcomes as one
sentence at a time, in a handful of batched decodes instead of several decodes per sentence."""

from __future__ import annotations

import pytest

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.lockstep import run_alone
from nmt_desktop.core.documents.constraints import Constraint, ConstraintReport, repair_steps, translate_constrained
from nmt_desktop.core.documents.glossary import Term, find_terms

TERMS = [Term("dog", "Köter"), Term("garden", "Hof"), Term("house", "Gebäude"), Term("hospital", "Klinik")]
SENTENCES = ["I saw the dog in the garden.", "The dogs play in front of the house.", "He sold his house last year.",
             "The hospital is closed on Sundays.", "My brother works in a hospital near the garden.",
             "A man walks his dog.", "Two children are sitting in front of a house.", "The sun is shining."]


def _constraints(units):
    return [[Constraint(m.start, m.end, m.term) for m in find_terms(u.text, TERMS)] for u in units]


class Counting:
    """The translator with its `translate_units` calls counted (each call is one batched decode)."""

    def __init__(self, translator, monkeypatch):
        self.calls = 0
        real = translator.translate_units

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(translator, "translate_units", counted)


@pytest.mark.parametrize("beam", [1, 4])
def test_repairs_together_equal_repairs_alone_in_fewer_decodes(en_de, monkeypatch, beam):
    cfg = DecodeConfig(beam_size=beam, nbest=1)
    units = en_de.units(SENTENCES)
    constraints = _constraints(units)
    unforced = en_de.translate_units(units, cfg)
    counter = Counting(en_de, monkeypatch)
    alone, alone_report = [], ConstraintReport()
    for unit, translation, found in zip(units, unforced, constraints):
        if not found:
            alone.append(translation.text)
            continue
        repaired = run_alone(en_de, repair_steps(en_de, unit, translation, found, cfg))
        repaired.add_to(alone_report)
        alone.append(repaired.translation.text)
    calls_alone, counter.calls = counter.calls, 0
    report = ConstraintReport()
    together = translate_constrained(en_de, units, constraints, cfg, batch_size=16, report=report)
    assert [t.text for t in together] == alone
    def outcomes(r):  # the batches run shortest sentence first: compare per sentence
        return sorted((o.sentence, o.term.source, o.status) for o in r.outcomes)

    assert outcomes(report) == outcomes(alone_report)
    assert report.forced >= 5 and report.repairs == alone_report.repairs  # the same decodes' worth of work
    # one batch of sentences plus a round per step of the longest chain of repairs (two terms in one sentence: about
    # ten), against several decodes per forced term one by one (28 here)
    assert counter.calls <= calls_alone // 2, (counter.calls, calls_alone)
