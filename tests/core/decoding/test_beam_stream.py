"""Issue 41: what beam search streams is always one real hypothesis of the search, never a mix of beams.

A consumer keeps each unit's shown steps with `Step.shown_after` (the one rule the Translate tab follows too);
at every position the shown tokens must be the path of one node of the beam tree at that position (a
hypothesis the search really holds), and the shown attention that hypothesis' own rows. Before the fix the
stream gave each position's best live token only, so "gekauft.." or "Bahnhof??" appeared: tokens of different
beams appended one after another.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nmt_desktop.core.config import DecodeConfig, ModelConfig
from nmt_desktop.core.decoding.search import BeamState, beam_search
from nmt_desktop.core.decoding.backends.choice import backend_for_search

from tiny_models import perturbed_model, right_padded

# sentences whose best live hypothesis changes while they decode with the bundled en-de model (beam 4)
ISSUE_SENTENCES = ["I bought a new car yesterday.", "Where is the nearest train station?",
                   "The cat sleeps in front of the bed.", "We went to the market and bought fruit."]


@pytest.fixture(scope="module")
def en_de():
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.locations import bundled_models_dir

    return Translator.load(bundled_models_dir() / "en-de")


def live_paths(state: BeamState, sentence: int, position: int) -> dict[tuple[int, ...], int]:
    """The hypotheses the search holds for `sentence` after `position`: their token ids -> tree node."""
    return {tuple(state.node_tokens(n.id)): n.id for n in state.tree
            if n.sentence == sentence and n.step == position and n.status in ("kept", "forced")}


def test_every_streamed_text_is_a_prefix_of_one_real_hypothesis_en_de(en_de):
    cfg = DecodeConfig(beam_size=4, attention=True)
    target = en_de.tokenizers.target
    switches = 0
    for unit in en_de.units(ISSUE_SENTENCES):
        stream = en_de.stream_unit(unit, cfg)
        shown: list = []
        for step in stream:
            switches += step.earlier_steps is not None
            shown = step.shown_after(shown)
            ids = tuple(s.token_id for s in shown)
            node = live_paths(stream.beam_state, 0, step.index).get(ids)
            assert node is not None, f"{target.decode(list(ids))!r} is no hypothesis of the search"
            assert [s.index for s in shown] == list(range(step.index + 1)) and list(ids) == step.prefix_ids
            assert [s.piece for s in shown] == target.pieces(list(ids))  # named, as the pane shows them
            attention = np.stack([s.cross_attention for s in shown], axis=2)  # (L, H, t, S): the shown rows
            np.testing.assert_array_equal(attention, stream.beam_state.node_attention(node)[..., :len(unit.source_ids)])
        final = stream.result.best
        assert final.text and final.text.count("..") == 0 and "??" not in final.text
    assert switches > 0, "the best hypothesis never changed: these sentences no longer test anything"


def test_a_batch_streams_each_sentences_own_hypothesis():
    """Several sentences in one search (the CLI's batches): each sentence's shown steps follow its own beam."""
    model = perturbed_model(ModelConfig(src_vocab_size=41, tgt_vocab_size=41, d_model=32, n_heads=4, encoder_layers=2,
                                        decoder_layers=2, ffn_dim=48, max_positions=48, dropout=0.0), seed=3)
    gen = torch.Generator().manual_seed(3)
    sources = [torch.randint(4, 41, (n,), generator=gen).tolist() + [model.config.eos_id] for n in (3, 8, 5, 2, 7, 6)]
    cfg = DecodeConfig(beam_size=4, nbest=2, max_len_a=1.0, max_len_b=4)
    state = BeamState()
    shown: dict[int, list] = {}
    switches = 0
    for position in beam_search(model, right_padded(sources, model.config.pad_id), cfg, state,
                                backend=backend_for_search(model, None, None)):
        for step in position:
            switches += step.earlier_steps is not None
            shown[step.row] = step.shown_after(shown.get(step.row, []))
            assert tuple(s.token_id for s in shown[step.row]) in live_paths(state, step.row, step.index)
            assert all(s.row == step.row for s in shown[step.row])
    assert switches > 0


def test_greedy_and_sampling_steps_simply_extend(tiny_translator):
    for cfg in (DecodeConfig(), DecodeConfig(sample=True, seed=4)):
        stream = tiny_translator.stream("red cat runs big", cfg)
        shown: list = []
        for step in stream:
            assert step.earlier_steps is None
            shown = step.shown_after(shown)
        assert [s.token_id for s in shown] == stream.result.target_ids
