"""Issue 41: the main window could not be narrower than 1,052 px, so it did not fit a 1024 x 768 screen. Its
minimum size, on every tab (tabs picked by clicking the tab bar), now leaves room for the window frame and a
desktop's panels, and the window really takes that size with every widget at least its own minimum (nothing
squeezed below what it needs, which is what cuts text off or makes widgets overlap)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QSplitter, QWidget, QWidgetItem  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

SMALL = (1000, 700)  # a 1024 x 768 screen less the window's frame and title bar and a desktop's panels


def squeezed(root: QWidget) -> list[str]:
    """The shown widgets under `root` that a layout or splitter placed narrower or lower than the least it may give
    them (their explicit minimum size, else their minimum size hint, as the layout reads them): what cuts text off
    or draws widgets over each other. A widget's own parts (a spin box's line edit, a table's header) and scroll
    areas' contents (they scroll) aside."""
    out = []
    for widget in root.findChildren(QWidget):
        parent = widget.parentWidget()
        if not widget.isVisible() or parent is None or widget.isWindow():
            continue
        if parent.objectName() == "qt_scrollarea_viewport" or (parent.layout() is None
                                                                and not isinstance(parent, QSplitter)):
            continue
        least, size = QWidgetItem(widget).minimumSize(), widget.size()
        if size.width() < least.width() - 1 or size.height() < least.height() - 1:
            out.append(f"{type(widget).__name__} in {type(parent).__name__}: {size.toTuple()} < {least.toTuple()}")
    return out


def test_the_window_fits_a_1024_by_768_screen_on_every_tab(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    bar = window.tabs.tabBar()
    for index in range(window.tabs.count()):
        QTest.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(index).center())
        assert window.tabs.currentIndex() == index
        QApplication.processEvents()
        name = window.tabs.tabText(index)
        hint, minimum = window.minimumSizeHint(), window.minimumSize()
        assert max(hint.width(), minimum.width()) <= SMALL[0], (name, hint, minimum)
        assert max(hint.height(), minimum.height()) <= SMALL[1], (name, hint, minimum)
        window.resize(*SMALL)
        qtbot.waitUntil(lambda: window.size().toTuple() == SMALL, timeout=TIMEOUT_MS)
        QApplication.processEvents()
        assert squeezed(window.tabs.currentWidget()) == [], name
