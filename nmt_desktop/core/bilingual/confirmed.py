"""Saving a translator's confirmed segments into the bilingual file (issue 44): `save_confirmed`.

The desk (gui/desk/) keeps what the translator confirmed as unit id -> plain text. Each of those units is
written as a person's translation in the format's own terms, by its Pending's `confirm` (xliff1.py,
xliff2.py, po.py): XLIFF 1.2 state="final", XLIFF 2 state="final", PO without the fuzzy flag; the marks this
app wrote for the machine's output go, other tools' stay, and every other unit is left as it was. Where the
source has inline tags, they are put on the typed words (tag_placement.py: by the model's alignment with a
translator, else by position). The file is replaced atomically: written complete to a temporary file in its
folder, fsync'd, then renamed over it (os.replace), so a crash leaves either the old file or the new one whole.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from nmt_desktop.core.bilingual.inline_segments import PLACEHOLDER
from nmt_desktop.core.bilingual.reading import open_document
from nmt_desktop.core.bilingual.tag_placement import TagPlacer
from nmt_desktop.core.bilingual.units import BilingualUnit
from nmt_desktop.core.documents.blocks import DocumentError

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator


@dataclass(frozen=True)
class ConfirmedSave:
    """What a save did: how many segments it wrote as confirmed; how the tags of tagged segments were placed
    ("alignment" by the model, "position", or "none": no tagged segment); the file written; and per unit id,
    the source's placeholders (%d, {0}) missing from the confirmed text (not put back: the desk flags them)."""
    written: int
    tags_placed_by: str
    path: Path
    missing_placeholders: dict[str, list[str]] = field(default_factory=dict)


def save_confirmed(path: Path, confirmed: Mapping[str, str], translator: "Translator | None" = None,
                   out: Path | None = None) -> ConfirmedSave:
    """Write `confirmed` (BilingualUnit.id as read_bilingual gives it -> the translator's plain text) into the
    bilingual file at `path` as confirmed translations, over it (atomically) or to `out`. DocumentError (one
    sentence) for an id the file lacks, a unit marked not to translate, an empty text, or a file that cannot
    be read or written."""
    path = Path(path)
    out = Path(out) if out is not None else path
    document = open_document(path)
    units: dict[str, list[BilingualUnit]] = {}
    for p in document.pending:
        for unit in (p.unit, *p.others):
            units.setdefault(unit.id, []).append(unit)
    for unit_id, text in confirmed.items():
        if unit_id not in units:
            raise DocumentError(f"{path.name} has no unit with the id {unit_id!r}: nothing was saved")
        unit = units[unit_id][0]
        if not unit.translatable:
            raise DocumentError(f"{path.name}: unit {unit_id!r} is marked not to translate: nothing was saved")
        if not text.strip() and unit.source.strip():
            raise DocumentError(f"{path.name}: the confirmed translation of unit {unit_id!r} is empty: nothing was saved")
    placer = TagPlacer(translator)
    for p in document.pending:
        if any(unit.id in confirmed for unit in (p.unit, *p.others)):
            if p.confirm is None:
                raise DocumentError(f"{path.name}: {document.file.format} segments cannot be saved as confirmed")
            p.confirm(confirmed, placer.place)
    placer.write_all()
    _write_atomically(out, document.finish, path)
    missing = {}
    for unit_id, text in confirmed.items():
        wanted = PLACEHOLDER.findall(units[unit_id][0].source)
        lacking = Counter(wanted) - Counter(PLACEHOLDER.findall(text))
        if lacking:
            missing[unit_id] = [p for p in dict.fromkeys(wanted) if p in lacking]
    written = sum(len(units[unit_id]) for unit_id in confirmed)
    return ConfirmedSave(written, placer.by, out, missing)


def _write_atomically(out: Path, write: Callable[[Path], None], source: Path) -> None:
    """write(temporary) in out's folder, fsync'd and renamed over `out`, with the permissions `out` (else
    `source`) has; the temporary file removed on failure."""
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".saving", dir=out.parent)
    os.close(fd)
    temporary = Path(name)
    try:
        write(temporary)
        mode = stat.S_IMODE((out if out.exists() else source).stat().st_mode)
        os.chmod(temporary, mode)
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(temporary, out)
        _fsync_folder(out.parent)
    except DocumentError:
        raise
    except OSError as exc:
        raise DocumentError(f"cannot write {out.name}: {exc.strerror or exc}") from None
    finally:
        temporary.unlink(missing_ok=True)


def _fsync_folder(folder: Path) -> None:
    """The rename made durable (POSIX: the folder's entry); where folders cannot be opened, nothing."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
