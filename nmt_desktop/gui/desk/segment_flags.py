"""The desk's "Trust and flags" column: what to look at twice in a segment. The machine suggestion's trust band
and estimated chrF with the words the estimate flags (suggestions.py), the software placeholders of the source
(%s, {name}, ...: inline_segments.PLACEHOLDER, the pattern translate-file keeps) that your translation lacks,
and the inline tags the save places (your translation is plain text; the file's own tags go back in on save,
core/bilingual/confirmed.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from nmt_desktop.core.bilingual.inline_segments import PLACEHOLDER
from nmt_desktop.core.bilingual.units import BilingualUnit
from nmt_desktop.gui.desk.suggestions import Suggestion

LOW_TRUST = "low"  # the trust band the "low trust" filter shows (core/analysis/quality.py QualityEstimate.trust)


def missing_placeholders(source: str, translation: str) -> list[str]:
    """The source's placeholders your translation holds fewer times than the source, once each, in order."""
    have = Counter(PLACEHOLDER.findall(translation))
    missing = []
    for name, count in Counter(PLACEHOLDER.findall(source)).items():
        if have[name] < count:
            missing.append(name)
    return missing


@dataclass(frozen=True)
class SegmentFlags:
    """A segment's flags: the text of its column and whether the "low trust" filter shows it."""
    text: str
    tooltip: str
    low_trust: bool


def segment_flags(unit: BilingualUnit, suggestion: Suggestion | None) -> SegmentFlags:
    """The flags of `unit` (its current translation) given the suggestion shown for it."""
    parts, tips = [], []
    low = False
    if suggestion is not None and suggestion.origin == "machine":
        parts.append(f"trust {suggestion.trust} (chrF {suggestion.qe:.0f})")
        low = suggestion.trust == LOW_TRUST
        if suggestion.flagged:
            parts.append(f"{len(suggestion.flagged)} flagged")
            tips.append("Flagged in the machine translation: " + ", ".join(suggestion.flagged))
    missing = missing_placeholders(unit.source, unit.target) if unit.target else []
    if missing:
        parts.append("missing " + " ".join(missing))
        tips.append("Your translation lacks the source's placeholder(s) " + ", ".join(missing))
        low = True
    if unit.tags:
        pairs = sum(t.kind != "close" for t in unit.tags)
        parts.append(f"{pairs} tag{'s' if pairs > 1 else ''}")
        tips.append("The source's inline tags go back into your translation when the file is saved")
    return SegmentFlags(" · ".join(parts), "\n".join(tips), low)
