"""Writing a translated block back into an OOXML paragraph (WordprocessingML w:p, DrawingML a:p).

Shared by the .docx and .pptx adapters. Runs are moved by permuting their elements among the places
the runs themselves held, so whatever lies between them (bookmarks, breaks, proofing marks) stays put
and no element is added or removed here, except the markers a caller names as a unit's followers (a
footnote reference or a field after the text it belongs to: word_segments.py), which move with it. A run
inside a w:hyperlink moves with its hyperlink (the "unit"); when a translation splits a unit's runs
apart, only the texts are set.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, TranslatedBlock, TranslatedRun

# Substrings of font names that mark inline code (Consolas, Courier New, Fira Code, DejaVu Sans Mono...).
MONOSPACE_HINTS = ("consolas", "courier", "mono", "menlo", "monaco", "lucida console", " code")


def is_monospace(font: str | None) -> bool:
    """Whether a font name looks like a code font (so a run in it is inline code, kept verbatim)."""
    name = f" {font or ''}".lower()
    return any(hint in name for hint in MONOSPACE_HINTS)


@dataclass
class RunSlot:
    """A block's run in the XML: `run` gets the text; `unit` (the run, or its hyperlink) is what moves."""
    run: etree._Element
    unit: etree._Element


def style_key(props: etree._Element | None, noise_tags: Sequence[str] = (),
              noise_attrs: Sequence[str] = ()) -> str | None:
    """The run properties (w:rPr / a:rPr) as canonical XML, without what does not change the look
    (language, proofing state); None when nothing is left (the block's plain text)."""
    if props is None:
        return None
    props = copy.deepcopy(props)
    for child in list(props):
        if child.tag in noise_tags:
            props.remove(child)
    for name in noise_attrs:
        props.attrib.pop(name, None)
    if len(props) == 0 and not props.attrib:
        return None
    return etree.tostring(props, method="c14n").decode()


def permute(elements: Sequence[etree._Element], order: Sequence[int],
            followers: dict[etree._Element, list[etree._Element]] | None = None) -> None:
    """Put elements[order[k]] where elements[k] was (placeholders keep the places while they move); an
    element's `followers` (a footnote reference after the text it belongs to) move right after it."""
    if list(order) == list(range(len(elements))):
        return
    followers = followers or {}
    holders = []
    for element in elements:
        holder = etree.Element("slot")
        element.getparent().replace(element, holder)
        for follower in followers.get(element, []):
            follower.getparent().remove(follower)
        holders.append(holder)
    for holder, index in zip(holders, order):
        holder.getparent().replace(holder, elements[index])
        for follower in reversed(followers.get(elements[index], [])):
            elements[index].addnext(follower)


def write_runs(slots: Sequence[RunSlot], translated: Sequence[TranslatedRun],
               set_text: Callable[[etree._Element, str], None],
               followers: dict[etree._Element, list[etree._Element]] | None = None) -> bool:
    """Set each run's text and move the units into the translated order (a unit's `followers` with it);
    returns False (texts set, order as in the source) when a unit's runs are not together in the
    translation."""
    for run in translated:
        set_text(slots[run.index].run, run.text)
    units: list[etree._Element] = []
    unit_of: list[int] = []
    for slot in slots:
        found = next((u for u, unit in enumerate(units) if unit is slot.unit), None)
        if found is None:
            units.append(slot.unit)
            found = len(units) - 1
        unit_of.append(found)
    order = [run.index for run in translated]
    unit_order = [unit_of[i] for k, i in enumerate(order) if k == 0 or unit_of[order[k - 1]] != unit_of[i]]
    if sorted(unit_order) != list(range(len(units))):
        return False
    permute(units, unit_order, followers)
    for u in range(len(units)):
        members = [i for i in range(len(slots)) if unit_of[i] == u]
        if len(members) > 1:
            permute([slots[i].run for i in members], [members.index(i) for i in order if unit_of[i] == u])
    return True


def never_emptied(block: Block, translated: Sequence[TranslatedRun], marked: Sequence[bool]) -> TranslatedBlock:
    """The translation with each marked run (a superscript or subscript, a footnote marker, a link, a
    tracked insertion) that came back empty given its source text: the alignment found no words for it,
    and an emptied marker or link would vanish from the page while its element stays behind empty."""
    return [TranslatedRun(t.index, block.runs[t.index].text)
            if marked[t.index] and not t.text.strip() and block.runs[t.index].text.strip() else t
            for t in translated]


CORE_PROPERTY_LIMIT = 255  # python-docx and python-pptx refuse longer core properties (title, subject)


def clipped_property(text: str) -> str:
    """A translated core property within the 255 characters the libraries accept (a runaway translation
    of a title must not stop the whole document from saving)."""
    return text if len(text) <= CORE_PROPERTY_LIMIT else text[: CORE_PROPERTY_LIMIT - 1] + "…"
