"""An axis that labels every token of a heatmap, never dropping one.

pyqtgraph's AxisItem drops tick labels that would overlap or leave its box, so long sentences showed
every other source token. `TokenAxis` draws one label per token itself, and `fit_labels` chooses how:

- source (bottom) labels: horizontal if the widest fits a column (the font may shrink to 85 %), else
  rotated to read upwards, shrinking the font down to `FLOOR_PT` until a line fits a column;
- target (left) labels: horizontal, the font shrinking down to `FLOOR_PT` until a line fits a row.

When even `FLOOR_PT` does not fit, `TickFit.fits` is False and `min_px` says how many pixels a token needs:
the owner (focus_view.py) then gives the plot that minimum size inside a scroll area. `painted` lists
what the last paint drew (label and its box), so tests check the labels drawn, not the ones asked for.

Labels may reach past the axis' own box: a new fit can be painted before the layout gives the axis its new
thickness, and the end labels of a bottom axis stick out sideways. `boundingRect` covers all of it, so the
scene repaints (and clears) everywhere a label was: otherwise clipped copies ("Da", "te") stayed beside the
axes after a resize until something covered the plot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

FLOOR_PT = 7.0  # smallest label font (points): still readable on screen and in a figure
HORIZONTAL_SHRINK = 0.85  # horizontal source labels may shrink to this share of the base size before rotating
MAX_CHARS = 16  # longer labels are elided with "…" (the value under the cursor names them in full)
_PAD = 4  # pixels between neighbouring labels and around the text
TOKEN_LEGEND = ("Subword pieces: ·word starts a word, a piece without · continues the word before it "
                "(·Fahr rad), ␣ is a space, \\n a line break; </s> ends the sentence.")


@dataclass(frozen=True)
class TickFit:
    """How an axis draws its labels: font size, rotation, its own thickness (px) and whether all fit."""

    point_size: float
    rotated: bool
    thickness: int  # width of a left axis, height of a bottom axis
    fits: bool
    min_px: float  # pixels per token needed at FLOOR_PT


def elide(label: str, width: int = MAX_CHARS) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _metrics(font: QtGui.QFont, point_size: float) -> QtGui.QFontMetricsF:
    f = QtGui.QFont(font)
    f.setPointSizeF(point_size)
    return QtGui.QFontMetricsF(f)


def _sizes(base: float) -> list[float]:
    """Candidate sizes from `base` down to FLOOR_PT in half points."""
    sizes, pt = [], max(base, FLOOR_PT)
    while pt > FLOOR_PT:
        sizes.append(pt)
        pt -= 0.5
    return sizes + [FLOOR_PT]


def fit_labels(labels: Sequence[str], px_per_token: float, font: QtGui.QFont, orientation: str,
               offset: float = 5.0, was_rotated: bool = False) -> TickFit:
    """The largest readable way to draw every label in `px_per_token` (see the module docstring).

    `was_rotated` adds hysteresis: rotated labels turn back only with 10 % room to spare, so a plot whose
    axes change each other's size cannot flip back and forth."""
    base = font.pointSizeF() if font.pointSizeF() > 0 else 9.0
    sizes = _sizes(base)

    def widest(pt: float) -> float:
        m = _metrics(font, pt)
        return max((m.horizontalAdvance(t) for t in labels), default=0.0)

    floor_height = _metrics(font, FLOOR_PT).height()
    if orientation in ("left", "right"):
        for pt in sizes:
            if _metrics(font, pt).height() <= px_per_token:
                return TickFit(pt, False, int(widest(pt) + offset + 2 * _PAD), True, floor_height)
        return TickFit(FLOOR_PT, False, int(widest(FLOOR_PT) + offset + 2 * _PAD), False, floor_height)
    room = px_per_token / 1.1 if was_rotated else px_per_token
    for pt in (s for s in sizes if s >= base * HORIZONTAL_SHRINK):
        m = _metrics(font, pt)
        if widest(pt) + _PAD <= room:
            return TickFit(pt, False, int(m.height() + offset + _PAD), True, floor_height)
    for pt in sizes:
        if _metrics(font, pt).height() <= px_per_token:
            return TickFit(pt, True, int(widest(pt) + offset + 2 * _PAD), True, floor_height)
    return TickFit(FLOOR_PT, True, int(widest(FLOOR_PT) + offset + 2 * _PAD), False, floor_height)


class TokenAxis(pg.AxisItem):
    """An AxisItem with one label per token at the token's centre (i + 0.5), drawn as `fit` says."""

    def __init__(self, orientation: str):
        super().__init__(orientation)
        self.setStyle(showValues=False)  # pyqtgraph draws the line and ticks; the labels are ours
        self.labels: list[str] = []
        self.base_font = QtGui.QFont()
        self.fit = TickFit(self.base_font.pointSizeF(), False, 30, True, 0.0)
        self.painted: list[tuple[str, QtCore.QRectF]] = []  # what the last paint drew: label, its box
        self._reach = (0.0, 0.0)  # (across, along): px the labels need away from the plot and along the axis
        self.setToolTip(TOKEN_LEGEND)

    def set_labels(self, labels: Sequence[str]) -> None:
        self.labels = [elide(t) for t in labels]
        self.setTicks([[(i + 0.5, t) for i, t in enumerate(self.labels)], []])
        self._measure_reach()

    def _offset(self) -> float:
        vertical = self.orientation in ("left", "right")
        return max(0, self.style["tickLength"]) + self.style["tickTextOffset"][0 if vertical else 1]

    def _measure_reach(self) -> None:
        """How far the labels drawn with the current fit reach (see boundingRect); tells the scene first."""
        metrics = _metrics(self.base_font, self.fit.point_size)
        widest = max((metrics.horizontalAdvance(t) for t in self.labels), default=0.0)
        height = metrics.height()
        if self.orientation in ("left", "right") or self.fit.rotated:
            reach = (widest + self._offset() + _PAD, height / 2 + 1)
        else:
            reach = (height + self._offset() + _PAD, widest / 2 + 1)
        if reach != self._reach:
            self.prepareGeometryChange()
            self._reach = reach

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 (Qt name)
        """The axis' box, grown to wherever its labels are painted (a thickness still to come, end labels)."""
        rect = super().boundingRect()
        own = self.mapRectFromParent(self.geometry())
        across, along = self._reach
        if self.orientation == "left":
            return rect.adjusted(-max(0.0, across - own.width()), -along, 0, along)
        if self.orientation == "bottom":
            return rect.adjusted(-along, 0, along, max(0.0, across - own.height()))
        return rect

    def apply_fit(self, px_per_token: float) -> TickFit:
        """Choose and set font, rotation and thickness for `px_per_token` pixels per token."""
        fit = fit_labels(self.labels, px_per_token, self.base_font, self.orientation, self._offset(), self.fit.rotated)
        if fit != self.fit:
            self.fit = fit
            self._measure_reach()
            font = QtGui.QFont(self.base_font)
            font.setPointSizeF(fit.point_size)
            self.setStyle(tickFont=font)
            if self.orientation in ("left", "right"):
                self.setWidth(fit.thickness)
            else:
                self.setHeight(fit.thickness)
        self.picture = None
        self.update()
        return fit

    def generateDrawSpecs(self, p: QtGui.QPainter):  # noqa: N802 (pyqtgraph name)
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis_spec, tick_specs, _ = specs
        bounds = self.mapRectFromParent(self.geometry())
        lo, hi = self.range
        if hi == lo:
            return axis_spec, tick_specs, []
        vertical = self.orientation in ("left", "right")
        offset = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][0 if vertical else 1]
        font = QtGui.QFont(self.base_font)
        font.setPointSizeF(self.fit.point_size)
        p.setFont(font)
        metrics = QtGui.QFontMetricsF(p.font())
        height = metrics.height()
        text_specs = []
        for i, label in enumerate(self.labels):
            v = i + 0.5
            if vertical:
                pos = bounds.bottom() - (v - lo) / (hi - lo) * bounds.height()
                if not bounds.top() - 1 <= pos <= bounds.bottom() + 1:
                    continue
                width = metrics.horizontalAdvance(label)
                rect = QtCore.QRectF(bounds.right() - offset - width, pos - height / 2, width, height)
                text_specs.append((rect, rect, label))
            else:
                pos = bounds.left() + (v - lo) / (hi - lo) * bounds.width()
                if not bounds.left() - 1 <= pos <= bounds.right() + 1:
                    continue
                width = metrics.horizontalAdvance(label)
                top = bounds.top() + offset
                if self.fit.rotated:  # drawn upwards, ending at the axis: its box on the axis is height x width
                    box = QtCore.QRectF(pos - height / 2, top, height, width)
                    text_specs.append((box, QtCore.QRectF(-width, -height / 2, width, height), label))
                else:
                    rect = QtCore.QRectF(pos - width / 2, top, width, height)
                    text_specs.append((rect, rect, label))
        return axis_spec, tick_specs, text_specs

    def drawPicture(self, p: QtGui.QPainter, axisSpec, tickSpecs, textSpecs) -> None:  # noqa: N802, N803
        super().drawPicture(p, axisSpec, tickSpecs, [])
        font = QtGui.QFont(self.base_font)
        font.setPointSizeF(self.fit.point_size)
        p.setFont(font)
        p.setPen(self.textPen())
        p.setClipping(False)
        painted = []
        align = QtCore.Qt.AlignmentFlag
        for box, rect, label in textSpecs:
            if self.fit.rotated and self.orientation in ("top", "bottom"):
                p.save()
                p.translate(box.center().x(), box.top())
                p.rotate(-90)
                p.drawText(rect, int(align.AlignRight | align.AlignVCenter), label)
                p.restore()
            else:
                flags = align.AlignRight | align.AlignVCenter if self.orientation == "left" else align.AlignCenter
                p.drawText(rect, int(flags), label)
            painted.append((label, QtCore.QRectF(box)))
        self.painted = painted
