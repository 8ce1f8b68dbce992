"""Shared pytest configuration and fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Qt must render offscreen in tests; set before any QApplication is created.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

_REPO_ROOT = Path(__file__).resolve().parent.parent

def pytest_configure(config) -> None:
    """Under xdist, each worker's torch gets its share of the cores: N workers each spinning the default
    thread count fight for the same cores (OpenMP threads that wait by spinning make that far slower than
    one thread each), and a fixed thread count also fixes the float rounding of a parallel reduction."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """Under `--dist loadgroup`, a grouped test that xdist did not tag with its group fails before its fixtures:
    pytest 9.2 silently undid the tagging (pytest-xdist#1386), and the bundle tests then ran on two workers, one
    waiting minutes for the other's build. xdist schedules the largest group (the bundle's) first."""
    if (getattr(item.config.option, "loadgroup", False)  # set on xdist workers only
            and item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid.rpartition("]")[2]):
        pytest.fail(f"--dist loadgroup did not group {item.nodeid}: xdist no longer tags its groups "
                    "(pytest-xdist#1386; see the pytest pin in pyproject.toml)", pytrace=False)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the folder holding pyproject.toml)."""
    return _REPO_ROOT


@pytest.fixture(scope="session")
def shared_data(repo_root: Path) -> Path:
    """The shared data folder beside the repository (``../shared/data``); skips if absent."""
    path = repo_root.parent / "shared" / "data"
    if not path.is_dir():
        pytest.skip(f"shared data not found at {path}")
    return path


@pytest.fixture(scope="session")
def tiny_trained():
    """(model, tokenizers): a tiny Transformer trained a few hundred steps on the synthetic task, trained once
    per machine and content (tests/built_once.py) on one thread, so every worker and run reads the same one."""
    from tiny_models import cached_tiny_model

    return cached_tiny_model(steps=300)


@pytest.fixture(scope="session")
def tiny_translator(tiny_trained):
    from nmt_desktop.core.decoding.translator import Translator

    model, tokenizers = tiny_trained
    return Translator(model, tokenizers, name="tiny")


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_trained, tmp_path_factory) -> Path:
    """The trained tiny model saved as a model folder (read-only for tests: copy before editing)."""
    from nmt_desktop.core.formats.model_folder import save_model

    model, tokenizers = tiny_trained
    folder = tmp_path_factory.mktemp("models") / "tiny-en-xx"
    card = {"name": "tiny synthetic", "data": "synthetic word-mapping task (tests/tiny_models.py)"}
    return save_model(folder, model, tokenizers, card)


@pytest.fixture(scope="session")
def marian_repo(tmp_path_factory):
    """A tiny random Marian model in the layout of a Hub repo (tests/hub_stand_in.py), made once."""
    from hub_stand_in import make_marian_repo

    return make_marian_repo(tmp_path_factory.mktemp("marian-repo"))


@pytest.fixture
def hub(marian_repo, tmp_path, monkeypatch):
    """A local Hub stand-in serving `marian_repo` as Helsinki-NLP/opus-mt-en-de, reached through
    HF_ENDPOINT; the user data folder is a fresh temporary one."""
    from hub_stand_in import HubStandIn

    with HubStandIn([marian_repo]) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "user-data"))
        yield server


@pytest.fixture(scope="session", autouse=True)
def _qt_closed_down_at_exit():
    """At the end of the session, the app's own close-down (gui/lifetime.py) for whatever the tests left:
    worker threads joined and widgets deleted before the interpreter exits, as in the app itself."""
    yield
    import sys

    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is not None:
        from nmt_desktop.gui.lifetime import close_down

        close_down()


@pytest.fixture(scope="session")
def frozen_bundle(repo_root, tmp_path_factory) -> Path:
    """dist/nmt-desktop built by packaging/build.sh, once per run (test_packaging and test_deb share it): the
    two run on one xdist worker (BUNDLE_GROUP), and should they not, the second waits for the first's build in the
    run's shared temporary folder instead of building it again (tests/built_once.py)."""
    from built_once import built_once
    from bundle_build import build_bundle

    run_root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_root = run_root.parent  # popen-gwN's parent: one folder for the whole run
    folder = built_once("frozen-bundle", lambda out: build_bundle(repo_root, out), root=run_root)
    return folder / "dist" / "nmt-desktop"
