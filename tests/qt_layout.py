"""Waiting for a Qt layout to be done, however slow the machine (issue 41).

A resize, a show or new content sets off a chain of posted events (layout requests, resizes, queued calls of
pyqtgraph's graphics layouts): a fixed `qtbot.wait(20)` assumed the chain was through by then. `wait_laid_out`
waits for the layout itself: every posted event delivered, the geometry of every widget and graphics-layout
item under the widget is the same over two checks in a row (a round of the event loop between them).

Imported as `from qt_layout import wait_laid_out` (tests/ is on sys.path: tests/conftest.py's folder)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QGraphicsView, QGraphicsWidget, QWidget

from limits import TIMEOUT_MS


def geometry(widget: QWidget) -> list:
    """What a layout decides, under `widget`: each widget's visibility, geometry and size limits, and each
    graphics-layout item's geometry, position in its scene and view range (pyqtgraph's view boxes)."""
    out: list = []
    for w in [widget, *widget.findChildren(QWidget)]:
        out.append((w.isVisible(), w.geometry(), w.minimumSize(), w.maximumSize()))
        if isinstance(w, QGraphicsView) and w.scene() is not None:
            out.append(w.sceneRect())
            for item in w.scene().items():
                if isinstance(item, QGraphicsWidget):
                    out.append((item.geometry(), item.scenePos()))
                    if hasattr(item, "viewRange"):
                        out.append(repr(item.viewRange()))
    return out


def wait_laid_out(qtbot, widget: QWidget, timeout: int = TIMEOUT_MS) -> None:
    """Wait until `widget` (shown or not) is laid out: its window exposed if it is shown, and its layout
    settled (see the module's docstring)."""
    last: list = []

    def settled() -> bool:
        for _ in range(3):  # a chain of layout requests: each round delivers what the round before posted
            QApplication.sendPostedEvents()
        now = geometry(widget)
        same = bool(last) and now == last[0]
        last[:] = [now]
        window = widget.window().windowHandle()
        exposed = not widget.isVisible() or (window is not None and window.isExposed())
        return same and exposed

    qtbot.waitUntil(settled, timeout=timeout)
