"""A memory used while a document is translated (core/memory/document_matches.py through translate_document's
DocumentOptions.reuse), with the tiny seeded model: exact blocks of one look come from the memory and never reach
the model; a block with formatting inside keeps its formatting and has its 100% match listed instead."""

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


def test_exact_plain_blocks_are_reused_styled_ones_listed(tiny_translator, tmp_path):
    memory = TranslationMemory(tmp_path / "tm.sqlite")
    memory.add([Entry("a b c d", "MEMORY ONE", Pair("en", "xx")), Entry("e f g h", "MEMORY TWO", Pair("en", "xx")),
                Entry("a b c d e", "MEMORY FUZZY", Pair("en", "xx"))])
    use = DocumentMemory(memory, Pair("en", "xx"), 70)
    document = _Blocks([Block([Run("  a b c d ")], "p1"), Block([Run("e f "), Run("g h", style="b")], "p2"),
                        Block([Run("a b c d e f")], "p3")])
    translated = []
    original = tiny_translator.translate_units

    def spy(units, *args, **kwargs):
        translated.extend(u.text for u in units)
        return original(units, *args, **kwargs)

    tiny_translator.translate_units = spy
    try:
        result = translate_document(tiny_translator, document, options=DocumentOptions(reuse=use.reuse))
    finally:
        del tiny_translator.translate_units
    assert result.reused == [0]
    assert result.blocks[0].target == "  MEMORY ONE " and [r.text for r in result.blocks[0].runs] == ["  MEMORY ONE "]
    assert "a b c d" not in translated and "e f g h" in translated  # the styled block went to the model
    assert result.sentences == 2
    found = use.find_fuzzy(document.blocks, set(result.reused))
    assert [(f.where, round(f.match.score), f.match.entry.target) for f in found] == [
        ("p2", 100, "MEMORY TWO"), ("p3", 82, "MEMORY FUZZY")]
    assert use.summary(len(result.reused))[0] == \
        "memory (en-xx): 1 segment reused (100% matches), 2 fuzzy matches of 70% or more for review:"
    assert use.block_matches(3)[0] is None and use.block_matches(3)[2].entry.target == "MEMORY FUZZY"
