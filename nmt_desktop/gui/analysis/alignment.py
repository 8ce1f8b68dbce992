"""Word alignments: source words (top) linked to target words (bottom) by `core.analysis.heads.align_words`,
copied or exported in Pharaoh format."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPainter, QPen
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QGraphicsLineItem, QGraphicsScene,
                               QGraphicsView, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget)

from nmt_desktop.core.analysis import heads as analysis
from nmt_desktop.core.analysis.head_names import layer_name
from nmt_desktop.core.analysis.words import display_piece, words_of

from .. import theme

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translation

ALIGN_LAYERS = ("Last layer (avg heads)", "All layers (avg)")  # then "L3 (avg heads)", counted from 1


def layer_items(layers: int) -> list[str]:
    """The items of a layer combo read by `layer_choice`."""
    return list(ALIGN_LAYERS) + [f"{layer_name(i)} (avg heads)" for i in range(layers)]


def layer_choice(index: int) -> int | None:
    """The `layer` argument of the core's attention averages for a `layer_items` index: -1 (the last layer),
    None (all layers) or a layer."""
    return -1 if index <= 0 else (None if index == 1 else index - 2)


class AlignmentView(QWidget):
    """Source words (top) linked to target words (bottom) by word alignments from attention."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translation: Translation | None = None
        self.links: list[tuple[int, int]] = []
        self.lines: list[QGraphicsLineItem] = []
        self.layer = QComboBox()
        self.layer.setToolTip("Which attention the alignment reads (heads averaged)")
        self.method = QComboBox()
        self.method.addItems(["argmax", "threshold"])
        self.method.setToolTip("argmax: each target word links to its most attended source word; "
                               "threshold: to every source word above the threshold")
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.01, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setValue(0.3)
        self.threshold.setEnabled(False)
        self.threshold.setToolTip("With the threshold method: link every source word with at least this attention")
        self.copy_button = QPushButton("Copy Pharaoh")
        self.copy_button.setToolTip("Copy the alignment as Pharaoh pairs (0-1 2-3 …) to the clipboard")
        self.copy_button.clicked.connect(self.copy_pharaoh)
        self.export_button = QPushButton("Export .txt…")
        self.export_button.setToolTip("Save the alignment as a Pharaoh .txt file")
        self.export_button.clicked.connect(self._ask_export)
        self.pharaoh_label = QLabel("")
        self.pharaoh_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.pharaoh_label.setWordWrap(True)
        self.scene = QGraphicsScene(self)
        self.graphics = QGraphicsView(self.scene)
        self.graphics.setRenderHint(QPainter.Antialiasing)
        theme.follow(self, lambda look: self.graphics.setBackgroundBrush(QBrush(QColor(look.plot_background))))
        row = QHBoxLayout()
        row.addWidget(QLabel("Attention"))
        row.addWidget(self.layer, 1)
        row.addWidget(QLabel("Method"))
        row.addWidget(self.method)
        row.addWidget(self.threshold)
        row.addStretch(1)
        row.addWidget(self.copy_button)
        row.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.pharaoh_label)
        self.layer.currentIndexChanged.connect(self.refresh)
        self.method.currentIndexChanged.connect(self._method_changed)
        self.threshold.valueChanged.connect(self.refresh)

    def set_layers(self, layers: int) -> None:
        self.layer.blockSignals(True)
        self.layer.clear()
        self.layer.addItems(layer_items(layers))
        self.layer.blockSignals(False)

    def layer_choice(self) -> int | None:
        """The `layer` argument of core.analysis.align_words for the combo's choice."""
        return layer_choice(self.layer.currentIndex())

    def _method_changed(self) -> None:
        self.threshold.setEnabled(self.method.currentText() == "threshold")
        self.refresh()

    def set_translation(self, translation: Translation) -> None:
        if self.layer.count() == 0 and translation.attention is not None:
            self.set_layers(translation.attention.shape[0])
        self.translation = translation
        self.refresh()

    def current_links(self) -> list[tuple[int, int]]:
        if self.translation is None or self.translation.attention is None:
            return []
        return analysis.align_words(self.translation, layer=self.layer_choice(), method=self.method.currentText(),
                                    threshold=self.threshold.value())

    def pharaoh(self) -> str:
        return analysis.to_pharaoh(self.links)

    def copy_pharaoh(self) -> None:
        QGuiApplication.clipboard().setText(self.pharaoh())

    def export(self, path: str | Path) -> None:
        Path(path).write_text(self.pharaoh() + "\n", encoding="utf-8")

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export alignment", "alignment.txt", "Text (*.txt)")
        if path:
            self.export(path)

    def refresh(self) -> None:
        self.scene.clear()
        self.lines = []
        self.links = self.current_links()
        self.pharaoh_label.setText(f"Pharaoh: {self.pharaoh()}" if self.translation is not None else "")
        if self.translation is None:
            return
        src, tgt = words_of(self.translation.source_tokens), words_of(self.translation.target_tokens)
        font = QFont()
        font.setPointSize(11)
        top = self._word_boxes(src, 0.0, font, QColor("#e0e7ff"))
        bottom = self._word_boxes(tgt, 140.0, font, QColor("#dcfce7"))
        pen = QPen(QColor(79, 70, 229, 200), 2)
        for i, j in self.links:
            if i < len(top) and j < len(bottom):
                a, b = top[i], bottom[j]
                self.lines.append(self.scene.addLine(a.center().x(), a.bottom(), b.center().x(), b.top(), pen))
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-10, -10, 10, 10))

    def _word_boxes(self, words: list[str], y: float, font: QFont, fill: QColor) -> list[QRectF]:
        rects, x = [], 0.0
        for word in words:
            text = self.scene.addSimpleText(display_piece(word), font)
            text.setBrush(QBrush(QColor("#111827")))  # dark on the light word boxes in either theme
            w = text.boundingRect().width() + 14
            h = text.boundingRect().height() + 8
            rect = QRectF(x, y, w, h)
            self.scene.addRect(rect, QPen(QColor("#9ca3af")), QBrush(fill))
            text.setZValue(1)
            text.setPos(x + 7, y + 4)
            rects.append(rect)
            x += w + 12
        return rects
