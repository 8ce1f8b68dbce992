"""What a glossary did, in words, from a `ConstraintReport`'s outcomes: the one wording of the CLI
(`translate --glossary`, `translate-file --glossary`) and the document dialog's summary.

A term use is "used by the model", "placed", "placed but the sentence changed" or "not placed" with its
reason; never "in place" for a term that is not. Kept spans (numbers, do-not-translate placeholders) are
counted apart: they are not glossary terms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nmt_desktop.core.documents.constraints import ConstraintReport, TermOutcome

SHOWN = 10  # term uses named one by one (not placed first, then changed)


def counts_line(report: "ConstraintReport") -> str:
    """"3 glossary term uses: 1 used by the model, 1 placed, 1 not placed; 2 of 2 kept spans kept"."""
    terms = [o for o in report.outcomes if not o.kept]
    spans = [o for o in report.outcomes if o.kept]
    parts = []
    if terms:
        by = {s: sum(o.status == s for o in terms) for s in ("used", "placed", "changed", "not placed")}
        named = [f"{by['used']} used by the model", f"{by['placed']} placed",
                 f"{by['changed']} placed but the sentence changed", f"{by['not placed']} not placed"]
        parts.append(f"{len(terms)} glossary term use{'s' if len(terms) != 1 else ''}: "
                     + ", ".join(n for n in named if not n.startswith("0 ")))
    if spans:
        kept = sum(o.status != "not placed" for o in spans)
        parts.append(f"{kept} of {len(spans)} kept span{'s' if len(spans) != 1 else ''} kept")
    return "; ".join(parts) if parts else "no glossary term or kept span occurred"


def outcome_line(outcome: "TermOutcome") -> str:
    """One term use in words: '"hospital" -> "Klinik" not placed in "…": why'."""
    sentence = outcome.sentence if len(outcome.sentence) <= 60 else outcome.sentence[:59] + "…"
    what = f"\"{outcome.term.source}\" -> \"{outcome.term.target}\""
    if outcome.status == "not placed":
        return f"{what} not placed in \"{sentence}\": {outcome.reason} (translated without it)"
    if outcome.status == "changed":
        return f"{what} placed but the sentence changed in \"{sentence}\" (chrF {outcome.rest:.0f} of the rest)"
    return f"{what} {'used by the model' if outcome.status == 'used' else 'placed'} in \"{sentence}\""


def details(report: "ConstraintReport", shown: int = SHOWN) -> list[str]:
    """A line per term use that needs the user's eye (not placed, then changed), at most `shown`, and
    how many more there are."""
    worst = [o for o in report.outcomes if o.status == "not placed"] + \
            [o for o in report.outcomes if o.status == "changed"]
    lines = [outcome_line(o) for o in worst[:shown]]
    if len(worst) > shown:
        lines.append(f"… and {len(worst) - shown} more")
    return lines
