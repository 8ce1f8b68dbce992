"""The Translate tab's decoding options: greedy, beam search or sampling; `config()` builds a DecodeConfig."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel,
                               QSizePolicy, QSpinBox, QStackedWidget, QWidget)

from nmt_desktop.core.config import DecodeConfig

MODES = ("Greedy", "Beam search", "Sampling")


class DecodeOptions(QGroupBox):
    """Greedy / beam / sampling options; `config()` builds a DecodeConfig."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Decoding", parent)
        d = DecodeConfig()
        self.mode = QComboBox()
        self.mode.addItems(MODES)
        self.mode.setToolTip("Greedy: the most likely token each step; beam search: keep several hypotheses; "
                             "sampling: draw tokens at random (temperature, top-k, top-p)")
        self.beam = _spin(2, 64, 4, "Hypotheses kept at each step")
        self.nbest = _spin(1, 64, 3, "Hypotheses listed in the n-best list (≤ beam size)")
        self.length_penalty = _dspin(0.0, 5.0, d.length_penalty, 0.1, "GNMT length penalty α")
        self.temperature = _dspin(0.05, 5.0, d.temperature, 0.05, "Sampling temperature")
        self.top_k = _spin(0, 1000, d.top_k, "Sample from the k most likely tokens (0 = all)")
        self.top_p = _dspin(0.01, 1.0, d.top_p, 0.05, "Nucleus threshold (1 = off)")
        self.seed = _spin(-1, 2**31 - 1, -1, "Random seed (-1 = random each time)")
        self.seed.setSpecialValueText("random")
        self.max_len_a = _dspin(0.0, 10.0, d.max_len_a, 0.1, "Max target tokens = a × source tokens + b")
        self.max_len_b = _spin(0, 1000, d.max_len_b, "Max target tokens = a × source tokens + b")
        self.min_length = _spin(0, 1000, d.min_length, "Generate at least this many tokens")
        self.int8 = QCheckBox("int8 weights (faster)")
        self.int8.setToolTip("Decode with the linear layers quantised to int8 (CPU): about 1.5-2.5x faster, "
                             "translations almost always the same (bundled en-de: dev BLEU 44.28 float32, 44.32 int8). "
                             "Reloads the model.")

        grid = QGridLayout(self)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(6)
        grid.addWidget(QLabel("Mode"), 0, 0)
        grid.addWidget(self.mode, 0, 1)
        grid.addWidget(QLabel("Min length"), 0, 2)
        grid.addWidget(self.min_length, 0, 3)
        grid.addWidget(QLabel("Max length"), 1, 0)
        row = QHBoxLayout()
        row.setSpacing(4)
        row.addWidget(self.max_len_a)
        row.addWidget(QLabel("× n +"))
        row.addWidget(self.max_len_b)
        grid.addLayout(row, 1, 1, 1, 3)
        grid.addWidget(self.int8, 3, 0, 1, 4)
        self.beam_box = _pairs(("Beam", self.beam), ("N-best", self.nbest), ("Length penalty", self.length_penalty))
        self.sample_box = _pairs(("Temperature", self.temperature), ("Top-k", self.top_k), ("Top-p", self.top_p),
                                 ("Seed", self.seed))
        self.greedy_box = QLabel("Greedy search: the most probable token at each step.")
        self.greedy_box.setObjectName("hint")
        self.greedy_box.setWordWrap(True)
        self.stack = QStackedWidget()
        for box in (self.greedy_box, self.beam_box, self.sample_box):
            self.stack.addWidget(box)
        self.stack.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)
        grid.addWidget(self.stack, 2, 0, 1, 4)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self._mode_changed(0)
        self.beam.valueChanged.connect(lambda v: self.nbest.setMaximum(v))
        for w in (self.mode,):
            w.currentIndexChanged.connect(self.changed)
        for w in (self.beam, self.nbest, self.length_penalty, self.temperature, self.top_k, self.top_p, self.seed,
                  self.max_len_a, self.max_len_b, self.min_length):
            w.valueChanged.connect(self.changed)

    def _mode_changed(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        for i in range(self.stack.count()):  # size the stack to the page shown
            page = self.stack.widget(i)
            page.setSizePolicy(QSizePolicy.Preferred,
                               QSizePolicy.Preferred if i == index else QSizePolicy.Ignored)
        self.stack.adjustSize()

    def config(self) -> DecodeConfig:
        mode = self.mode.currentIndex()
        kw: dict[str, Any] = dict(max_len_a=self.max_len_a.value(), max_len_b=self.max_len_b.value(),
                                  min_length=self.min_length.value(), length_penalty=self.length_penalty.value(),
                                  alternatives=5, attention=True, self_attention=True)
        if mode == 1:
            kw.update(beam_size=self.beam.value(), nbest=min(self.nbest.value(), self.beam.value()))
        elif mode == 2:
            kw.update(sample=True, temperature=self.temperature.value(), top_k=self.top_k.value(),
                      top_p=self.top_p.value(), seed=None if self.seed.value() < 0 else self.seed.value())
        return DecodeConfig(**kw)

    def to_dict(self) -> dict[str, Any]:
        return {"mode": MODES[self.mode.currentIndex()].split()[0].lower(), "beam_size": self.beam.value(),
                "nbest": self.nbest.value(), "length_penalty": self.length_penalty.value(),
                "temperature": self.temperature.value(), "top_k": self.top_k.value(), "top_p": self.top_p.value(),
                "seed": self.seed.value(), "max_len_a": self.max_len_a.value(), "max_len_b": self.max_len_b.value(),
                "min_length": self.min_length.value(), "int8": self.int8.isChecked()}

    def from_dict(self, data: dict[str, Any]) -> None:
        if not isinstance(data, dict):
            return
        modes = [m.split()[0].lower() for m in MODES]
        if data.get("mode") in modes:
            self.mode.setCurrentIndex(modes.index(data["mode"]))
        for key, widget in (("beam_size", self.beam), ("nbest", self.nbest), ("length_penalty", self.length_penalty),
                            ("temperature", self.temperature), ("top_k", self.top_k), ("top_p", self.top_p),
                            ("seed", self.seed), ("max_len_a", self.max_len_a), ("max_len_b", self.max_len_b),
                            ("min_length", self.min_length)):
            value = data.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                widget.setValue(type(widget.value())(value))
        if isinstance(data.get("int8"), bool):
            self.int8.setChecked(data["int8"])

    def set_beam(self, size: int, nbest: int | None = None) -> None:
        """Greedy for size 1, else beam search of `size` (used by the CLI and tests)."""
        if size <= 1:
            self.mode.setCurrentIndex(0)
            return
        self.beam.setValue(size)
        self.nbest.setValue(min(nbest or self.nbest.value(), size))
        self.mode.setCurrentIndex(1)


def _spin(lo: int, hi: int, value: int, tip: str) -> QSpinBox:
    w = QSpinBox()
    w.setRange(lo, hi)
    w.setValue(value)
    w.setToolTip(tip)
    return w


def _dspin(lo: float, hi: float, value: float, step: float, tip: str) -> QDoubleSpinBox:
    w = QDoubleSpinBox()
    w.setRange(lo, hi)
    w.setDecimals(2)
    w.setSingleStep(step)
    w.setValue(value)
    w.setToolTip(tip)
    return w


def _pairs(*pairs: tuple[str, QWidget]) -> QWidget:
    """Label/widget pairs, two per row."""
    box = QWidget()
    grid = QGridLayout(box)
    grid.setContentsMargins(0, 0, 0, 0)
    grid.setHorizontalSpacing(8)
    grid.setVerticalSpacing(6)
    for i, (label, widget) in enumerate(pairs):
        lab = QLabel(label)
        lab.setBuddy(widget)
        r, c = divmod(i, 2)
        grid.addWidget(lab, r, 2 * c)
        grid.addWidget(widget, r, 2 * c + 1)
    grid.setColumnStretch(1, 1)
    grid.setColumnStretch(3, 1)
    return box
