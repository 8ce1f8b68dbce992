"""pyqtgraph's PlotItem builds a "Plot Options" context menu (seven QMenus) with no parent, so Qt never deletes
it: every plot the app ever made left its menus behind as hidden top-level windows. The app turns those menus off
(`setMenuEnabled(False)`), so they go when the widget that shows the plot goes. They are not made its children:
their check boxes would then count as the window's controls (tooltips, the click-everything test) though no one
can reach them.

(A window with its train plots and focus views left 154 such menus; the test suite, which opens hundreds of
windows, slowed as each style change repolished thousands of them.)"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget


def give_menu_to(plot: pg.PlotItem, owner: QWidget) -> None:
    """Delete `plot`'s control menu (and its sub-menus, its children) when `owner` is destroyed."""
    menu = plot.ctrlMenu
    if menu is not None and menu.parent() is None:
        owner.destroyed.connect(menu.deleteLater)
