"""Where models live: the bundled `models/` folder, the user's data folder, and name lookup; where
the app's own files are (the repository, or the frozen app's folder) and how to run its CLI."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Callable

import platformdirs

APP_NAME = "nmt-desktop"


log = logging.getLogger(__name__)


class ModelNotFoundError(ValueError):
    """A model given by name is neither a path nor a bundled or user model."""


class RunWithoutModelError(ModelNotFoundError):
    """A training run's folder given as a model holds no complete model yet."""


def is_frozen() -> bool:
    """True inside a packaged (PyInstaller) app, where sys.executable is the app itself."""
    return bool(getattr(sys, "frozen", False))


def app_root() -> Path:
    """The folder holding `models/` and `resources/`: the frozen app's data folder (PyInstaller's
    `sys._MEIPASS`, `_internal/` beside the binary) or, from source, the repository."""
    if is_frozen():
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).resolve().parent))
    return Path(__file__).resolve().parents[2]


def bundled_models_dir() -> Path:
    """The repository's (or frozen app's) `models/` folder; `NMT_DESKTOP_MODELS_DIR` overrides it
    (a packager's shared models folder, or tests that need no bundled model)."""
    override = os.environ.get("NMT_DESKTOP_MODELS_DIR")
    return Path(override) if override else app_root() / "models"


def resources_dir() -> Path:
    """The repository's (or frozen app's) `resources/` folder (icons)."""
    return app_root() / "resources"


def app_icon_path() -> Path:
    return resources_dir() / "icons" / "nmt-desktop.png"


def third_party_notices_path() -> Path | None:
    """THIRD_PARTY_NOTICES.txt, which packaging/notices.py writes beside the frozen binary (the licences of
    everything bundled, the app's own MIT text first): for Help > Third-party notices. None from source,
    where no bundle exists to describe (the LICENSE file is then the one that applies)."""
    if not is_frozen():
        return None
    path = Path(sys.executable).resolve().parent / "THIRD_PARTY_NOTICES.txt"
    return path if path.is_file() else None


def cli_command(*args: str) -> list[str]:
    """The argv that runs `nmt-desktop ARGS...` in a child process.

    From source: this Python with `-m nmt_desktop`. Frozen: the app binary itself, whose entry point
    dispatches subcommands exactly like the `nmt-desktop` script (there is no Python to pass `-m` to).
    """
    if is_frozen():
        return [sys.executable, *args]
    return [sys.executable, "-m", "nmt_desktop", *args]


def user_data_dir() -> Path:
    """The user's data folder (platformdirs); `NMT_DESKTOP_DATA_DIR` overrides it (tests, portable use)."""
    override = os.environ.get("NMT_DESKTOP_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))


def user_config_dir() -> Path:
    """The user's settings folder (platformdirs): settings.json and the models' saved glossaries;
    `NMT_DESKTOP_CONFIG_DIR` overrides it (tests, portable use)."""
    override = os.environ.get("NMT_DESKTOP_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def user_models_dir() -> Path:
    return user_data_dir() / "models"


def user_runs_dir() -> Path:
    return user_data_dir() / "runs"


DEFAULT_MODEL = "en-de"  # the bundled model used when none is named


def bundled_models() -> list[Path]:
    """Bundled model folders (those holding a config.json) and zips, sorted by name."""
    folder = bundled_models_dir()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if (p / "config.json").is_file() or p.suffix.lower() == ".zip")


def default_model_path() -> Path | None:
    """The bundled English->German model if present, else the first bundled model, else None."""
    models = bundled_models()
    for p in models:
        if p.name in (DEFAULT_MODEL, DEFAULT_MODEL + ".zip"):
            return p
    return models[0] if models else None


def model_search_dirs() -> list[Path]:
    """Folders searched for a model given by bare name, in order."""
    return [bundled_models_dir(), user_models_dir()]


# A training run's folder (core/training/train.py): these files beside its `best/` and `last/` model folders.
RUN_MARKERS = ("train_config.toml", "events.jsonl")
RUN_MODELS = (("best", "the run's best model"), ("last", "the run's last checkpoint"))


def is_run_folder(path: Path) -> bool:
    """A training run's folder rather than a model folder: no config.json of its own, but a run's files."""
    return (path.is_dir() and not (path / "config.json").is_file()
            and any((path / name).exists() for name in (*RUN_MARKERS, *(m for m, _ in RUN_MODELS))))


def run_model_path(run: Path) -> tuple[Path, str]:
    """The model a run folder stands for, `best/` else `last/` (a complete one: its config.json, written last,
    is there), and the line that says so; RunWithoutModelError when it has neither yet."""
    for name, what in RUN_MODELS:
        if (run / name / "config.json").is_file():
            return run / name, f"using {run / name} ({what})"
    raise RunWithoutModelError(f"training run '{run}' has no complete model yet (neither best/ nor last/ holds one): "
                               "open it again after its first evaluation or checkpoint")


def resolve_model_path(arg: str, say: Callable[[str], None] = log.info) -> Path:
    """The model folder or .zip meant by `arg`.

    An existing path, or anything that looks like a path (a separator, or ending in .zip), is
    returned as is (loading reports it if missing), except a training run's folder, which stands
    for its best model, else its last (`say` gets the one line naming it). A bare name is looked up
    as NAME or NAME.zip in `model_search_dirs()`.
    """
    path = Path(arg).expanduser()
    looks_like_path = (os.sep in arg or (os.altsep is not None and os.altsep in arg)
                       or arg.lower().endswith(".zip") or arg in (".", ".."))
    if is_run_folder(path):
        model, line = run_model_path(path)
        say(line)
        return model
    if path.exists() or looks_like_path:
        return path
    dirs = model_search_dirs()
    for folder in dirs:
        for candidate in (folder / arg, folder / f"{arg}.zip"):
            if candidate.exists():
                return candidate
    raise ModelNotFoundError(f"model '{arg}' not found: not a path, and not in {' or '.join(str(d) for d in dirs)}")
