"""A model of the reverse direction for the Alignments view, and the links it gives.

Symmetrising (core.analysis.alignment.symmetrise) adds a second opinion: the reverse model aligns the pair
the other way (the translation's target words as its source, the source words as its given target), its
links are flipped to (source i, target j) and combined with the forward ones. The reverse model is picked
by an installed model's name, a folder or a .zip and loaded on this box's own thread (second_model.py, as
Compare's model B); it is kept only while its languages are the loaded model's swapped.

Both directions count the words the view draws (the real words of the forward pieces): the reverse model
reads those words joined by spaces and is given them as its words, so its word i is the view's word i."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from nmt_desktop.core.analysis.alignment import align, default_method
from nmt_desktop.core.analysis.words import piece_bytes, real_words
from nmt_desktop.core.config import DecodeConfig

from ..job_view import JobView
from .second_model import ask_model_path, languages, load_second_model

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

Links = list[tuple[int, int]]
DEFAULT_HOW = "grow-diag-final"
SYMMETRISE_ITEMS = (  # (combo text, core's `how` or None, tooltip)
    ("off", None, "Show the loaded model's links only"),
    ("intersection", "intersection", "Only the links both directions agree on: fewer, surer links"),
    ("union", "union", "Every link of either direction: more links, more of them wrong"),
    ("grow-diag-final", "grow-diag-final", "The agreed links, grown by neighbouring links of either direction "
                                           "that align a still unaligned word, then any link of an unaligned "
                                           "word (as in Moses)"),
)
REVERSE_CFG = DecodeConfig(beam_size=1, alternatives=0, attention=True)  # the default reading mixes in attention


def direction_problem(forward: Translator, reverse: Translator, name: str) -> str:
    """One sentence on why `reverse` cannot be the reverse of `forward`, or "" when it can (languages a model
    does not state are not held against it)."""
    (fs, ft), (rs, rt) = languages(forward), languages(reverse)
    if (rs and ft and rs != ft) or (rt and fs and rt != fs):
        return (f"{name} cannot align the other way: it translates {rs or '?'} → {rt or '?'}, and a reverse "
                f"model of the loaded {fs or '?'} → {ft or '?'} model must translate {ft or '?'} → {fs or '?'}.")
    return ""


def plain_words(pieces: list[str]) -> list[str]:
    """The view's words of `pieces` (numbered as `words_of` numbers them) as text, without spaces or word marks
    (a blank word becomes ""); bytes a byte-level vocabulary shows as "<E2 80>" are the characters again."""
    words = []
    for group in real_words(pieces):
        raw = b"".join(piece_bytes(pieces[i]) for i in group)
        words.append("".join(raw.decode("utf-8", errors="replace").split()))
    return words


@dataclass
class Backward:
    """The reverse model's links of one pair, flipped to (source word i, target word j), or why there are none."""

    links: Links
    problem: str = ""


def backward_links(translation: Translation, reverse: Translator) -> Backward:
    """The pair aligned the other way by `reverse` (its recommended reading, teacher-forced on the source words),
    flipped; runs the model, so call it on a worker thread."""
    source, target = plain_words(translation.source_tokens), plain_words(translation.target_tokens)
    if not any(source) or not any(target):
        return Backward([])
    try:
        scored = reverse.score(" ".join(w for w in target if w), " ".join(w for w in source if w), REVERSE_CFG)
        method = default_method(reverse.card, reverse.config.decoder_layers)
        links = align(scored, method, target, source, translator=reverse)  # (target word j, source word i)
    except ValueError as exc:  # too long for it, or its tokens do not spell the words (an unknown character)
        return Backward([], f"the reverse model cannot read this pair ({str(exc).rstrip('.')})")
    return Backward(sorted((i, j) for j, i in links))


class ReverseModelBox(JobView):
    """"Reverse model" (none, installed models, a folder…, a .zip…) and "Symmetrise" (off / intersection /
    union / grow-diag-final, shown once a reverse model is loaded); `changed` when either changes."""

    changed = Signal()
    failure = "Cannot load the reverse model"

    def __init__(self, parent: QWidget | None = None):
        super().__init__("reverse-model-loader", parent)
        self.forward: Translator | None = None
        self.reverse: Translator | None = None
        self.name = ""
        self.path = ""
        self._entries: list[tuple[str, str]] = []  # per combo item: (kind: none|model|folder|zip, path)
        self.model = QComboBox()
        self.model.setToolTip("A model of the reverse direction (the loaded model's target → its source): it aligns "
                              "the pair the other way, and the two alignments are symmetrised")
        self.how = QComboBox()
        for i, (text, how, tip) in enumerate(SYMMETRISE_ITEMS):
            self.how.addItem(text, how)
            self.how.setItemData(i, tip, Qt.ToolTipRole)
        self.how.setToolTip("How the two directions' links are combined")
        self.how.setCurrentIndex(self.how.findText(DEFAULT_HOW))
        self.how_label = QLabel("Symmetrise")
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Reverse model"))
        row.addWidget(self.model)
        row.addWidget(self.how_label)
        row.addWidget(self.how)
        row.addWidget(self.status, 1)
        self._populate()
        self.model.activated.connect(self._picked)
        self.how.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self._update_enabled()

    def symmetrisation(self) -> str | None:
        """core's `how` of the symmetrisation in use; None without a reverse model or when off."""
        return self.how.currentData() if self.reverse is not None else None

    def describe(self) -> str:
        """"symmetrised with NAME (how)" while symmetrising, else ""."""
        how = self.symmetrisation()
        return f"symmetrised with {self.name} ({how})" if how else ""

    def method_note(self) -> str:
        """For the method line's tooltip: how the reverse model reads while symmetrising, else ""."""
        if self.symmetrisation() is None or self.reverse is None:
            return ""
        layers = self.reverse.config.decoder_layers
        return (f"Symmetrised: {self.name} aligns the pair the other way by its own recommended reading "
                f"({default_method(self.reverse.card, layers).describe(layers)}); its links and the loaded model's "
                f"are combined by {self.symmetrisation()}.")

    def set_forward(self, translator: Translator | None) -> None:
        """The loaded model: a reverse model whose direction no longer fits it is dropped, with a sentence."""
        self.forward = translator
        problem = direction_problem(translator, self.reverse, self.name) \
            if translator is not None and self.reverse is not None else ""
        if problem:
            self.reverse, self.name, self.path = None, "", ""
            self.show_status(f"Reverse model dropped: {problem}")
            self.changed.emit()
        self._populate()

    def set_reverse(self, translator: Translator | None, name: str = "", path: str = "") -> bool:
        """Use `translator` as the reverse model (None: none); False, with the reason shown, when its direction
        does not fit the loaded model."""
        name = name or getattr(translator, "name", "") or "the reverse model"
        if translator is None:
            self.forget_job()  # a load under way no longer wanted
        problem = direction_problem(self.forward, translator, name) \
            if translator is not None and self.forward is not None else ""
        if problem:
            self.show_status(problem)
        else:
            self.reverse, self.name, self.path = translator, name if translator is not None else "", path
            self.show_status("")
            if translator is not None:
                self.how.blockSignals(True)
                self.how.setCurrentIndex(self.how.findText(DEFAULT_HOW))  # the default with a new model
                self.how.blockSignals(False)
            self.changed.emit()
        self._populate()
        return not problem

    def load(self, path: str) -> int:
        """Load the reverse model (folder, zip or installed name) on this box's thread, then `set_reverse`."""
        return self.run_job(lambda: load_second_model(path), lambda loaded: self.set_reverse(*loaded, path=path),
                            f"Loading {Path(path).name}…")

    def _picked(self, index: int) -> None:
        kind, path = self._entries[index] if 0 <= index < len(self._entries) else ("none", "")
        if kind in ("folder", "zip"):
            path = ask_model_path(self, "Reverse model (target → source)", zipped=kind == "zip")
        if kind == "none":
            self.set_reverse(None)
        elif kind != "current" and path and path != self.path:
            self.load(path)
        self._populate()  # the combo shows the model in use until another is loaded

    def _populate(self) -> None:
        """The combo's items: none, the installed and bundled models, the one in use (if not among them), a
        folder…, a .zip…."""
        from nmt_desktop.core.hub.installed import list_models

        items: list[tuple[str, str, str]] = [("None", "none", "")]
        for m in list_models():
            items.append((f"{m.name} ({m.languages.replace('->', '→')})" if m.languages else m.name, "model",
                          str(m.path)))
        current = next((k for k, (_, _, p) in enumerate(items) if self.reverse is not None and self.path and p
                        and Path(p) == Path(self.path)), 0)
        if self.reverse is not None and not current:  # loaded from elsewhere: an item of its own
            current = len(items)
            items.append((self.name, "current", self.path))
        items += [("Model folder…", "folder", ""), ("Model .zip…", "zip", "")]
        self._entries = [(kind, path) for _, kind, path in items]
        self.model.blockSignals(True)
        self.model.clear()
        for text, _, path in items:
            self.model.addItem(text)
            if path:
                self.model.setItemData(self.model.count() - 1, path, Qt.ToolTipRole)
        self.model.setCurrentIndex(current)
        self.model.blockSignals(False)
        shown = self.reverse is not None
        self.how_label.setVisible(shown)
        self.how.setVisible(shown)

    def _update_enabled(self) -> None:
        self.model.setEnabled(not self.running)
