"""PO and POT (gettext) read and written with polib: msgctxt, plurals filled per the file's Plural-Forms
(msgstr[n] for each of its nplurals forms), references, flags, comments and obsolete entries kept.

An entry filled by the model gets the fuzzy flag (to be reviewed) and a translator comment with the trust
estimate (one a translation memory gave, an exact match, no fuzzy flag; the memory's fuzzy matches are
translator comments too); the header's Language is set where empty (Plural-Forms too, for a language the table knows) and
PO-Revision-Date is now. Each line of a msgid is a block of its own, so its line breaks stay where they
were; software placeholders (%d, %(name)s, {0}) come back unchanged (inline_segments.text_pieces).

An entry a person confirmed (confirmed.py) gets the texts as typed (msgstr, or msgstr[n] per plural form);
once all its forms are confirmed, the fuzzy flag, the previous msgid (#| lines, which only a fuzzy entry
needs) and this app's translator comments go.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

import polib

from nmt_desktop.core.bilingual.bilingual_document import BilingualDocument, Pending, Place, Review
from nmt_desktop.core.bilingual.inline_segments import settled, text_pieces
from nmt_desktop.core.bilingual.units import BilingualFile, BilingualUnit
from nmt_desktop.core.documents.blocks import Block, DocumentError, Run, TranslatedBlock

NAME = "PO"
# how the translator comments this module writes start (Trust.note, MemoryMatch.note, Review.MEMORY_NOTE): an
# earlier run's are replaced
OUR_NOTES = ("machine translation (nmt-desktop)", "translation memory")
# Plural-Forms written where a file has none (gettext's own table for these languages)
PLURAL_FORMS = {
    "de": "nplurals=2; plural=(n != 1);", "en": "nplurals=2; plural=(n != 1);", "nl": "nplurals=2; plural=(n != 1);",
    "es": "nplurals=2; plural=(n != 1);", "it": "nplurals=2; plural=(n != 1);", "fr": "nplurals=2; plural=(n > 1);",
    "pt": "nplurals=2; plural=(n != 1);", "ja": "nplurals=1; plural=0;", "zh": "nplurals=1; plural=0;",
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "pl": "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
}


def nplurals(header: str) -> int | None:
    """The number of plural forms a Plural-Forms header says, or None."""
    m = re.search(r"nplurals\s*=\s*(\d+)", header or "")
    return int(m.group(1)) if m else None


def read_po(path: Path) -> polib.POFile:
    if not path.exists():
        raise DocumentError(f"{path} does not exist")
    if not path.is_file():
        raise DocumentError(f"{path.name} is a folder, not a PO file")
    try:
        return polib.pofile(str(path), wrapwidth=78)
    except (OSError, ValueError, UnicodeError) as exc:
        line = re.search(r"\(line (\d+)\)", str(exc))
        if line:
            raise DocumentError(f"{path.name} line {line.group(1)} is not PO syntax: not a readable PO file") from None
        raise DocumentError(f"{path.name} is not a readable PO file ({str(exc).splitlines()[0]})") from None


def open_document(path: str | Path) -> BilingualDocument:
    path = Path(path)
    po = read_po(path)
    language = po.metadata.get("Language", "")
    forms = nplurals(po.metadata.get("Plural-Forms", "")) or nplurals(PLURAL_FORMS.get(language.split("_")[0], ""))
    units, pending, written = [], [], []
    for entry in po:
        if entry.obsolete:
            continue  # written back as it was
        entry_units = _units(entry, forms or 2)
        units += entry_units
        pending.append(_pending(entry, entry_units, forms, written))
    info = BilingualFile(path, NAME, po.metadata.get("X-Source-Language", ""), language, units)

    def finish(out: Path, target: str | None) -> None:
        if target and not po.metadata.get("Language"):
            po.metadata["Language"] = target
        plural = PLURAL_FORMS.get((po.metadata.get("Language") or "").split("_")[0].split("-")[0])
        if plural and nplurals(po.metadata.get("Plural-Forms", "")) is None:  # none, or a POT's "nplurals=INTEGER"
            po.metadata["Plural-Forms"] = plural
        count = nplurals(po.metadata.get("Plural-Forms", ""))
        for entry in (e for e in written if e.msgid_plural):  # as many forms as the language has
            forms = entry.msgstr_plural
            entry.msgstr_plural = {n: forms.get(n, forms[max(forms)]) for n in range(count or len(forms))}
        if "CHARSET" in po.metadata.get("Content-Type", ""):
            po.metadata["Content-Type"] = "text/plain; charset=UTF-8"
            po.encoding = "utf-8"
        po.metadata["PO-Revision-Date"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M+0000")
        po.save(str(out))

    return BilingualDocument(path, info, pending, finish)


def _units(entry: polib.POEntry, forms: int) -> list[BilingualUnit]:
    confirmed = entry.translated()  # polib: every form filled, not fuzzy, not obsolete
    state = "fuzzy" if entry.fuzzy else "translated" if confirmed else "untranslated"
    context = " | ".join(x for x in (entry.msgctxt or "", entry.comment or "") if x)
    unit_id = (f"{entry.msgctxt}\x04" if entry.msgctxt else "") + entry.msgid
    if not entry.msgid_plural:
        return [BilingualUnit(unit_id, entry.msgid, entry.msgstr, confirmed, state, context)]
    count = max(forms, len(entry.msgstr_plural))
    return [BilingualUnit(f"{unit_id}[{n}]", entry.msgid if n == 0 else entry.msgid_plural,
                          entry.msgstr_plural.get(n, ""), confirmed, state, context, plural=n) for n in range(count)]


def _line_blocks(text: str, where: str) -> tuple[list[str], list[int]]:
    """A text cut at its line breaks (kept as parts of their own) and the indices of parts with words."""
    parts = re.split(r"(\n)", text)
    return parts, [i for i, part in enumerate(parts) if part.strip()]


def _pending(entry: polib.POEntry, units: list[BilingualUnit], forms: int | None, written: list) -> Pending:
    """The entry's blocks (each line of msgid, then of msgid_plural) and its writer, which adds the entry to
    `written` (the file's finish gives a filled plural entry as many forms as the target language has)."""
    where = f"line {entry.linenum}"
    texts = [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural else [])
    cut = [_line_blocks(text, where) for text in texts]
    blocks = [Block([Run(piece, None, verbatim) for piece, verbatim in text_pieces(parts[i])], f"msgid {where}")
              for parts, wanted in cut for i in wanted]

    def write(translated: Sequence[TranslatedBlock], review: Review) -> None:
        out, cursor = [], 0
        for parts, wanted in cut:
            parts = list(parts)
            for i in wanted:
                runs = settled(blocks[cursor].runs, translated[cursor])
                parts[i] = "".join(run.text for run in runs)
                cursor += 1
            out.append("".join(parts))
        if entry.msgid_plural:
            count = max(forms or 2, len(entry.msgstr_plural))
            entry.msgstr_plural = {n: out[0] if n == 0 else out[1] for n in range(count)}
        else:
            entry.msgstr = out[0]
        written.append(entry)
        if not review.from_memory and "fuzzy" not in entry.flags:
            entry.flags.append("fuzzy")
        if review.from_memory and "fuzzy" in entry.flags:  # an exact memory match: someone's confirmed translation
            entry.flags.remove("fuzzy")
        notes = ([Review.MEMORY_NOTE] if review.from_memory else []) + ([review.trust.note] if review.trust else []) \
            + [m.note for m in review.matches]
        entry.tcomment = "\n".join(_their_notes(entry) + notes)

    def confirm(texts: Mapping[str, str], _place: Place) -> None:
        if entry.msgid_plural:
            forms = dict(entry.msgstr_plural)
            forms.update({u.plural: texts[u.id] for u in units if u.id in texts})
            entry.msgstr_plural = dict(sorted(forms.items()))
        else:
            entry.msgstr = texts[units[0].id]
        if all(u.id in texts for u in units):
            if "fuzzy" in entry.flags:
                entry.flags.remove("fuzzy")
            entry.previous_msgctxt = entry.previous_msgid = entry.previous_msgid_plural = None
            entry.tcomment = "\n".join(_their_notes(entry))

    filled = all(u.target.strip() for u in units)  # a fuzzy entry's msgstr is someone's work: kept too
    return Pending(units[0], blocks if entry.msgid.strip() else [], write, filled=filled, others=units[1:],
                   confirm=confirm)


def _their_notes(entry: polib.POEntry) -> list[str]:
    """The entry's translator comment lines, less this app's (OUR_NOTES)."""
    return [line for line in (entry.tcomment or "").split("\n") if line and not line.startswith(OUR_NOTES)]
