"""Every control of the real main window, used the way a user uses it (issue 29).

The window is opened on the tiny model with a translation shown. Then every tab, every Analysis view and
every dialog reachable from them is visited, and on each page every visible, enabled push button, tool
button, check box and radio button is clicked (`QTest.mouseClick`), every combo box is stepped through its
items (`setCurrentIndex`, as the arrow keys do) and every menu action is triggered: never a slot called by
name. Modal dialogs (file pickers, questions, error boxes) are answered "cancel"/"no" by a timer. The test
fails on any exception that reaches `sys.excepthook` (pytest-qt's capture) or any warning Qt's message
handler receives.

The first version of this test failed on the Models tab's "Get models…" button: its `clicked(bool)` handed
`False` to `get_models_dialog(query)`, and `QLineEdit(False)` raised a TypeError that reached only the log.
"""

from __future__ import annotations

from typing import Iterator

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, Qt, QTimer, QtMsgType, qInstallMessageHandler  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import (QAbstractButton, QApplication, QComboBox, QDialog, QFileDialog,  # noqa: E402
                               QMenu, QMessageBox, QTabWidget, QWidget)

TEXT = "red cat runs\nblue dog sleeps"
# Buttons a click-through must not press: they end the session under test (File > Quit is triggered last).
NEVER_CLICK = {"Quit"}
QUIET = ("propagateSizeHints", "This plugin does not support")  # offscreen-platform chatter


class QtMessages:
    """Qt's warnings and errors while installed (the app's own handler is put back afterwards)."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.previous = None

    def __enter__(self) -> "QtMessages":
        self.previous = qInstallMessageHandler(self.handle)
        return self

    def handle(self, mode: QtMsgType, _context: object, message: str) -> None:
        if mode in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg) \
                and not any(q in message for q in QUIET):
            self.messages.append(message)

    def __exit__(self, *exc: object) -> None:
        qInstallMessageHandler(self.previous)


class ModalCloser:
    """Answers every modal dialog as a cautious user does (Cancel, No, Close) from a timer; records titles."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.timer = QTimer()
        self.timer.timeout.connect(self.close_modal)
        self.timer.start(30)

    def close_modal(self) -> None:
        popup = QApplication.activePopupWidget()  # a button's drop-down menu (Export ▾): its items are menu actions
        if popup is not None:
            self.seen.append(f"{type(popup).__name__}")
            popup.close()
            return
        widget = QApplication.activeModalWidget()
        if widget is None:
            return
        self.seen.append(f"{type(widget).__name__}: {widget.windowTitle()}")
        if isinstance(widget, QMessageBox):
            button = widget.button(QMessageBox.No) or widget.button(QMessageBox.Cancel) or widget.button(
                QMessageBox.Ok) or widget.button(QMessageBox.Close)
            if button is not None:
                button.click()
                return
        if isinstance(widget, QDialog):
            widget.reject()
        else:
            widget.close()


def controls(page: QWidget) -> Iterator[QWidget]:
    """The page's visible, enabled buttons and combo boxes, in a fixed order (found afresh each call)."""
    for widget in page.findChildren(QWidget):
        if not (widget.isVisible() and widget.isEnabled()):
            continue
        if isinstance(widget, QAbstractButton) and widget.text().replace("&", "") not in NEVER_CLICK:
            if widget.window() is page.window():
                yield widget
        elif isinstance(widget, QComboBox) and widget.window() is page.window():
            yield widget


def settle(qtbot, window) -> None:
    """Let queued work land: events processed, and background jobs given a moment."""
    qtbot.wait(20)  # pacing only (nothing asserted depends on its length); the real work is waited for below
    qtbot.waitUntil(lambda: not window.translate_panel.running and not window.models_panel.loading, timeout=30000)


def use_page(qtbot, window, page: QWidget, log: list[str]) -> None:
    """Click each control of `page` once, step each combo through its items, then go back to where it was."""
    done: set[int] = set()
    for _round in range(3):  # a click may show new controls (a view's options): pick those up too
        fresh = [w for w in controls(page) if id(w) not in done]
        if not fresh:
            break
        for widget in fresh:
            done.add(id(widget))
            if not (widget.isVisible() and widget.isEnabled()):
                continue  # an earlier click hid or disabled it
            if isinstance(widget, QComboBox):
                start = widget.currentIndex()
                for index in range(widget.count()):
                    widget.setCurrentIndex(index)
                    settle(qtbot, window)
                if widget.isEnabled() and 0 <= start < widget.count():
                    widget.setCurrentIndex(start)
                log.append(f"combo {widget.objectName() or widget.currentText()!r} x{widget.count()}")
            else:
                log.append(f"click {widget.text()!r}")
                QTest.mouseClick(widget, Qt.LeftButton, pos=QPoint(widget.width() // 2, widget.height() // 2))
            settle(qtbot, window)


def dialogs_of(window: QWidget, visited: list[QWidget]) -> list[QWidget]:
    """The visible dialogs this window opened (parented to it) that were not used yet; `visited` keeps them."""
    found = [w for w in QApplication.topLevelWidgets()
             if w is not window and w.isVisible() and not isinstance(w, QMenu) and w.parentWidget() is not None
             and w.parentWidget().window() is window and not any(w is v for v in visited)]
    visited.extend(found)
    return found


@pytest.fixture
def clicked_window(open_main_window, tiny_model_dir, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # Get models… searches the shipped catalogue, a download fails fast
    monkeypatch.chdir(tmp_path)  # anything a dialog might write lands here
    window = open_main_window(tiny_model_dir)
    window.resize(1280, 820)
    panel = window.translate_panel
    panel.source.setPlainText(TEXT)
    panel.translate()
    qtbot.waitUntil(lambda: not panel.running and panel.document.current() is not None, timeout=30000)
    return window


def test_click_every_control_of_every_tab_view_and_dialog(clicked_window, qtbot) -> None:
    window = clicked_window
    log: list[str] = []
    closer = ModalCloser()
    with QtMessages() as qt:
        visited: list[QWidget] = []
        tab_bar = window.tabs.tabBar()
        for tab in range(window.tabs.count()):
            QTest.mouseClick(tab_bar, Qt.LeftButton, pos=tab_bar.tabRect(tab).center())
            assert window.tabs.currentIndex() == tab
            page = window.tabs.currentWidget()
            inner = [t for t in page.findChildren(QTabWidget) if t.isVisible()]
            use_page(qtbot, window, page, log)
            for tabs in inner:  # the Analysis views, the Train tab's plots: each page of an inner tab widget
                for sub in range(tabs.count()):
                    QTest.mouseClick(tabs.tabBar(), Qt.LeftButton, pos=tabs.tabBar().tabRect(sub).center())
                    use_page(qtbot, window, tabs.currentWidget(), log)
            for dialog in dialogs_of(window, visited):  # dialogs the page's buttons opened (Get models…)
                use_page(qtbot, window, dialog, log)
                dialog.close()
                settle(qtbot, window)
        for menu in window.menuBar().findChildren(QMenu):
            for action in menu.actions():
                if action.isSeparator() or action.menu() is not None or action.text().replace("&", "") in NEVER_CLICK:
                    continue
                if action.isEnabled():
                    log.append(f"menu {action.text()!r}")
                    action.trigger()
                    settle(qtbot, window)
            for dialog in dialogs_of(window, visited):
                dialog.close()
        settle(qtbot, window)
    closer.timer.stop()
    assert qt.messages == [], qt.messages
    assert sum(entry.startswith("click") for entry in log) >= 40, log  # it really went through the window
    assert any("Get models" in entry for entry in log), log
    assert "click 'Search'" in log, log  # the Get models dialog the button opened was used too
    quit_action = next(a for m in window.menuBar().findChildren(QMenu) for a in m.actions()
                       if a.text().replace("&", "") == "Quit")
    quit_action.trigger()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=30000)
