"""The desk's journal: each confirmed segment appended as a JSON line and fsync'd before the desk moves on, so
a crash or kill -9 between saves of the file loses no confirmation. One journal per file, named by a hash of
its resolved path, in `user_data_dir()/desk-journal/`; reopening the file replays it; a save forgets the
confirmations it wrote (`forget`), only those: one made while the save ran stays for the next."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping


@dataclass(frozen=True)
class Confirmation:
    """A segment confirmed in the desk: the unit's id and the translation the person approved."""
    unit_id: str
    target: str


def journal_dir() -> Path:
    from nmt_desktop.core.locations import user_data_dir

    return user_data_dir() / "desk-journal"


class Journal:
    """The journal of one bilingual file (see the module docstring)."""

    def __init__(self, file: Path, folder: Path | None = None):
        self.file = Path(file).resolve()
        digest = hashlib.sha256(str(self.file).encode("utf-8")).hexdigest()[:16]
        self.path = (folder or journal_dir()) / f"{digest}.jsonl"

    def append(self, confirmation: Confirmation) -> None:
        """Write one confirmation and fsync it before returning."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = self._line(confirmation)
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())

    def entries(self) -> list[Confirmation]:
        """The confirmations in order, the last of a unit winning; a torn last line (the kill came mid-write)
        is skipped, nothing before it."""
        if not self.path.exists():
            return []
        latest: dict[str, Confirmation] = {}
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                latest[row["id"]] = Confirmation(str(row["id"]), str(row["target"]))
            except (ValueError, KeyError, TypeError):
                continue
        return list(latest.values())

    def forget(self, saved: Mapping[str, str]) -> None:
        """Drop the confirmations the file now holds (unit id -> the translation saved), the others rewritten
        atomically (a temporary file fsync'd, then renamed over the journal), so a crash at any point leaves
        either the old journal or the new one, never a torn one. A unit confirmed again since keeps its
        newer entry."""
        kept = [c for c in self.entries() if saved.get(c.unit_id) != c.target]
        if not kept:
            self.path.unlink(missing_ok=True)
            return
        temporary = self.path.with_suffix(".tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            for confirmation in kept:
                out.write(self._line(confirmation) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)

    def _line(self, confirmation: Confirmation) -> str:
        return json.dumps({"file": str(self.file), "id": confirmation.unit_id, "target": confirmation.target},
                          ensure_ascii=False)
