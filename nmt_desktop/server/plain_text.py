"""The fast path for plain text: a request's line that the document pipeline would only cut into sentences
and translate (one run, nothing verbatim, no URL, e-mail address, emoji or number to keep, no glossary term)
goes straight to `Translator.translate_units`, skipping the placeholders, the constraints' bookkeeping and
the block's reassembly. Its answer is the pipeline's, character for character: the same sentences (the one
policy, core/decoding/document.py), decoded in the same length-sorted batches, joined as
translate_document joins them (whitespace words with single spaces, the line's outer spaces kept)
(tests/server/test_server_plain_text.py checks it against the full pipeline)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.documents.blocks import Block, TranslatedRun
from nmt_desktop.core.documents.translate_document import BlockResult

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Unit
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Term


def plain_units(translator: "Translator", block: Block, terms: Sequence["Term"], keep_spans: bool) -> list["Unit"] | None:
    """The block's sentences as units when the pipeline would do nothing else to it; None otherwise."""
    from nmt_desktop.core.decoding.document import line_sentences, sentence_pieces
    from nmt_desktop.core.decoding.results import Unit
    from nmt_desktop.core.documents.glossary import find_terms
    from nmt_desktop.core.documents.number_words import number_words
    from nmt_desktop.core.documents.placeholders import dnt_spans, number_spans, small_number_spans
    from nmt_desktop.core.documents.translate_document import target_language

    # a bare small number is kept only where its words in the target language can be checked (translate_document)
    small = keep_spans and number_words(0, target_language(translator)) is not None
    if len(block.runs) != 1 or block.verbatim or block.runs[0].verbatim or block.runs[0].style is not None:
        return None
    stripped = block.text.strip()
    if not stripped or dnt_spans(stripped, None, keep_spans):
        return None
    units: list[Unit] = []
    for sentence in line_sentences(stripped):
        for piece, ids in sentence_pieces(sentence, translator.source_ids, translator.config.max_positions):
            numbers = keep_spans and (number_spans(piece) or (small and small_number_spans(piece)))
            if (terms and find_terms(piece, terms)) or numbers:
                return None
            units.append(Unit(0, piece, ids, translator.source_pieces(ids)))
    return units


def translate_plain(translator: "Translator", blocks: list[Block], units: list[list["Unit"]], cfg: DecodeConfig,
                    batch_size: int) -> list[BlockResult]:
    """Each plain block's result, its units decoded in length-sorted batches as translate_constrained does."""
    from nmt_desktop.core.decoding.pipeline import length_sorted

    flat = [u for block_units in units for u in block_units]
    done: list = [None] * len(flat)
    for picked in length_sorted([len(u.source_ids) for u in flat], batch_size):
        for u, translation in zip(picked, translator.translate_units([flat[u] for u in picked], cfg)):
            done[u] = translation
    return plain_results(blocks, units, done)


def plain_results(blocks: list[Block], units: list[list["Unit"]], translations: list) -> list[BlockResult]:
    """Each plain block's result from its units' translations (all blocks' in one list, in order), joined as
    translate_document joins them."""
    results, cursor = [], 0
    for block, block_units in zip(blocks, units):
        sentences = translations[cursor: cursor + len(block_units)]
        cursor += len(block_units)
        text = block.text
        lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
        target = lead + " ".join(w for s in sentences for w in s.text.split()) + trail
        results.append(BlockResult(text, target, [TranslatedRun(0, target)], list(sentences)))
    return results
