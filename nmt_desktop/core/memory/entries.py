"""What a translation memory holds: entries of plain source and target text with their inline tags, their
language pair, times, origin and context; and the memory's one error."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

ORIGINS = ("file", "user", "confirmed")  # imported from a file; typed in by the user; confirmed in the desk


class TranslationMemoryError(ValueError):
    """A memory file or an imported file that cannot be used, said in one sentence naming it."""


@dataclass(frozen=True)
class Tag:
    """An inline tag at `position` (a character offset into the plain text), as core/bilingual's InlineTag:
    kind "open", "close" (the two ends of a pair, sharing `id`) or "standalone"; `name` the element it came
    from (TMX bpt/ept/ph/it/hi, XLIFF g/pc/x...); `code` the native markup it stands for, where known."""
    kind: str
    id: str
    name: str
    position: int
    code: str = ""


def normal_language(code: str) -> str:
    """A language code as stored and compared: lower case, "-" between subtags ("EN_us" -> "en-us")."""
    return code.strip().lower().replace("_", "-")


@dataclass(frozen=True)
class Pair:
    """A language pair, codes normalised (normal_language)."""
    source: str
    target: str

    @classmethod
    def of(cls, source: str, target: str) -> "Pair":
        return cls(normal_language(source), normal_language(target))

    def covers(self, other: "Pair") -> bool:
        """Whether a lookup for `self` reads `other`'s entries: the same codes, or `self` names only the
        language of a regional code ("en" reads "en-us")."""
        return _code_covers(self.source, other.source) and _code_covers(self.target, other.target)

    def __str__(self) -> str:
        return f"{self.source}-{self.target}"


def _code_covers(wanted: str, code: str) -> bool:
    return code == wanted or code.startswith(wanted + "-")


@dataclass
class Entry:
    """One segment pair. created/changed: Unix seconds (0: now, at insertion). origin: one of ORIGINS.
    document: the file it was imported from ("" otherwise). id: the row id once stored."""
    source: str
    target: str
    pair: Pair
    origin: str = "file"
    context: str = ""
    document: str = ""
    source_tags: list[Tag] = field(default_factory=list)
    target_tags: list[Tag] = field(default_factory=list)
    created: int = 0
    changed: int = 0
    id: int | None = None


def tags_json(tags: list[Tag]) -> str:
    """Tags as stored: "" for none, else a JSON list of [kind, id, name, position, code]."""
    return json.dumps([[t.kind, t.id, t.name, t.position, t.code] for t in tags], ensure_ascii=False) if tags else ""


def tags_from_json(text: str) -> list[Tag]:
    return [Tag(kind, id_, name, position, code) for kind, id_, name, position, code in json.loads(text)] if text else []
