"""A memory used while a document is translated (core/memory/document_matches.py through translate_document's
DocumentOptions.reuse), with the tiny seeded model: exact blocks come from the memory and are never translated; a
block with formatting inside has its runs put on the memory's words by the model's alignment of the two."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nmt_desktop.core.documents.blocks import Block, Run
from nmt_desktop.core.documents.translate_document import DocumentOptions, translate_document
from nmt_desktop.core.memory import Entry, Pair, TranslationMemory
from nmt_desktop.core.memory.document_matches import DocumentMemory


@dataclass
class _Blocks:
    blocks: list[Block]
    path: Path = Path("<blocks>")

    def save(self, path, translated):  # never saved here
        raise AssertionError("not saved")


def test_exact_blocks_are_reused_a_styled_ones_runs_placed_by_alignment(tiny_translator, tmp_path):
    memory = TranslationMemory(tmp_path / "tm.sqlite")
    memory.add([Entry("a b c d", "MEMORY ONE", Pair("en", "xx")),
                Entry("big red cat sleeps", "gross rot katze schlaeft sonne mond", Pair("en", "xx")),
                Entry("a b c d e", "MEMORY FUZZY", Pair("en", "xx"))])
    use = DocumentMemory(memory, Pair("en", "xx"), 70)
    document = _Blocks([Block([Run("  a b c d ")], "p1"), Block([Run("big red "), Run("cat", style="b"), Run(" sleeps")], "p2"),
                        Block([Run("a b c d e f")], "p3")])
    translated, scored = [], []
    original = tiny_translator.translate_units

    def spy(units, *args, **kwargs):  # decoded, or (targets given) only scored to align a memory's target
        (scored if kwargs.get("targets") else translated).extend(u.text for u in units)
        return original(units, *args, **kwargs)

    tiny_translator.translate_units = spy
    try:
        result = translate_document(tiny_translator, document, options=DocumentOptions(reuse=use.reuse))
    finally:
        del tiny_translator.translate_units
    assert result.reused == [0, 1]
    assert result.blocks[0].target == "  MEMORY ONE " and [r.text for r in result.blocks[0].runs] == ["  MEMORY ONE "]
    assert translated == ["a b c d e f"] and scored == ["big red cat sleeps"]  # the styled block only aligned
    # the memory's translation is longer than the source: by position the bold run would take "schlaeft"
    assert [(r.index, r.text) for r in result.blocks[1].runs] == [(0, "gross rot "), (1, "katze"),
                                                                  (2, " schlaeft sonne mond")]
    assert result.sentences == 1
    found = use.find_fuzzy(document.blocks, set(result.reused))
    assert [(f.where, round(f.match.score), f.match.entry.target) for f in found] == [("p3", 82, "MEMORY FUZZY")]
    assert use.summary(len(result.reused))[0] == \
        "memory (en-xx): 2 segments reused (100% matches), 1 fuzzy match of 70% or more for review:"
    assert use.block_matches(3)[0] is None and use.block_matches(3)[2].entry.target == "MEMORY FUZZY"


def test_a_styled_blocks_runs_by_position_without_the_model():
    from nmt_desktop.core.documents.given_translation import given_block

    block = Block([Run("big red "), Run("cat", style="b"), Run(" sleeps")], "p")
    assert [(r.index, r.text) for r in given_block(None, block, "gross rot katze schlaeft sonne mond")] == \
        [(0, "gross rot katze "), (1, "schlaeft"), (2, " sonne mond")]
