"""The Translate tab's Memory view (issue 45, instant adaptation): "Adapt to my memory" per model, "Clear memory
influence", and the memory segments the shown sentence's translation was adapted to (`Translation.memory_matches`).

The switch sets the loaded translator's `Adaptation` (core/adaptation/settings.py) over the user's memory, the
file the post-editing desk confirms into. Clearing sets the adaptation's `since` to now: segments confirmed before
it no longer adapt, those confirmed after do; both are kept per model in the settings, so they hold after a
restart. What online learning (`translate --memory M --learn`, core/adaptation/online_learning.py) kept beside the
memory for this model is loaded into its weights while adaptation is on; clearing brings the parent weights back
and deletes that file.
The memory is read through `ThreadMemory`, one SQLite connection per thread (the decoding thread
searches; the desk writes through its own), and nothing until the file exists.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from nmt_desktop.core.adaptation.learned_weights import LearnedWeightsError
from nmt_desktop.core.adaptation.online_learning import OnlineLearner
from nmt_desktop.core.adaptation.settings import Adaptation
from nmt_desktop.core.memory import Pair, TranslationMemory, default_memory_path

from ..formatting import format_prob
from .memory_marks import segment_line

if TYPE_CHECKING:
    from nmt_desktop.core.adaptation.memory_use import MemorySource
    from nmt_desktop.core.decoding.translator import Translator

    from ..models.loader import ModelInfo


class ThreadMemory:
    """Adaptation's `MemoryLookup` over a memory file: a connection per thread, opened on its first search once the
    file exists (before that, no matches)."""

    def __init__(self, path: Path):
        self.path = path
        self._local = threading.local()

    def search(self, text: str, pair: Any, limit: int = 5, min_score: float = 50.0) -> list[Any]:
        memory = getattr(self._local, "memory", None)
        if memory is None:
            if not self.path.is_file():
                return []
            memory = self._local.memory = TranslationMemory(self.path, create=False)
        return memory.search(text, pair, limit, min_score)


class MemoryView(QWidget):
    """The Memory tab under the output. `changed`: the switch or Clear changed what a translation reads."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.translator: Translator | None = None
        self.learner: OnlineLearner | None = None  # what online learning kept for the loaded model, in its weights
        self.learn_error = ""  # a learned-weights file that did not read: said in the status line
        self.model_key = ""  # the loaded model's path: the settings' key
        self.per_model: dict[str, dict[str, Any]] = {}  # model path -> {"enabled": bool, "since": Unix seconds}
        self.memory_path = default_memory_path()
        self.adapt = QCheckBox("Adapt to my memory")
        self.adapt.setChecked(True)
        self.adapt.setToolTip("Mix each translation with the closest segments of your translation memory (those "
                              "confirmed in the post-editing desk or imported); the tokens that came from it are "
                              "underlined on a tint, and hovering one names the segments")
        self.adapt.toggled.connect(self._toggled)
        self.clear_button = QPushButton("Clear memory influence")
        self.clear_button.setToolTip("From now on, only segments confirmed after this click adapt this model's "
                                     "translations (the memory itself is kept)")
        self.clear_button.clicked.connect(self.clear_influence)
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["match", "memory source", "memory target"])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Stretch)
        header.setSectionResizeMode(2, QHeaderView.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setToolTip("The memory segments this sentence's translation was adapted to, best match first")
        row = QHBoxLayout()
        row.addWidget(self.adapt)
        row.addStretch(1)
        row.addWidget(self.clear_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(self.table, 1)
        self._set_enabled_controls()

    # -- the model and its adaptation ---------------------------------------------------------------

    def set_translator(self, translator: Translator, info: ModelInfo | None) -> None:
        """A model was loaded: adapt it to the user's memory as its saved switch says (on by default)."""
        self.translator = translator
        self.model_key = str(getattr(info, "path", "") or getattr(translator, "path", "") or "")
        src = getattr(info, "src_lang", "") or translator.config.src_lang
        tgt = getattr(info, "tgt_lang", "") or translator.config.tgt_lang
        saved = self.per_model.get(self.model_key, {})
        translator.adaptation = None
        if self.learner is not None and self.learner.model is not translator.model:
            self.learner, self.learn_error = None, ""
        if src and tgt:
            translator.adaptation = Adaptation(ThreadMemory(self.memory_path), Pair.of(src, tgt),
                                               enabled=bool(saved.get("enabled", True)),
                                               since=float(saved.get("since", 0.0)))
            if self.learner is None:
                self.learner = self._learned(translator)
            self._use_learned()
        with_signals = self.adapt.blockSignals(True)
        self.adapt.setChecked(translator.adaptation is not None and translator.adaptation.enabled)
        self.adapt.blockSignals(with_signals)
        self._set_enabled_controls()
        self.show_matches([])

    def _learned(self, translator: Translator) -> OnlineLearner | None:
        """The model with what online learning kept beside the memory loaded (nothing is read or copied when the
        memory has no learned file beside it); a file that does not read is said in the status line, the parent
        is used."""
        try:
            return OnlineLearner.attach(translator, self.memory_path, [])
        except LearnedWeightsError as exc:
            self.learn_error = str(exc)
            return None

    def _use_learned(self) -> None:
        adaptation = self.translator.adaptation if self.translator is not None else None
        if self.learner is not None and adaptation is not None:
            self.learner.use(adaptation.enabled)
            self.translator.weights_changed()

    def _set_enabled_controls(self) -> None:
        adaptation = self.translator.adaptation if self.translator is not None else None
        self.adapt.setEnabled(adaptation is not None)
        self.clear_button.setEnabled(adaptation is not None and adaptation.enabled)
        if self.translator is not None and adaptation is None:
            self.status.setText("This model does not say which languages it translates, so no memory segments "
                                "can be picked for it.")
        elif self.learn_error:
            self.status.setText(self.learn_error)
        elif adaptation is not None and adaptation.since:
            self.status.setText(f"Segments confirmed since {time.strftime('%Y-%m-%d %H:%M', time.localtime(adaptation.since))} "
                                f"adapt this model.")
        else:
            self.status.setText("")

    def _toggled(self, on: bool) -> None:
        adaptation = self.translator.adaptation if self.translator is not None else None
        if adaptation is None:
            return
        adaptation.enabled = on
        self._use_learned()
        self._remember()
        self.changed.emit()

    def clear_influence(self) -> None:
        """Only segments confirmed from now on adapt this model (Adaptation.clear)."""
        adaptation = self.translator.adaptation if self.translator is not None else None
        if adaptation is None:
            return
        adaptation.clear()
        self.learner = self.learner or self._learned(self.translator)  # a file learned since the model loaded too
        if self.learner is not None:  # the parent weights back, the learned file deleted
            self.learner.clear()
            self.translator.weights_changed()
        self._remember()
        self.changed.emit()

    def _remember(self) -> None:
        adaptation = self.translator.adaptation if self.translator is not None else None
        if adaptation is not None and self.model_key:
            self.per_model[self.model_key] = {"enabled": adaptation.enabled, "since": adaptation.since}
        self._set_enabled_controls()

    # -- the shown sentence's matches ---------------------------------------------------------------

    def show_matches(self, matches: Sequence[MemorySource]) -> None:
        self.table.setRowCount(len(matches))
        for r, match in enumerate(matches):
            for c, text in enumerate((format_prob(match.weight), match.source, match.target)):
                item = QTableWidgetItem(text)
                item.setToolTip(segment_line(match))
                item.setData(Qt.UserRole, match.entry_id)
                self.table.setItem(r, c, item)

    # -- settings -----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {k: dict(v) for k, v in self.per_model.items()}

    def from_dict(self, data: Any) -> None:
        if isinstance(data, dict):
            self.per_model = {str(k): {"enabled": bool(v.get("enabled", True)), "since": float(v.get("since", 0.0))}
                              for k, v in data.items() if isinstance(v, dict)}
