"""Fixtures for tests that drive the real main window (offscreen): a private settings folder and a window
on the tiny model whose error boxes are recorded instead of shown."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from limits import TIMEOUT_MS


@pytest.fixture
def config_dir(tmp_path, monkeypatch) -> Path:
    """Settings and logs in a temporary folder; the theme is reset to light afterwards."""
    folder = tmp_path / "config"
    monkeypatch.setenv("NMT_DESKTOP_CONFIG_DIR", str(folder))
    monkeypatch.setenv("NMT_DESKTOP_LOG_DIR", str(tmp_path / "logs"))
    yield folder
    from nmt_desktop.gui import theme

    theme.apply("light", theme.DEFAULT_COLORMAP)


@pytest.fixture
def app_dirs(config_dir, tmp_path) -> Path:
    """Settings and logs as `config_dir`; the temporary folder itself, for what a test writes (screenshots)."""
    return tmp_path


@pytest.fixture
def open_main_window(qtbot, config_dir) -> Callable:
    """open_main_window(model or None) -> a shown MainWindow (model loaded); `window.shown_errors` lists the
    one-sentence errors it would have shown in a box."""
    from nmt_desktop.gui.app import MainWindow

    def open_window(model=None):
        window = MainWindow(model=None if model is None else str(model))
        window.shown_errors = []
        window.show_error = lambda message, title="Error": window.shown_errors.append(message)
        qtbot.addWidget(window)
        window.show()
        if model is not None:
            qtbot.waitUntil(lambda: window.info is not None, timeout=TIMEOUT_MS)
        return window

    return open_window


@pytest.fixture
def panel(qtbot):
    """A shown Translate panel with no model (a test module may define its own `panel` instead)."""
    from nmt_desktop.gui.translate import TranslatePanel

    panel = TranslatePanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    panel.show()
    yield panel
    panel.shutdown()


@pytest.fixture
def slowed_batches(monkeypatch) -> None:
    """Each decoded batch takes at least 50 ms: the tiny model would otherwise finish a long document before a
    click on Cancel arrives on a busy machine (a race the full suite lost)."""
    import time

    from nmt_desktop.core.decoding.translator import Translator

    translate_units = Translator.translate_units

    def slowed(self, *args, **kwargs):
        time.sleep(0.05)
        return translate_units(self, *args, **kwargs)

    monkeypatch.setattr(Translator, "translate_units", slowed)
