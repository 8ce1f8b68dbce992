"""Persistent app settings (a JSON file in the user config dir) and the log file.

`NMT_DESKTOP_CONFIG_DIR` / `NMT_DESKTOP_LOG_DIR` override the platformdirs locations (tests use
temporary folders). Settings are a plain dict of JSON values; unknown keys are kept.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import platformdirs

from nmt_desktop.core.locations import user_config_dir

APP_NAME = "nmt-desktop"
SETTINGS_FILE = "settings.json"
LOG_FILE = "nmt-desktop.log"
MAX_RECENT = 8

log = logging.getLogger("nmt_desktop.gui")


def config_dir() -> Path:
    return user_config_dir()


def log_dir() -> Path:
    override = os.environ.get("NMT_DESKTOP_LOG_DIR")
    return Path(override) if override else Path(platformdirs.user_log_dir(APP_NAME))


class Settings:
    """Key/value settings backed by `<config dir>/settings.json`; a broken file is replaced by defaults."""

    def __init__(self, folder: str | os.PathLike | None = None):
        self.path = Path(folder or config_dir()) / SETTINGS_FILE
        self.data: dict[str, Any] = {}
        self.load()

    def load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.data = data if isinstance(data, dict) else {}
        except FileNotFoundError:
            self.data = {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable settings file %s: %s", self.path, exc)
            self.data = {}

    def save(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".part")
            tmp.write_text(json.dumps(self.data, indent=2, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:  # settings are a convenience: never crash the app over them
            log.warning("cannot save settings to %s: %s", self.path, exc)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value

    def choice(self, key: str, allowed: Any, default: str) -> str:
        """A saved choice among `allowed` (e.g. the View menu's theme); `default` if missing or unknown."""
        value = self.data.get(key)
        if value is None or value in allowed:
            return default if value is None else str(value)
        log.warning("ignoring unknown %s %r in the settings (using %r)", key, value, default)
        return default

    # -- recent models ---------------------------------------------------------------------------

    @property
    def recent_models(self) -> list[str]:
        value = self.data.get("recent_models", [])
        return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def add_recent_model(self, path: str | os.PathLike) -> None:
        path = str(path)
        recent = [p for p in self.recent_models if p != path]
        self.data["recent_models"] = [path, *recent][:MAX_RECENT]


_log_handler: logging.Handler | None = None


def setup_logging(level: int = logging.INFO) -> Path | None:
    """Log the app to `<log dir>/nmt-desktop.log` (once per process); returns the file or None."""
    global _log_handler
    folder = log_dir()
    path = folder / LOG_FILE
    if _log_handler is not None:
        return path
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("nmt_desktop")
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    _log_handler = handler
    return path
