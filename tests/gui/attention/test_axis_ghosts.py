"""No paint outside the axes after a resize (issue 29, point 4): a heatmap's token labels could be painted
before the layout gave their axis its new thickness, outside the axis' bounding rect, so the scene never
cleared them: clipped copies ("Da", "te") stayed beside the axes of the focus view, Forced prefix and the
Beam tree until something covered the plot. Headless renders (`grab()`) repaint everything and never
showed it; the screen's own pixels (the offscreen platform's backing store) do."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from nmt_desktop.gui.attention.focus import FocusView  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402
from qt_layout import wait_laid_out  # noqa: E402

SOURCE = ["▁Datenschutz", "grundverordnung", "▁ist", "▁ein", "▁langes", "▁Wort", "▁und", "▁gut", "▁Datum", "▁heute"]
TARGET = ["▁The", "▁data", "▁protection", "▁regulation", "▁is", "▁long", "</s>"]


def left_of_axis(view: FocusView, image: QImage) -> list[int]:
    """The pixels of `image` (the view) left of the left axis, over the axis' height."""
    axis = view.axes["left"]
    box = axis.mapRectToScene(axis.mapRectFromParent(axis.geometry()))
    top_left = view.graphics.mapTo(view, view.graphics.mapFromScene(box.topLeft()))
    rows = range(max(0, top_left.y()), min(image.height(), top_left.y() + int(box.height())))
    return [image.pixel(x, y) for x in range(max(0, top_left.x())) for y in rows]


def test_no_label_is_left_behind_after_resizes(qtbot) -> None:
    view = FocusView()
    qtbot.addWidget(view)
    rng = np.random.default_rng(0)
    view.set_matrix(rng.random((7, 10)), SOURCE, TARGET, "L1 H1")
    view.resize(700, 500)
    view.show()
    qtbot.waitExposed(view)
    screen = QApplication.primaryScreen()
    sizes = random.Random(1)
    for i in range(30):
        view.resize(sizes.randint(300, 1000), sizes.randint(250, 700))
        if i == 15:  # fewer, shorter tokens: the axes shrink
            view.set_matrix(rng.random((5, 4)), SOURCE[:4], TARGET[:5], "L2 H3")
        wait_laid_out(qtbot, view)  # the resize's layout done (a chain of posted events, however slow the machine)

        def screen_as_fresh(i=i) -> None:  # and its paints landed: a ghost label stays on the screen for good
            on_screen = screen.grabWindow(view.winId()).toImage()  # what the screen shows, stale pixels and all
            fresh = view.grab().toImage()  # everything painted anew
            assert left_of_axis(view, on_screen) == left_of_axis(view, fresh), f"resize {i}: {view.size()}"

        qtbot.waitUntil(screen_as_fresh, timeout=TIMEOUT_MS)
        for axis in view.axes.values():  # and the reason: every label inside what the scene repaints
            bounds = axis.boundingRect().adjusted(-0.5, -0.5, 0.5, 0.5)
            assert all(bounds.contains(box) for _label, box in axis.painted), axis.orientation
