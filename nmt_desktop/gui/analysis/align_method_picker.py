"""Which alignment reading the Alignments view uses: the loaded model's recommended one (`default_method` of
its card) until a person changes the reading, the heads or the decision; "Recommended" returns to it.
The method in use is stated in one line (`AlignMethod.describe`) whose tooltip says why it is read so."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from nmt_desktop.core.analysis.alignment import GENERIC_METHOD, READINGS, AlignMethod, default_method
from nmt_desktop.core.analysis.head_names import layer_name

READING_TEXTS = {  # reading -> (combo text, what it reads); the core's READINGS, in its order
    "masking": ("Masking: what the model uses",
                "A target word is aligned by how much the model's probability of it drops when a source word is "
                "hidden (prediction difference, Li et al. 2019): what the model uses, not where it looks; "
                "one extra pass of the model per source word"),
    "shift": ("Shift: where a token is read",
              "A target token is aligned by the attention of the decoder step that reads it as input (the step "
              "after it was predicted): the query there is the token itself (Chen et al. 2020)"),
    "predict": ("Predict: where a token is predicted",
                "A target token is aligned by the attention of the step that predicts it, before the model knew "
                "the token (the older reading; usually further from human alignments)"),
}
DECISION_ITEMS = (  # (decision, tooltip)
    ("argmax", "Each target word links to its best source word"),
    ("mutual", "Only the links whose two words are each other's best: fewer, surer links"),
    ("threshold", "Every pair whose evidence reaches the threshold"),
)
HeadChoice = tuple[int | None, tuple[tuple[int, int], ...] | None]  # (layer, heads) of an AlignMethod


def _heads_key(layer: int | None, heads: tuple[tuple[int, int], ...] | None, layers: int) -> Any:
    """The heads a (layer, heads) choice averages: equal keys, equal heads (a negative layer counts from the end)."""
    return heads if heads is not None else (None if layer is None else layer % max(layers, 1))


def reads_heads(method: AlignMethod) -> bool:
    """Whether the method's heads matter: an attention reading, or masking with attention added to it."""
    return method.uses_attention or bool(getattr(method, "attention_weight", 0))


def _key(method: AlignMethod, layers: int) -> AlignMethod:
    """What decides a method's links: equal keys, equal alignments (heads only when read, the threshold only
    for the threshold decision)."""
    heads = _heads_key(method.layer, method.heads, layers) if reads_heads(method) else None
    return replace(method, layer=heads if isinstance(heads, int) else None,
                   heads=heads if isinstance(heads, tuple) else None,
                   threshold=method.threshold if method.decision == "threshold" else 0.0)


def _percent(value: Any) -> str:
    """An AER from a card: 0.31 -> "31.0%"; anything else as written."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return f"{value:.1%}"
    return str(value)


def recommendation_note(card: dict[str, Any] | None, default: AlignMethod, layers: int) -> str:
    """Where the recommended reading comes from: the model card's "alignment" entry ("chosen_on", "aer" when
    present) or, without one, the app's default."""
    entry = (card or {}).get("alignment")
    what = f"the {default.reading} reading" + (f" of {default.which_heads(layers)}" if reads_heads(default) else "")
    if not isinstance(entry, dict):
        note = (f"This model's card recommends no reading: the app's default ({what}) is the one that agreed "
                "best with human alignments on the development sets (benchmarks/RESULTS.md)")
        if default.uses_attention and default.heads is None and layers > 1 and default.layer is not None \
                and default.layer % layers == layers - 2:
            note += "; Garg et al. 2019 also found the penultimate layer best"
        return note + "."
    note = f"The model's card recommends {what}"
    if entry.get("chosen_on"):
        note += f", chosen on a development set of human alignments: {entry['chosen_on']}"
    if entry.get("aer") is not None:
        note += f" (alignment error rate {_percent(entry['aer'])})"
    return note + "."


class AlignMethodPicker(QWidget):
    """Reading, heads and decision of the word alignment, and the one line that states the method in use."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.layers = 0
        self.card: dict[str, Any] = {}
        self.default = GENERIC_METHOD
        self._choices: list[HeadChoice] = []
        self._note: tuple[str, str] = ("", "")  # (added to the method line, added to its tooltip)
        self.reading = QComboBox()
        for i, key in enumerate(READINGS):
            text, tip = READING_TEXTS.get(key, (key, key))
            self.reading.addItem(text, key)
            self.reading.setItemData(i, tip, Qt.ToolTipRole)
        self.reading.setToolTip("What aligns a target word: the model's use of each source word (masking) or its "
                                "attention at one decoder step")
        self.heads = QComboBox()
        self.heads.setToolTip("Which cross-attention heads are averaged (by the attention readings, and by "
                              "masking when it adds attention): the model's recommended heads, one layer's, or "
                              "every layer's")
        self.decision = QComboBox()
        for i, (key, tip) in enumerate(DECISION_ITEMS):
            self.decision.addItem(key, key)
            self.decision.setItemData(i, tip, Qt.ToolTipRole)
        self.decision.setToolTip("How links are read from the evidence: argmax (each target word's best "
                                 "source word), mutual (best both ways) or threshold")
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.01, 1.0)
        self.threshold.setDecimals(3)
        self.threshold.setSingleStep(0.05)
        self.threshold.setValue(self.default.threshold)
        self.threshold.setToolTip("With the threshold decision: link every pair with at least this evidence "
                                  "(each target word's evidence sums to 1 before the prior)")
        self.reset_button = QPushButton("Recommended")
        self.reset_button.setToolTip("Return to the reading the loaded model recommends")
        self.reset_button.clicked.connect(self.reset)
        self.description = QLabel("")
        self.description.setObjectName("hint")
        self.description.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("Reading", self.reading), ("Heads", self.heads), ("Links", self.decision)):
            row.addWidget(QLabel(label))
            row.addWidget(widget)
        row.addWidget(self.threshold)
        row.addWidget(self.reset_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.description)
        for combo in (self.reading, self.heads, self.decision):
            combo.currentIndexChanged.connect(self._changed)
        self.threshold.valueChanged.connect(self._changed)
        self._show()

    def set_model(self, layers: int, card: dict[str, Any] | None = None) -> None:
        """The loaded model's decoder layers and card: its recommended reading becomes the one in use."""
        self.layers, self.card = layers, dict(card or {})
        self.default = default_method(self.card, layers)
        self.heads.blockSignals(True)
        self.heads.clear()
        self._choices = []
        default = self.default
        if default.heads is not None:
            self._add_heads(f"Recommended: {default.which_heads(layers)}", (default.layer, default.heads),
                            "The heads the model's card recommends, averaged")
        for layer in range(layers):
            self._add_heads(f"{layer_name(layer)} (heads averaged)", (layer, None),
                            f"Every cross-attention head of {layer_name(layer)}, averaged")
        self._add_heads("All layers (heads averaged)", (None, None), "Every cross-attention head, averaged")
        self.heads.blockSignals(False)
        self.set_method(self.default)

    def _add_heads(self, text: str, choice: HeadChoice, tip: str) -> None:
        self._choices.append(choice)
        self.heads.addItem(text)
        self.heads.setItemData(self.heads.count() - 1, tip, Qt.ToolTipRole)

    def method(self) -> AlignMethod:
        """The reading the controls describe (the model's default itself when they describe it); the diagonal
        prior and identical-word bonus are the default's."""
        method = replace(self.default, reading=self.reading.currentData(), decision=self.decision.currentData(),
                         threshold=round(self.threshold.value(), 3))
        if self._choices and reads_heads(method):
            layer, heads = self._choices[self.heads.currentIndex()]
            method = replace(method, layer=layer, heads=heads)
        return self.default if _key(method, self.layers) == _key(self.default, self.layers) else method

    def set_method(self, method: AlignMethod) -> None:
        """Show `method` in the controls (heads not offered yet get an item of their own); emits `changed`."""
        widgets = (self.reading, self.heads, self.decision, self.threshold)
        for w in widgets:
            w.blockSignals(True)
        self.reading.setCurrentIndex(max(0, self.reading.findData(method.reading)))
        self.decision.setCurrentIndex(max(0, self.decision.findData(method.decision)))
        self.threshold.setValue(method.threshold)
        want = _heads_key(method.layer, method.heads, self.layers)
        keys = [_heads_key(l, h, self.layers) for l, h in self._choices]
        if want not in keys and self.layers:
            self._add_heads(method.which_heads(self.layers), (method.layer, method.heads), "The heads chosen")
            keys.append(want)
        if want in keys:
            self.heads.setCurrentIndex(keys.index(want))
        for w in widgets:
            w.blockSignals(False)
        self._changed()

    def set_note(self, text: str, tip: str = "") -> None:
        """Words the method line adds after the reading (e.g. the Alignments view's symmetrisation), and a tooltip
        line on them."""
        if (text, tip) != self._note:
            self._note = (text, tip)
            self._show()

    def reset(self) -> None:
        """Back to the model's recommended reading."""
        self.set_method(self.default)

    def _changed(self) -> None:
        self._show()
        self.changed.emit()

    def _show(self) -> None:
        self.threshold.setEnabled(self.decision.currentData() == "threshold")
        self.heads.setEnabled(reads_heads(replace(self.default, reading=self.reading.currentData())))
        if not self.layers:
            self.description.setText("")
            return
        method, default = self.method(), self.default
        recommended = method is default
        self.reset_button.setEnabled(not recommended)
        note, note_tip = self._note
        self.description.setText(f"Alignment: {method.describe(self.layers)}"
                                 + ("  (recommended)" if recommended else "") + (f"; {note}" if note else ""))
        lines = [READING_TEXTS.get(method.reading, ("", method.reading))[1] + ".",
                 dict(DECISION_ITEMS)[method.decision] + ".",
                 recommendation_note(self.card, default, self.layers)]
        if not recommended:
            lines.append(f"Recommended: {default.describe(self.layers)}.")
        if note_tip:
            lines.append(note_tip)
        self.description.setToolTip("\n".join(lines))
