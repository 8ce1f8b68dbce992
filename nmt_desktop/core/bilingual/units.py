"""What a bilingual file reads into, whatever its format: units of plain source and target text with their
inline tags, state and context. The translation memory (core/memory/) and the desk read these."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class InlineTag:
    """An inline tag of a unit's text, at `position` (a character offset into the unit's plain text).

    kind: "open" or "close" (the two ends of a pair: XLIFF 1.2 g, bpt/ept, bx/ex, mrk; XLIFF 2 pc, sc/ec,
    mrk) or "standalone" (x, ph, it, a lone half of a pair, a protected span). id: the pair's id (both ends
    share it). name: the element's own name ("g", "bpt", "pc", "ph", ...). code: the native code it stands
    for where the file gives it (bpt/ept/ph content, XLIFF 2 originalData), else ""."""
    kind: str
    id: str
    name: str
    position: int
    code: str = ""


@dataclass
class BilingualUnit:
    """One segment of a bilingual file.

    id: the unit's id (an XLIFF trans-unit/unit id, with "/" and the segment's id where a unit has several
    segments; a PO entry's msgctxt + msgid). source/target: plain text, the format's inline markup removed
    (tags are in `tags`/`target_tags`). confirmed: a person approved the target (XLIFF 1.2 state final or
    signed-off or approved="yes"; XLIFF 2 state final or reviewed; PO translated and not fuzzy). state:
    the format's own word ("needs-translation", "initial", "fuzzy", ...). context: PO msgctxt, XLIFF
    resname, then the notes. translatable: False for translate="no". plural: a PO plural form's index
    (msgstr[n]), else None."""
    id: str
    source: str
    target: str
    confirmed: bool
    state: str = ""
    context: str = ""
    tags: list[InlineTag] = field(default_factory=list)
    target_tags: list[InlineTag] = field(default_factory=list)
    translatable: bool = True
    plural: int | None = None


@dataclass
class BilingualFile:
    """A bilingual file's units in file order, its languages ("" where the file names none) and its format
    ("XLIFF 1.2", "XLIFF 2.0", "PO")."""
    path: Path
    format: str
    source_language: str
    target_language: str
    units: list[BilingualUnit]
