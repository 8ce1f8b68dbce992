"""Writing attention to files: images (PNG/SVG) of a pyqtgraph scene or widget, tensors with their
tokens (.npz/.json) and one matrix as CSV.

Nothing here pickles: `.npz` files hold float32 weights and unicode string arrays, so
``np.load(path, allow_pickle=False)`` reads them.

Tokens: images are for people and show every token as `words.display_piece` spells it ("·word", never "▁");
NPZ, JSON and CSV are for programs and keep the tokenizer's raw pieces ("▁word": "▁" is a word start).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers pg.exporters)
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

if TYPE_CHECKING:
    from nmt_desktop.core.analysis.attention_data import AttentionData

IMAGE_SUFFIXES = (".png", ".svg")
# written into NPZ and JSON exports: arrays count from 0, people from 1 (core/analysis/head_names.py)
INDEX_NOTE = ("weights[layer][head][target][source], each counted from 0: L3 H2 (decoder layer 3, head 2) "
              "is weights[2][1]")


def _suffix(path: str | Path, allowed: tuple[str, ...]) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in allowed:
        raise ValueError(f"{path}: unsupported file type {suffix or '(none)'}; use one of {', '.join(allowed)}")
    return suffix


def _token_array(tokens: list[str]) -> np.ndarray:
    return np.array([str(t) for t in tokens], dtype=str) if tokens else np.zeros(0, dtype="<U1")


def save_npz(path: str | Path, data: "AttentionData") -> None:
    """Arrays: weights (L, H, T, S) float32, source_tokens, target_tokens (unicode), kind and index (unicode
    scalars; index: INDEX_NOTE)."""
    with open(path, "wb") as fh:  # a file object: np.savez would append ".npz" to a path lacking it
        np.savez(fh, weights=np.ascontiguousarray(data.weights, dtype=np.float32),
                 source_tokens=_token_array(data.source_tokens), target_tokens=_token_array(data.target_tokens),
                 kind=np.array(data.kind, dtype=str), index=np.array(INDEX_NOTE, dtype=str))


def save_json(path: str | Path, data: "AttentionData") -> None:
    """{"kind", "index": INDEX_NOTE, "source_tokens", "target_tokens",
    "weights": [layers][heads][target][source]}.

    Weights are the float32 values widened to float64, so reading them back as float32 is exact."""
    obj = {"kind": data.kind, "index": INDEX_NOTE, "source_tokens": list(data.source_tokens),
           "target_tokens": list(data.target_tokens),
           "weights": np.asarray(data.weights, dtype=np.float32).astype(np.float64).tolist()}
    Path(path).write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")


def save_tensors(path: str | Path, data: "AttentionData") -> None:
    if _suffix(path, (".npz", ".json")) == ".npz":
        save_npz(path, data)
    else:
        save_json(path, data)


def save_csv(path: str | Path, matrix: np.ndarray, source_tokens: list[str], target_tokens: list[str],
             title: str = "") -> None:
    """Header row: `title` (what the matrix is, e.g. "Cross-attention · L3 H2") then the source tokens; then one
    row per target token: the token, then its weights (9 significant digits, enough to read float32 back exactly)."""
    matrix = np.asarray(matrix)
    if matrix.shape != (len(target_tokens), len(source_tokens)):
        raise ValueError(f"matrix shape {matrix.shape} does not match {len(target_tokens)} target x "
                         f"{len(source_tokens)} source tokens")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([title, *source_tokens])
        for token, row in zip(target_tokens, matrix):
            writer.writerow([token, *(format(float(v), ".9g") for v in row)])


def save_scene_image(path: str | Path, item: QtWidgets.QGraphicsItem | QtWidgets.QGraphicsScene,
                     min_width: int = 800) -> None:
    """PNG (pyqtgraph ImageExporter, at least `min_width` pixels wide) or SVG of a pyqtgraph item/scene.

    SVG is drawn by Qt's QSvgGenerator directly: pyqtgraph 0.14's SVGExporter fails on the paths Qt 6.11
    writes ("... Z" without coordinates: ValueError in correctCoordinates)."""
    suffix = _suffix(path, IMAGE_SUFFIXES)
    if suffix == ".svg":
        save_scene_svg(path, item)
        return
    exporter = pg.exporters.ImageExporter(item)
    width = int(exporter.params["width"])
    if width < min_width:
        exporter.params["width"] = min_width  # height follows the aspect ratio
    exporter.export(str(path))
    if not Path(path).is_file():
        raise OSError(f"{path}: could not write the image")


def save_scene_svg(path: str | Path, item: QtWidgets.QGraphicsItem | QtWidgets.QGraphicsScene,
                   title: str = "attention") -> None:
    """Render a scene (or the part under one item) into an SVG file with QSvgGenerator."""
    scene = item if isinstance(item, QtWidgets.QGraphicsScene) else item.scene()
    source = scene.sceneRect() if item is scene else item.sceneBoundingRect()
    w, h = max(1, int(round(source.width()))), max(1, int(round(source.height())))
    generator = QtSvg.QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QtCore.QSize(w, h))
    generator.setViewBox(QtCore.QRectF(0, 0, w, h))
    # At QSvgGenerator's default 72 dpi a painter shrinks what it draws in device-independent units (fonts,
    # pyqtgraph's axes and tick labels) by 72/96, while images and paths in scene pixels keep their size: the
    # focus view's heatmap came out 4/3 the size of its axes. At the screen's logical dpi both share one scale.
    screen = QtGui.QGuiApplication.primaryScreen()
    generator.setResolution(round(screen.logicalDotsPerInch()) if screen is not None else 96)
    generator.setTitle(title)
    painter = QtGui.QPainter()
    if not painter.begin(generator):
        raise OSError(f"{path}: could not write the image")
    try:
        scene.render(painter, QtCore.QRectF(0, 0, w, h), source)
    finally:
        painter.end()
    if not Path(path).is_file():
        raise OSError(f"{path}: could not write the image")


def ensure_laid_out(view: pg.GraphicsView, size: QtCore.QSize | None = None) -> None:
    """Make sure a GraphicsLayoutWidget has a real geometry before exporting it: pending layouts are
    flushed; a never-shown (or zero-sized) one is given `size` (at least 640 x 480) by hand."""
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)
    if view.isVisible() and view.width() > 10 and view.height() > 10:
        return
    size = size or view.size()
    w, h = max(size.width(), 640, view.minimumWidth()), max(size.height(), 480, view.minimumHeight())
    if not view.isVisible():
        view.resize(w, h)
    pg.GraphicsView.setRange(view, QtCore.QRectF(0, 0, w, h), padding=0, disableAutoPixel=False)
    layout = getattr(view.centralWidget, "layout", None)  # pyqtgraph's GraphicsLayout: an attribute
    layout = layout() if callable(layout) else layout
    if layout is not None:
        layout.activate()
