"""Where a model's own glossary is kept: `<config dir>/glossaries/<model folder name>-<hash>/glossary.tsv`.

A glossary belongs to a language pair and a domain, so it is saved per model (the Translate file dialog offers
it whenever that model is loaded) rather than inside the model folder, which may be bundled, read-only or
replaced by a download. The folder name carries a short hash of the model's resolved path, so two models whose
folders share a name ("en-de" bundled and "en-de" downloaded) keep separate glossaries. The config dir is the
settings' (NMT_DESKTOP_CONFIG_DIR honoured), so tests and portable installs keep glossaries beside settings.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..settings import config_dir

if TYPE_CHECKING:
    from nmt_desktop.core.documents.glossary import Glossary

GLOSSARY_FILE = "glossary.tsv"
log = logging.getLogger("nmt_desktop.gui.glossary")


def model_glossary_path(model_path: str | os.PathLike) -> Path:
    """The file where the model at `model_path` keeps its glossary (it need not exist yet)."""
    resolved = Path(model_path).expanduser().resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8")).hexdigest()[:8]
    name = re.sub(r"[^\w.-]+", "_", resolved.name or "model")[:60]
    return config_dir() / "glossaries" / f"{name}-{digest}" / GLOSSARY_FILE


def saved_model_glossary(model_path: str | os.PathLike | None) -> Path | None:
    """The model's saved glossary file, or None when there is no model or it has none yet."""
    if model_path is None:
        return None
    path = model_glossary_path(model_path)
    return path if path.is_file() else None


def model_glossary(model_path: str | os.PathLike | None) -> "Glossary | None":
    """The model's saved glossary, read (None when it has none; a damaged file is logged and skipped, so
    loading the model still works). The Translate tab forces its terms in (gui/workers.py)."""
    path = saved_model_glossary(model_path)
    if path is None:
        return None
    from nmt_desktop.core.documents.blocks import DocumentError
    from nmt_desktop.core.documents.glossary import Glossary

    try:
        return Glossary.read(path)
    except DocumentError as exc:
        log.warning("the model's glossary is not used: %s", exc)
        return None
