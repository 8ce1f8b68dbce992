"""The Train tab's live plots: loss, learning rate, speed and dev BLEU/chrF against the step, and the probe
sentence's cross-attention redrawn at each evaluation. Background and text colours follow gui/theme.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QGridLayout, QGroupBox, QHBoxLayout, QLabel, QSizePolicy, QSpinBox, QVBoxLayout,
                               QWidget)

from nmt_desktop.core.analysis.head_names import head_name

from .. import theme
from ..plot_menu import give_menu_to
from ..attention.focus import FocusView

PLOTS = {  # key: (plot, legend name, colour)
    "train_loss": ("loss", "train loss", "#4f46e5"),
    "dev_loss": ("loss", "dev loss", "#dc2626"),
    "lr": ("lr", "learning rate", "#059669"),
    "tokens_per_s": ("speed", "target tokens/s", "#d97706"),
    "bleu": ("quality", "dev BLEU", "#4f46e5"),
    "chrf": ("quality", "dev chrF", "#0891b2"),
}
PLOT_TITLES = {"loss": "Loss (per target token)", "lr": "Learning rate", "speed": "Tokens / s",
               "quality": "Dev BLEU and chrF"}
EVAL_SERIES = ("dev_loss", "bleu", "chrf")  # drawn with a dot per evaluation


class LivePlots(QWidget):
    """Four plots in a grid; `add_point(key, step, value)` extends one of the `PLOTS` series."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.plots: dict[str, pg.PlotWidget] = {}
        for i, key in enumerate(PLOT_TITLES):
            w = pg.PlotWidget()
            w.showGrid(x=True, y=True, alpha=0.2)
            w.setLabel("bottom", "step")
            w.setMenuEnabled(False)
            give_menu_to(w.getPlotItem(), w)
            if key in ("loss", "quality"):
                _legend_above(w.getPlotItem())
            self.plots[key] = w
            grid.addWidget(w, i // 2, i % 2)
        self.curves: dict[str, pg.PlotDataItem] = {}
        for key, (plot, name, colour) in PLOTS.items():
            symbol = "o" if key in EVAL_SERIES else None
            self.curves[key] = self.plots[plot].plot([], [], name=name, pen=pg.mkPen(colour, width=2),
                                                     symbol=symbol, symbolSize=6, symbolBrush=colour,
                                                     symbolPen=None)
        self.series: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in PLOTS}
        theme.follow(self, self.restyle)

    def restyle(self, look: theme.Theme) -> None:
        """Background, titles, axes and legend text in the colours of `look`."""
        for key, w in self.plots.items():
            w.setBackground(look.plot_background)
            w.setTitle(PLOT_TITLES[key], color=look.plot_text, size="10pt")
            for axis in ("left", "bottom"):
                w.getAxis(axis).setTextPen(look.plot_text)
                w.getAxis(axis).setPen(look.muted)
            legend = w.getPlotItem().legend
            if legend is not None:
                legend.setLabelTextColor(look.plot_text)

    def reset(self) -> None:
        for key in self.series:
            self.series[key] = ([], [])
            self.curves[key].setData([], [])

    def add_point(self, key: str, step: float, value: float | None) -> None:
        if value is None:
            return
        xs, ys = self.series[key]
        while xs and xs[-1] >= step:  # a resumed run repeats steps after its checkpoint
            xs.pop()
            ys.pop()
        xs.append(float(step))
        ys.append(float(value))
        self.curves[key].setData(np.asarray(xs), np.asarray(ys))


def _legend_above(item: pg.PlotItem) -> pg.LegendItem:
    """A one-row legend between the title and the data (the unused top-axis row), so it never covers a curve;
    the curves plotted with a `name` join it."""
    legend = pg.LegendItem(colCount=4, verSpacing=-6, horSpacing=18)
    item.layout.removeItem(item.getAxis("top"))  # hidden in these plots; its cell holds the legend
    item.layout.addItem(legend, 1, 1)
    legend.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Fixed)  # its own width, at the right
    item.layout.setAlignment(legend, Qt.AlignRight | Qt.AlignVCenter)
    item.legend = legend
    return legend


WAITING = "Shown at each evaluation: nothing yet, until this run's first evaluation."
MAX_PROBE_PX = (640, 400)  # the most room (w, h) the probe's heatmap claims from the tab; a longer probe scrolls


class ProbeView(QGroupBox):
    """The probe sentence's cross-attention at the latest evaluation, one layer and head at a time.

    The heatmap claims the room its token labels need at the smallest font (FocusView's minimum size, from
    the font metrics), up to `MAX_PROBE_PX`, so the splitters give it that room: at the default window size
    the source labels were cut off at the bottom of a scroll area."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Probe sentence: cross-attention", parent)
        self.probe: dict[str, Any] | None = None  # the eval event's "probe" object, with its "step"
        self.updates = 0
        pl = QVBoxLayout(self)
        pick = QHBoxLayout()
        self.layer = QSpinBox()
        self.head = QSpinBox()
        for spin, name in ((self.layer, "layer"), (self.head, "head")):
            spin.setPrefix(name[0].upper())  # L3, H2: the spelling of every view (core/analysis/head_names.py)
            spin.setRange(1, 1)
            spin.setToolTip(f"The probe's decoder {name} shown, counted from 1")
            spin.valueChanged.connect(lambda _v: self._show())
            pick.addWidget(QLabel(name))
            pick.addWidget(spin)
        pick.addStretch(1)
        self.label = QLabel(WAITING)
        self.label.setObjectName("hint")
        self.label.setWordWrap(True)
        pl.addLayout(pick)
        pl.addWidget(self.label)
        self.view = FocusView()
        self.view.plot.vb.sigResized.connect(self._claim_room)  # after FocusView's own fit (connected first)
        pl.addWidget(self.view, 1)

    def reset(self) -> None:
        """A new run (or another opened): the previous run's heatmap goes, so no step of it is taken for this one's."""
        self.probe = None
        self.updates = 0
        self.view.set_matrix(np.zeros((0, 0), dtype=np.float32), [], [], title="")
        self.label.setText(WAITING)
        self.view.scroll.setMinimumSize(0, 0)

    def _claim_room(self, *_) -> None:
        """Ask the layout for the heatmap's minimum size, so no label is scrolled out of sight."""
        if self.probe is None:
            return
        need = self.view.graphics.minimumSize()
        self.view.scroll.setMinimumSize(min(need.width(), MAX_PROBE_PX[0]), min(need.height(), MAX_PROBE_PX[1]))

    def show_probe(self, probe: dict[str, Any], step: int) -> None:
        """An evaluation's probe (source, translation, tokens, attention [layers][heads][T][S]) at `step`."""
        self.probe = dict(probe, step=step)
        self.updates += 1
        self._show()

    def _show(self) -> None:
        if self.probe is None:
            return
        att = np.asarray(self.probe["attention"], dtype=np.float32)  # (layers, heads, T, S)
        if att.ndim != 4:
            return
        layers, heads = att.shape[:2]
        for spin, n in ((self.layer, layers), (self.head, heads)):
            if spin.maximum() != n:
                spin.blockSignals(True)
                spin.setRange(1, n)
                spin.setValue(n if spin is self.layer and spin.value() == 1 and n > 1 else spin.value())
                spin.blockSignals(False)
        layer, head = self.layer.value() - 1, self.head.value() - 1
        matrix = att[layer, head]
        self.view.set_matrix(matrix, self.probe.get("source_tokens", []), self.probe.get("target_tokens", []),
                             title=f"step {self.probe['step']}: {head_name(layer, head)}")
        self.label.setText(f"“{self.probe.get('source', '')}” → “{self.probe.get('translation', '')}”")
        self._claim_room()
