"""The glossary editor's draft: the rows typed but not yet saved, kept on disk so a crash, a quit or a closed
laptop never loses them. It sits beside the model's saved glossary (`<config dir>/glossaries/<model>-<hash>/
draft.json`, "no-model" without one) and holds the rows exactly as typed, half-filled ones too, which a
glossary file could not. The editor writes it a moment after each change, restores it on the next open, and
removes it on Save or Discard.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from nmt_desktop.core.formats.model_glossary import saved_glossary_folder

DRAFT_FILE = "draft.json"
Row = tuple[str, str, str]
log = logging.getLogger("nmt_desktop.gui.glossary")


@dataclass(frozen=True)
class SavedDraft:
    rows: list[Row]
    written: str  # when, as the user reads it ("2024-05-01 14:03")


@dataclass(frozen=True)
class GlossaryDraft:
    path: Path

    @classmethod
    def for_model(cls, model_path: str | os.PathLike | None) -> GlossaryDraft:
        return cls(saved_glossary_folder(model_path) / DRAFT_FILE)

    def read(self) -> SavedDraft | None:
        """The draft's rows, or None when there is none (an unreadable one is logged and left in place)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            rows = [tuple(str(cell) for cell in row[:3]) + ("",) * (3 - len(row[:3])) for row in data["rows"]]
            return SavedDraft(rows, str(data.get("written", "")))  # type: ignore[arg-type]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("the glossary draft %s cannot be read: %s", self.path, exc)
            return None

    def write(self, rows: list[Row]) -> None:
        """Keep `rows` (via a temporary file and rename, so a crash mid-write leaves the previous draft)."""
        data = {"rows": [list(row) for row in rows], "written": datetime.now().strftime("%Y-%m-%d %H:%M")}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".part")
            tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("cannot keep the glossary draft in %s: %s", self.path, exc)

    def remove(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cannot remove the glossary draft %s: %s", self.path, exc)
