"""An OOXML package (.docx, .pptx, .xlsx) opened once as a zip: its relationships read, the parts that hold
text parsed with lxml (safe parser of xml_parts.py) and, on save, written back with every other member
byte for byte, in the source's member order and compression.

Not python-docx/python-pptx: they re-serialise every part they model and drop what they do not (a
hyperlink relationship with an internal target, unknown parts' details). A parsed part whose tree did not
change is copied byte for byte too, so an untranslated save is the source's bytes in every member.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, DocumentError, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.ooxml_runs import clipped_property
from nmt_desktop.core.documents.formats.xml_parts import (
    Loaded,
    Slot,
    SlotDocument,
    parse_xml,
    read_zip,
    serialise_xml,
    write_zip,
)

RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
DC = "http://purl.org/dc/elements/1.1/"


@dataclass(frozen=True)
class Relationship:
    """One relationship of a part: `target` is the member name of an internal target (None when the
    package lacks it) and `ref` the Target as written (a URL for an external one)."""
    id: str
    type: str
    ref: str
    external: bool
    target: str | None

    def is_kind(self, kind: str) -> bool:
        """Whether the relationship type ends in `/kind` ("officeDocument", "slide", "header")."""
        return self.type.endswith("/" + kind)


def rels_name(part: str) -> str:
    """The member holding a part's relationships ("" is the package's own)."""
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", f"{name}.rels")


@dataclass
class Package:
    """The zip's members read once; `root(name)` parses a part (once) for editing; `save` writes the
    parts whose trees changed and copies everything else."""
    path: Path
    what: str
    members: dict[str, bytes] = field(default_factory=dict)
    _trees: dict[str, tuple[etree._ElementTree, bytes]] = field(default_factory=dict)
    _rels: dict[str, dict[str, Relationship]] = field(default_factory=dict)

    @classmethod
    def open(cls, path: Path, what: str) -> Package:
        return cls(Path(path), what, read_zip(Path(path), what))

    def refuse(self, why: str) -> DocumentError:
        return DocumentError(f"{self.path.name} cannot be read as {self.what}: {why}")

    def root(self, name: str) -> etree._Element:
        if name not in self._trees:
            if name not in self.members:
                raise self.refuse(f"it has no {name}")
            tree = parse_xml(self.members[name], f"{self.path.name} {name}")
            self._trees[name] = (tree, etree.tostring(tree))
        return self._trees[name][0].getroot()

    def rels(self, part: str) -> dict[str, Relationship]:
        """A part's relationships by id (the package's for part "")."""
        if part not in self._rels:
            found: dict[str, Relationship] = {}
            name = rels_name(part)
            if name in self.members:
                folder = posixpath.dirname(part)
                for rel in parse_xml(self.members[name], f"{self.path.name} {name}").getroot().iter(RELATIONSHIP):
                    ref = rel.get("Target", "")
                    external = (rel.get("TargetMode") or "").lower() == "external"
                    target = None
                    if not external:
                        path = ref.split("#")[0]
                        path = path[1:] if path.startswith("/") else posixpath.normpath(posixpath.join(folder, path))
                        target = path if path in self.members else None
                    found[rel.get("Id", "")] = Relationship(rel.get("Id", ""), rel.get("Type", ""), ref, external,
                                                            target)
            self._rels[part] = found
        return self._rels[part]

    def related(self, part: str, kind: str) -> list[str]:
        """The members a part's relationships of type `.../kind` point to, in the rels' order."""
        return [r.target for r in self.rels(part).values() if r.is_kind(kind) and r.target is not None]

    def main_part(self, default: str) -> str:
        """The officeDocument part the package's rels name, else `default` (a package without rels)."""
        found = self.related("", "officeDocument")
        if found:
            return found[0]
        if default not in self.members:
            raise self.refuse(f"it has no {default}")
        return default

    def core_properties(self) -> etree._Element | None:
        found = self.related("", "core-properties")
        return self.root(found[0]) if found else None

    def changed(self) -> dict[str, bytes]:
        """The parsed parts whose trees differ from what was read, serialised as the source wrote them."""
        return {name: serialise_xml(tree, self.members[name]) for name, (tree, read) in self._trees.items()
                if etree.tostring(tree) != read}

    def save(self, target: Path, language: str | None = None) -> None:
        """Write the package to `target` (the target language, SlotDocument's second argument, was
        already applied by the writers, which OoxmlDocument's loader hands it to)."""
        write_zip(self.path, target, self.changed())


def core_slots(package: Package, label: str) -> list[Slot]:
    """The title and subject of docProps/core.xml, clipped as Office's 255-character limit wants."""
    core = package.core_properties()
    slots = []
    for name in ("title", "subject"):
        el = core.find(f"{{{DC}}}{name}") if core is not None else None
        if el is not None and (el.text or "").strip():
            def write(t: TranslatedBlock, el: etree._Element = el) -> None:
                el.text = clipped_property("".join(r.text for r in t))
            slots.append(Slot(Block([Run(el.text)], f"{label} {name}"), write, order=0))
    return slots


def mark_core_language(package: Package, language: str | None) -> None:
    """docProps/core.xml's dc:language, where the package has one, set to the target language."""
    core = package.core_properties()
    el = core.find(f"{{{DC}}}language") if core is not None and language else None
    if el is not None:
        el.text = language


class OoxmlDocument(SlotDocument):
    """A SlotDocument whose loader also takes `target_language` (a BCP 47 tag such as "de"; set by
    translate_document from the model), because the writers need it: the translated runs (w:lang, a:rPr
    lang), Word's default style and dc:language get it on save; None leaves every language as it was."""

    def __init__(self, path: Path, load: Callable[[Path, str | None], Loaded]):
        super().__init__(path, lambda source: load(source, getattr(self, "target_language", None)))
