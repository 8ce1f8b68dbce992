"""The Models tab's "Get models…" dialog (real widgets offscreen, pytest-qt) against the local Hub stand-in:
search, download with progress, load with one click, Cancel, and the offline catalogue."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, Qt, Slot  # noqa: E402

from nmt_desktop.core.locations import user_models_dir  # noqa: E402
from nmt_desktop.gui.models.get_models_dialog import progress_text  # noqa: E402
from nmt_desktop.gui.models.panel import ModelsPanel  # noqa: E402

REPO = "Helsinki-NLP/opus-mt-en-de"


class Stages(QObject):
    """Lives in the GUI thread: the pull worker's progress signals are queued here."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    @Slot(int, object)
    def on_progress(self, _request_id: int, progress: object) -> None:
        self.seen.append(progress.stage)


@pytest.fixture
def panel(qtbot, hub, monkeypatch, tmp_path):
    monkeypatch.setenv("NMT_DESKTOP_MODELS_DIR", str(tmp_path / "no-bundled-models"))
    p = ModelsPanel()
    qtbot.addWidget(p)
    yield p
    p.shutdown()


def _search(qtbot, dialog, query: str) -> None:
    dialog.query.setText(query)
    qtbot.mouseClick(dialog.search_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: dialog.search_button.isEnabled(), timeout=30000)


def test_search_download_and_load_in_three_clicks(qtbot, panel, hub):
    panel.show()
    qtbot.mouseClick(panel.get_button, Qt.LeftButton)  # the README's first click
    dialog = panel.dialog
    assert dialog.isVisible() and panel.get_button.toolTip()
    _search(qtbot, dialog, "English German")
    assert dialog.table.rowCount() == 1
    assert [dialog.table.item(0, c).text() for c in (0, 1, 3)] == [REPO, "English → German", "cc-by-4.0"]
    assert "on the Hugging Face Hub" in dialog.status.text()

    stages = Stages()
    dialog.puller.progress.connect(stages.on_progress)  # queued into this (the GUI) thread
    with qtbot.waitSignal(dialog.modelInstalled, timeout=60000) as installed:
        qtbot.mouseClick(dialog.download_button, Qt.LeftButton)
        assert dialog.cancel_button.isEnabled() and not dialog.download_button.isEnabled()
    path = installed.args[0]
    assert path == str(user_models_dir() / "opus-mt-en-de")
    qtbot.waitUntil(lambda: "done" in stages.seen, timeout=10000)
    assert "download" in stages.seen and "convert" in stages.seen
    assert dialog.progress.value() == 1000 and "Installed opus-mt-en-de" in dialog.progress_label.text()
    labels = [panel.bundled_list.item(i).text() for i in range(panel.bundled_list.count())]
    assert "opus-mt-en-de  (installed)" in labels  # the Models tab refreshed its list

    with qtbot.waitSignal(panel.modelLoaded, timeout=60000) as loaded:
        qtbot.mouseClick(dialog.load_button, Qt.LeftButton)
    translator, info = loaded.args
    assert info.name == "opus-mt-en-de" and info.heads == 2 and not dialog.isVisible()
    assert info.card["hub_repo"] == REPO


def test_cancel_installs_nothing_and_the_window_stays_responsive(qtbot, panel, hub):
    hub.delay_s = 1.0  # every file's first chunk waits: the download is still running when we cancel
    dialog = panel.get_models_dialog("en de")
    _search(qtbot, dialog, "en de")
    dialog.download()
    qtbot.waitUntil(lambda: dialog.progress.maximum() == 1000, timeout=30000)  # bytes are arriving
    qtbot.mouseClick(dialog.query, Qt.LeftButton)  # the GUI thread is free while the worker downloads
    qtbot.mouseClick(dialog.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: "nothing was installed" in dialog.progress_label.text(), timeout=30000)
    assert not user_models_dir().exists() or not any(user_models_dir().iterdir())
    assert dialog.download_button.isEnabled() and not dialog.load_button.isEnabled()


def test_failures_show_one_line_and_offline_uses_the_catalogue(qtbot, panel, hub, monkeypatch):
    hub.corrupt.add("model.safetensors")
    dialog = panel.get_models_dialog()
    _search(qtbot, dialog, "de")
    dialog.download(REPO)
    qtbot.waitUntil(lambda: "corrupt" in dialog.progress_label.text(), timeout=60000)
    assert dialog.progress_label.text().startswith("⚠") and not any(user_models_dir().iterdir())

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{s.getsockname()[1]}")
    s.close()
    _search(qtbot, dialog, "en de")
    assert "cannot reach the Hugging Face Hub" in dialog.status.text()
    assert "catalogue shipped with the app" in dialog.status.text()
    assert REPO in [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())]


def test_progress_text_shows_size_speed_and_eta():
    from nmt_desktop.core.hub.pull import PullProgress

    text = progress_text(PullProgress("download", 12_300_000, 298_000_000, "model.safetensors", 4_200_000, 65))
    assert text == "12.3 MB of 298.0 MB · 4.2 MB/s · 1:05 left"
    assert progress_text(PullProgress("convert")).startswith("Converting")


def test_enter_in_the_query_searches_and_never_downloads(qtbot, panel, hub):
    dialog = panel.get_models_dialog()
    dialog.query.setText("en de")
    dialog.query.setFocus()
    qtbot.keyClick(dialog.query, Qt.Key_Return)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=30000)
    qtbot.keyClick(dialog.query, Qt.Key_Return)  # a row is selected now: Enter still only searches
    qtbot.waitUntil(lambda: dialog.search_button.isEnabled(), timeout=30000)
    assert not dialog.pulling and not any("/resolve/" in p for _m, p, _r in hub.requests)
