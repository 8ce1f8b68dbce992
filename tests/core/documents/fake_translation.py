"""A stand-in translation for format round-trip tests: every run's text marked as translated, and the
runs reversed when a block has several (so an adapter must move runs, as a real translation's word order
does). Real translation is tested in test_translate_document.py; the adapters' tests need only this."""

from __future__ import annotations

from nmt_desktop.core.documents.blocks import Block, TranslatedBlock, TranslatedRun, untranslated

MARK = "ÜT "  # a non-ASCII mark: every translated text node starts with it


def fake_translate(block: Block, reverse: bool = True) -> TranslatedBlock:
    if block.verbatim:
        return untranslated(block)
    runs = [TranslatedRun(i, run.text if run.verbatim or not run.text.strip() else MARK + run.text.upper())
            for i, run in enumerate(block.runs)]
    return runs[::-1] if reverse and len(runs) > 1 else runs


def fake_translate_all(blocks: list[Block], reverse: bool = True) -> list[TranslatedBlock]:
    return [fake_translate(b, reverse) for b in blocks]
