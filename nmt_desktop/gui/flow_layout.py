"""A layout that lays its widgets out in a row and wraps them onto further rows when the row is too narrow.

Why: a row of controls (a view's toolbar) made the main window at least its width wide; the window did not fit a
1024 x 768 screen (issue 41). In a `FlowLayout` the row's minimum width is its widest control's, and the
controls wrap under each other below their one-row width (heightForWidth gives the height that needs)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QWidget


class FlowLayout(QLayout):
    """Items left to right, wrapped onto the next row when the next one would not fit; rows centred vertically."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6):
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setContentsMargins(0, 0, 0, 0)
        self.setSpacing(spacing)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - everything on one row
        shown = self._shown()
        margins = self.contentsMargins()
        width = sum(i.sizeHint().width() for i in shown) + self.spacing() * max(0, len(shown) - 1)
        height = max((i.sizeHint().height() for i in shown), default=0)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - the widest item: the others wrap under it
        size = QSize()
        for item in self._shown():
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _shown(self) -> list[QLayoutItem]:
        return [i for i in self._items if not i.isEmpty()]

    def _place(self, rect: QRect, move: bool) -> int:
        """Lay the items out in `rect` (only measure unless `move`); returns the height used."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        rows: list[list[QLayoutItem]] = [[]]
        x = area.x()
        for item in self._shown():
            width = item.sizeHint().width()
            if rows[-1] and x + width > area.right() + 1:
                rows.append([])
                x = area.x()
            rows[-1].append(item)
            x += width + self.spacing()
        y = area.y()
        for row in rows:
            height = max((i.sizeHint().height() for i in row), default=0)
            x = area.x()
            for item in row:
                hint = item.sizeHint()
                width = min(hint.width(), area.width())
                if move:
                    item.setGeometry(QRect(QPoint(x, y + (height - hint.height()) // 2), QSize(width, hint.height())))
                x += width + self.spacing()
            y += height + self.spacing()
        return y - self.spacing() - rect.y() + margins.bottom() if self._shown() else 0


def flow_widget(*widgets: QWidget, spacing: int = 6) -> QWidget:
    """A widget holding `widgets` in a `FlowLayout` (to put in a box layout beside other controls)."""
    holder = QWidget()
    layout = FlowLayout(holder, spacing)
    for widget in widgets:
        layout.addWidget(widget)
    policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
    policy.setHeightForWidth(True)
    holder.setSizePolicy(policy)
    return holder


def labelled(text: str, field: QWidget) -> QWidget:
    """A label and its field as one item of a flow (they wrap together, never apart)."""
    from PySide6.QtWidgets import QHBoxLayout, QLabel

    pair = QWidget()
    row = QHBoxLayout(pair)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(QLabel(text))
    row.addWidget(field)
    return pair
