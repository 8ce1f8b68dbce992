"""Where a model's glossary is kept, for the GUI: the core's places (core/formats/model_glossary.py), the
user's saved glossary under the settings' config dir first, else the one the model folder carries (kept from
the model it was fine-tuned from). Save as the model's glossary always writes the user's file, since the model
folder may be bundled or read-only.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from nmt_desktop.core.formats.model_glossary import model_glossary_file, saved_glossary_path

if TYPE_CHECKING:
    from nmt_desktop.core.documents.glossary import Glossary

log = logging.getLogger("nmt_desktop.gui.glossary")


def model_glossary_path(model_path: str | os.PathLike) -> Path:
    """The file Save as the model's glossary writes for the model at `model_path` (it need not exist yet)."""
    return saved_glossary_path(model_path)


def saved_model_glossary(model_path: str | os.PathLike | None) -> Path | None:
    """The glossary the model uses (the user's saved one, else its folder's), or None when it has none."""
    return model_glossary_file(model_path)


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
