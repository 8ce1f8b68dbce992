"""How "Inspect this translation" pairs a given text with its source (gui/translate/inspect_pairs.py): line by
line, a long line sentence by sentence as the Translate tab cuts it, one pair when the lines do not line up."""

from __future__ import annotations

from nmt_desktop.core.decoding.document import line_units
from nmt_desktop.gui.translate.inspect_pairs import ModelUnit, plan_pairs

LONG = " ".join(["red cat runs"] * 13)  # 39 words: two of them do not fit the tiny model's 64 positions


def test_plan_pairs(tiny_translator) -> None:
    tr = tiny_translator
    assert len(line_units(f"{LONG}. {LONG}.", tr.source_ids, tr.config.max_positions)) == 2

    plans, note = plan_pairs(tr, "red cat\n\nblue dog\n", "rot katze\nblau hund\n")
    assert not note and [(p.line, p.source, p.given, p.model_ids) for p in plans] == [
        (0, "red cat", "rot katze", None), (2, "blue dog", "blau hund", None)]

    plans, note = plan_pairs(tr, f"{LONG}. {LONG}.", "eins. zwei.")  # a split line: sentence by sentence
    assert not note and [(p.source, p.given) for p in plans] == [(f"{LONG}.", "eins."), (f"{LONG}.", "zwei.")]

    plans, note = plan_pairs(tr, f"{LONG}. {LONG}.", "eins zwei drei.")  # the sentences do not line up
    assert [(p.source, p.given) for p in plans] == [(f"{LONG}. {LONG}.", "eins zwei drei.")]

    plans, note = plan_pairs(tr, "red cat\nblue dog", "rot katze blau hund")
    assert len(plans) == 1 and note.startswith("Your translation has 1 lines and the source 2")

    model = [ModelUnit(0, "red cat", "rot katze", (5, 6)), ModelUnit(1, "blue dog", "blau hund", (7, 8))]
    plans, _ = plan_pairs(tr, "red cat\nblue dog", "rot katze\nblau hund", model)
    assert [(p.given, p.model_ids) for p in plans] == [([5, 6], [5, 6]), ([7, 8], [7, 8])]  # the model's very ids
    plans, _ = plan_pairs(tr, "red cat\ngreen dog", "rot katze\ngruen hund", model)  # line 2's source changed
    assert [(p.given, p.model_ids) for p in plans] == [([5, 6], [5, 6]), ("gruen hund", None)]
