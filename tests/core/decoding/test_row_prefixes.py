"""One forced prefix per row of a batch: each row decodes as it does alone with its own prefix.

Documents repair many sentences' kept spans together (documents/constraints.py) by forcing a different
prefix into each row of one batch; that is only right when a row's result does not depend on its
batch-mates' prefixes, in greedy and in beam search, with rows that have no prefix at all among them.
"""

from __future__ import annotations

import pytest

from nmt_desktop.core.config import DecodeConfig

SENTENCES = ["The hospital is near the station.", "I bought a new car yesterday.",
             "Where is the nearest train station?", "We went to the market and bought fruit for 12 euros."]
PREFIXES = ["Das Krankenhaus", "", "Wo ist der", "Wir gingen zum Markt"]


@pytest.fixture(scope="module")
def en_de():
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import bundled_models_dir

    return Translator.load(bundled_models_dir() / "en-de")


@pytest.mark.parametrize("beam", [1, 4])
def test_each_row_decodes_with_its_own_prefix_as_it_does_alone(en_de, beam):
    cfg = DecodeConfig(beam_size=beam, alternatives=3)
    units = en_de.units(SENTENCES)
    prefixes = [en_de.target_prefix_ids(p) if p else [] for p in PREFIXES]
    together = en_de.translate_units(units, cfg, prefix=prefixes)
    for unit, prefix, row in zip(units, prefixes, together):
        alone = en_de.translate_units([unit], cfg, prefix=prefix)[0]
        assert row.target_ids == alone.target_ids
        assert row.target_ids[:len(prefix)] == prefix  # the row's own prefix, not a batch-mate's
        assert row.best.token_logprobs == pytest.approx(alone.best.token_logprobs, abs=1e-4)
    # the rows really differ in what they were forced to: the first starts with its own words
    assert together[0].text.startswith("Das Krankenhaus") and together[2].text.startswith("Wo ist der")


def test_a_count_of_prefixes_that_is_not_the_batch_size_is_refused(en_de):
    units = en_de.units(SENTENCES[:2])
    with pytest.raises(ValueError, match="2 sources but 3 forced prefixes"):
        en_de.translate_units(units, DecodeConfig(), prefix=[[5], [6], [7]])
