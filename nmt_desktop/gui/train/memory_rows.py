"""The Train form's rows for fine-tuning on a translation memory (issue 45): the memory file, the general data
replayed beside it and how much, and the general dev text scored before and after (core/training/memory_data.py
says what each does). Shown when the training data is "Translation memory"."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QFormLayout

from nmt_desktop.core.config import TrainConfig

from .fields import PathRow, double_box

MEMORY_FILTER = "Translation memories (*.sqlite *.db);;All files (*)"


class MemoryRows:
    """The rows, added to the Data box's form layout; `fields()` gives their TrainConfig fields."""

    def __init__(self, form: QFormLayout, on_pick: Callable[[], None]):
        self.memory = PathRow("Translation memory", "your memory (.sqlite): its segments of the direction below",
                              on_pick, MEMORY_FILTER)
        self.replay = PathRow("Replay data", "general pairs mixed in (empty: the model's own training file)")
        self.replay_ratio = double_box(0.0, 100.0, 0.5, 1.0)
        self.replay_ratio.setSuffix(" per memory pair")
        self.general_dev = PathRow("General dev set", "general text scored before and after (empty: the model's dev)")
        for row in (self.memory, self.replay, self.general_dev):
            row.edit.setToolTip(f"{row.title}: {row.edit.placeholderText()}")
            row.button.setToolTip(f"Choose the {row.title.lower()} file")
        self.memory.edit.setToolTip("The memory's segments of the direction below are the training data; a tenth "
                                    "is held out as the dev set (the memory's domain)")
        self.replay_ratio.setToolTip("General pairs replayed per memory pair, so the model keeps what it knew "
                                     "(0: none)")
        self.rows = [("Memory", self.memory), ("Replay", self.replay), ("Replay ratio", self.replay_ratio),
                     ("General dev", self.general_dev)]
        for label, widget in self.rows:
            form.addRow(label, widget)

    def set_visible(self, form: QFormLayout, visible: bool) -> None:
        for _label, widget in self.rows:
            form.setRowVisible(widget, visible)

    def fields(self, chosen: bool) -> dict[str, Any]:
        """The memory fields of TrainConfig (all unset when the training data is not a memory)."""
        if not chosen:
            return dict(memory=None, replay=None, replay_ratio=TrainConfig.replay_ratio, general_dev=None)
        return dict(memory=self.memory.text() or None, replay=self.replay.text() or None,
                    replay_ratio=round(self.replay_ratio.value(), 4), general_dev=self.general_dev.text() or None)

    def show(self, cfg: TrainConfig) -> None:
        self.memory.setText(cfg.memory)
        self.replay.setText(cfg.replay)
        self.replay_ratio.setValue(cfg.replay_ratio)
        self.general_dev.setText(cfg.general_dev)
