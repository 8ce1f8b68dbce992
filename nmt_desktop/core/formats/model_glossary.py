"""A model's glossary: where it is kept, and how a model trained or exported from another keeps it.

Two places, the first that exists wins:
- the user's saved glossary, `<config dir>/glossaries/<model folder name>-<hash>/glossary.tsv` (what Save as
  the model's glossary writes). It lives beside the settings rather than in the model folder, which may be
  bundled, read-only or replaced by a download; the hash of the model's resolved path keeps two models whose
  folders share a name ("en-de" bundled and "en-de" downloaded) apart.
- `glossary.tsv` inside the model folder: the glossary the model came with. Training from a parent model
  copies the parent's glossary there (into the run folder and each model folder the run writes), and export
  copies it on, so a fine-tuned model keeps its parent's terms without anyone re-entering them.

The file is copied byte for byte, never parsed here (training and formats sit below core/documents/): a
damaged glossary travels as it is and is reported, by its file and line, when a translation reads it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from nmt_desktop.core.locations import user_config_dir

GLOSSARY_FILE = "glossary.tsv"


def saved_glossary_folder(model_path: str | os.PathLike | None) -> Path:
    """The user's folder for this model's glossary (and the editor's unsaved draft); "no-model" for None."""
    if model_path is None:
        return user_config_dir() / "glossaries" / "no-model"
    resolved = Path(model_path).expanduser().resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8")).hexdigest()[:8]
    name = re.sub(r"[^\w.-]+", "_", resolved.name or "model")[:60]
    return user_config_dir() / "glossaries" / f"{name}-{digest}"


def saved_glossary_path(model_path: str | os.PathLike) -> Path:
    """The file where the user's glossary for the model at `model_path` is saved (it need not exist yet)."""
    return saved_glossary_folder(model_path) / GLOSSARY_FILE


def folder_glossary_path(model_path: str | os.PathLike) -> Path:
    """The glossary a model folder carries (kept from its parent model, or shipped with it)."""
    return Path(model_path) / GLOSSARY_FILE


def model_glossary_file(model_path: str | os.PathLike | None) -> Path | None:
    """The glossary the model uses: the user's saved one, else the one in its folder; None when it has none."""
    if model_path is None:
        return None
    for path in (saved_glossary_path(model_path), folder_glossary_path(model_path)):
        if path.is_file():
            return path
    return None


@dataclass(frozen=True)
class KeptGlossary:
    """A parent model's glossary copied into a new model's folder: where it is now and what the card says."""
    path: Path
    parent: str

    def card_note(self) -> str:
        return f"kept from the parent model {self.parent} ({GLOSSARY_FILE})"


def keep_parent_glossary(parent: str | os.PathLike, folder: str | os.PathLike) -> KeptGlossary | None:
    """Copy the parent model's glossary (model_glossary_file) into `folder` as glossary.tsv; None when the
    parent has none; OSError when it cannot be copied."""
    source = model_glossary_file(parent)
    if source is None:
        return None
    target = Path(folder) / GLOSSARY_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.resolve() != target.resolve():
        shutil.copyfile(source, target)
    return KeptGlossary(target, str(parent))


def carry_glossary(kept: KeptGlossary | None, folder: str | os.PathLike) -> None:
    """Put a kept glossary into another model folder the run or export writes (best/, last/, a snapshot)."""
    if kept is not None:
        shutil.copyfile(kept.path, Path(folder) / GLOSSARY_FILE)


__all__ = ["GLOSSARY_FILE", "KeptGlossary", "carry_glossary", "folder_glossary_path",
           "keep_parent_glossary", "model_glossary_file", "saved_glossary_folder", "saved_glossary_path"]
