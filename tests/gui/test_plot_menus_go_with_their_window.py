"""A closed window leaves no hidden windows behind: pyqtgraph's plots each made a parentless "Plot Options" menu
(seven QMenus) that Qt never deleted, 154 per main window (gui/plot_menu.py)."""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QMenu


def plot_menus() -> list[QMenu]:
    for _ in range(2):  # the window's deletion posts its menus' deletion
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.title() == "Plot Options"]


def test_a_deleted_window_takes_its_plot_menus_with_it(qtbot, config_dir) -> None:
    from nmt_desktop.gui.app import MainWindow

    before = len(plot_menus())
    window = MainWindow(model=None)
    window.show()
    qtbot.waitExposed(window)
    assert len(plot_menus()) > before  # the train plots and focus views have their menus while the window lives
    window.close()
    window.deleteLater()
    del window
    assert len(plot_menus()) == before
