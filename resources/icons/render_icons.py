"""Render nmt-desktop.svg (the source) to nmt-desktop.png (256 px: window icon, Linux .desktop) and
nmt-desktop.ico (the Windows build's icon): `.venv/bin/python resources/icons/render_icons.py`."""

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

HERE = Path(__file__).resolve().parent


def render(renderer: QSvgRenderer, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


if __name__ == "__main__":
    app = QGuiApplication([])
    renderer = QSvgRenderer(str(HERE / "nmt-desktop.svg"))
    image = render(renderer, 256)
    assert image.save(str(HERE / "nmt-desktop.png")), "PNG not written"
    assert image.save(str(HERE / "nmt-desktop.ico"), "ICO"), "ICO not written (Qt's ico plugin missing?)"
    print("wrote nmt-desktop.png and nmt-desktop.ico")
