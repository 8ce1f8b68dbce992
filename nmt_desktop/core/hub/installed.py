"""Models the user installed (pulled from the Hub, or copied) into the user data folder's `models/`,
listed beside the bundled ones, and removed by name."""

from __future__ import annotations

import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from nmt_desktop.core.hub.client import HubError
from nmt_desktop.core.locations import bundled_models_dir, user_models_dir

__all__ = ["InstalledModel", "list_models", "remove_model"]


@dataclass
class InstalledModel:
    name: str
    path: Path
    bundled: bool  # shipped with the app (read-only) rather than installed by the user
    size_bytes: int
    languages: str  # "en -> de", "" when the config does not say
    source: str  # the Hub repo it was pulled from, or "bundled" / ""
    license: str


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe(path: Path, bundled: bool) -> InstalledModel:
    from nmt_desktop.core.formats.model_folder import model_size_bytes

    config, card = _read_json(path / "config.json"), _read_json(path / "card.json")
    src, tgt = str(config.get("src_lang", "") or ""), str(config.get("tgt_lang", "") or "")
    try:
        size = model_size_bytes(path)
    except Exception:  # noqa: BLE001 - an unreadable folder is still listed, with size 0
        size = 0
    source = str(card.get("hub_repo") or ("bundled" if bundled else ""))
    return InstalledModel(path.name, path, bundled, size, f"{src} -> {tgt}" if src or tgt else "", source,
                          str(card.get("license", "") or ""))


def _folders(folder: Path) -> list[Path]:
    try:
        return sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
                       and (p / "config.json").is_file()), key=lambda p: p.name)
    except OSError:
        return []


def list_models() -> list[InstalledModel]:
    """Bundled models first, then the user's, each sorted by name."""
    return ([_describe(p, True) for p in _folders(bundled_models_dir())]
            + [_describe(p, False) for p in _folders(user_models_dir())])


def remove_model(name: str) -> Path:
    """Delete the user-installed model `name`; bundled models and other paths are refused."""
    folder = user_models_dir()
    target = folder / name
    if "/" in name or "\\" in name or name in ("", ".", "..") or not (target / "config.json").is_file():
        if (bundled_models_dir() / name / "config.json").is_file():
            raise HubError(f"{name} is a bundled model and cannot be removed")
        names = ", ".join(p.name for p in _folders(folder)) or "none"
        raise HubError(f"no installed model named {name!r} in {folder} (installed: {names})")
    # rename first, so a half-deleted folder never looks like a model
    trash = folder / f".removed-{name}-{uuid.uuid4().hex[:8]}"
    target.rename(trash)
    shutil.rmtree(trash, ignore_errors=True)
    return target
