"""The Translate file dialog's result line (what the glossary did) and each row's formatting note.

The core's `ConstraintReport` counts glossary terms and do-not-translate placeholders together (both are
constraints). The dialog's line is about the glossary, so the term occurrences are counted again here, in each
sentence's source as the core saw it (`Translation.source` is the unit's text) and in its translation; the
report gives how many constraints had to be forced in.
"""

from __future__ import annotations

from nmt_desktop.core.documents.blocks import Block
from nmt_desktop.core.documents.glossary import Glossary, find_terms, target_present
from nmt_desktop.core.documents.translate_document import BlockResult, DocumentTranslation


def glossary_line(result: DocumentTranslation, glossary: Glossary | None) -> str:
    """"Glossary: 12 of 12 terms used, 3 forced in" ("" without a glossary)."""
    if glossary is None:
        return ""
    asked = used = 0
    for block in result.blocks:
        for sentence in block.sentences:
            for match in find_terms(sentence.source, glossary.terms):
                asked += 1
                used += target_present(sentence.text, match.term)
    if not asked:
        return f"Glossary: none of its {len(glossary.terms)} terms occurs in the document"
    report = result.report
    spans = report.asked - asked  # the rest of the constraints: placeholders of kept spans (URLs, numbers, …)
    forced = f"{report.forced} forced in" + (" (terms and kept spans)" if spans > 0 and report.forced else "")
    return f"Glossary: {used} of {asked} terms used, {forced}"


def formatting_note(block: Block, result: BlockResult) -> str:
    """Where the block's formatted runs (bold, links, code) went: "formatted: “before” → “bevor”" ("" for a
    block of one look). The preview shows plain text; this tooltip shows what Keep formatting did."""
    texts = {run.index: run.text for run in result.runs}
    moved = [f"“{run.text.strip()}” → “{texts.get(i, '').strip()}”" for i, run in enumerate(block.runs)
             if (run.style is not None or run.verbatim) and run.text.strip()]
    return "formatted: " + "; ".join(moved) if moved else ""
