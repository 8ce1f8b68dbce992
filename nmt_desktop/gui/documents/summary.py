"""The Translate file dialog's result line (what the glossary did) and each row's formatting note.

The glossary's line is the core's wording (core/documents/term_report.py), from the report's outcome per
term use: used by the model, placed, placed but the sentence changed, not placed (the first one named with
its reason); kept spans (numbers, do-not-translate) are the core's constraints too, counted apart.
"""

from __future__ import annotations

from nmt_desktop.core.documents.blocks import Block
from nmt_desktop.core.documents.glossary import Glossary
from nmt_desktop.core.documents.term_report import counts_line, outcome_line
from nmt_desktop.core.documents.translate_document import BlockResult, DocumentTranslation


def glossary_line(result: DocumentTranslation, glossary: Glossary | None) -> str:
    """"Glossary: 3 glossary term uses: 2 placed, 1 not placed ("…" -> "…" not placed in "…": why)"
    ("" without a glossary)."""
    if glossary is None:
        return ""
    outcomes = [o for o in result.report.outcomes if not o.kept]
    if not outcomes:
        return f"Glossary: none of its {len(glossary.terms)} terms occurs in the document"
    line = f"Glossary: {counts_line(result.report).split('; ')[0]}"
    missing = next((o for o in outcomes if o.status == "not placed"), None)
    return line + (f" ({outcome_line(missing)})" if missing is not None else "")


def formatting_note(block: Block, result: BlockResult) -> str:
    """Where the block's formatted runs (bold, links, code) went: "formatted: “before” → “bevor”" ("" for a
    block of one look). The preview shows plain text; this tooltip shows what Keep formatting did."""
    texts = {run.index: run.text for run in result.runs}
    moved = [f"“{run.text.strip()}” → “{texts.get(i, '').strip()}”" for i, run in enumerate(block.runs)
             if (run.style is not None or run.verbatim) and run.text.strip()]
    return "formatted: " + "; ".join(moved) if moved else ""
