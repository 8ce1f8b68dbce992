"""The plain-text fast path (nmt_desktop/server/plain_text.py) gives the document pipeline's answers, character
for character, on the bundled en-de model: many lines (one sentence, several, outer spaces, a glossary term,
numbers, URLs, e-mail addresses) decoded by the decode thread with the fast path against translate_document
on the same lines; and the fast path is really taken for the plain ones and refused for the others."""

from __future__ import annotations

import pytest

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.documents.glossary import Glossary
from nmt_desktop.core.documents.translate_document import DocumentOptions, translate_document
from nmt_desktop.server.batcher import DecodeKey, DecodeWorker, _Blocks
from nmt_desktop.server.plain_text import plain_units
from nmt_desktop.server.segments import text_segment
from server_process import BUNDLED

pytestmark = pytest.mark.xdist_group("server")

BASE = ["The cat sleeps on the sofa.", "I would like a cup of coffee, please.", "Where is the train station?",
        "My brother lives in a small village near the sea.", "It is raining today.", "Why are you laughing?",
        "She reads a book every week.", "The children are playing in the garden.", "Open the window, please.",
        "Dogs are loyal animals.", "The soup is too hot.", "Turn left at the next corner.", "Thank you!"]
KEPT = ["I paid 3,000 yen for it.", "Write to anna@example.com soon.", "See https://example.org/a now.",
        "The box weighs 5 kg.", "The house is red."]  # the last holds the glossary's term


def lines() -> list[str]:
    out = list(BASE) + KEPT
    out += [f"{a} {b}" for a, b in zip(BASE, BASE[3:])]  # two sentences in a line
    out += [f"  {s}  " for s in BASE[:4]] + [f"{s}\t" for s in BASE[4:7]]  # outer spaces kept
    out += [f"{a} {k}" for a, k in zip(BASE, KEPT)]  # plain sentence, then one with something to keep
    out += ["", "   ", "ok", "Tom's dog doesn't bark at night, does it?", "Yes. No. Maybe."]
    return out


@pytest.fixture(scope="module")
def translator() -> Translator:
    return Translator.load(BUNDLED[0])


@pytest.mark.parametrize("keep_spans", [True, False])
def test_the_fast_path_answers_what_the_document_pipeline_answers(translator, tmp_path, keep_spans):
    glossary = Glossary.from_tsv("house\tGebäude\n")
    blocks = [b for line in lines() for b in text_segment(line).blocks]
    worker = DecodeWorker(translator, glossary, "test", batch_size=32, window_s=0.0)
    try:
        fast = worker._results(blocks, DecodeKey(keep_spans=keep_spans))
    finally:
        worker.stop()
    cfg = DecodeConfig(beam_size=1, nbest=1, attention=True, alternatives=0)
    options = DocumentOptions(glossary=glossary, automatic_dnt=keep_spans, batch_size=32)
    full = translate_document(translator, _Blocks(blocks), cfg, options).blocks
    assert [r.target for r in fast] == [r.target for r in full]
    assert [[r.index for r in f.runs] for f in fast] == [[r.index for r in f.runs] for f in full]
    assert [[r.text for r in f.runs] for f in fast] == [[r.text for r in f.runs] for f in full]
    assert [[s.target_ids for s in f.sentences] for f in fast] == [[s.target_ids for s in f.sentences] for f in full]
    taken = [plain_units(translator, b, glossary.terms, keep_spans) is not None for b in blocks]
    assert sum(taken) >= len(BASE) * 2  # the plain lines took the fast path
    by_line = dict(zip(lines(), taken))
    assert not by_line["The house is red."]  # a glossary term: the pipeline forces it
    assert by_line["I paid 3,000 yen for it."] is (not keep_spans)  # a number kept as written only with spans
    assert by_line["Write to anna@example.com soon."] is (not keep_spans)
    assert not by_line[""] and not by_line["   "]


def test_a_small_number_leaves_the_fast_path_only_where_the_target_language_has_its_words(translator, tiny_trained):
    """A bare small number is kept (the pipeline) only where its words in the target language can be checked
    (number_words: de, fr, en); elsewhere the pipeline would add nothing but its cost."""
    import copy
    import dataclasses

    model, tokenizers = tiny_trained
    other = copy.copy(model)
    other.config = dataclasses.replace(model.config, tgt_lang="xx")  # a language number_words does not know
    block = text_segment("She was 54 when she died.").blocks[0]
    assert plain_units(translator, block, [], keep_spans=True) is None  # German: the pipeline keeps the 54
    assert plain_units(Translator(other, tokenizers), block, [], keep_spans=True) is not None
    assert plain_units(Translator(other, tokenizers), text_segment("I paid 3,000 yen.").blocks[0], [],
                       keep_spans=True) is None  # a number kept as written, in any language
