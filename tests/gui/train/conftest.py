"""What the Train tab's tests share: the app's folders (settings, logs, data) in the test's own tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("NMT_DESKTOP_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NMT_DESKTOP_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "data"))
    return tmp_path
