"""The model picker: the models one can translate with (recently used first, then the bundled and installed
ones), the loaded one shown. On the Translate tab, choosing another loads it and the panel translates the text
again with it (TranslatePanel.set_translator); the Compare view uses the same list for its model B. The window
fills both from the Models tab (`ModelsPanel.picker_models` through `set_models`).

It lives beside the tabs rather than in gui/translate so the Analysis views can use it without an import cycle
(gui/translate already imports gui/analysis)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QComboBox, QSizePolicy, QWidget


def _key(path: str | Path) -> str:
    try:
        return str(Path(path).resolve())
    except OSError:
        return str(path)


class ModelPicker(QComboBox):
    """`modelChosen(path)` when the user picks a model other than the one shown."""

    modelChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setToolTip("The model that translates: pick another to load it and translate the text again with it "
                        "(more in the Models tab: Get models…, Open model folder…)")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(14)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._current = ""
        self.activated.connect(self._picked)

    def set_models(self, models: list[tuple[str, str]], current: str | Path | None) -> None:
        """`models`: (label, path) in the order to list them (duplicates by path are dropped); `current`: the
        loaded model's path (shown selected; listed first-come if missing)."""
        self._current = _key(current) if current else ""
        seen: set[str] = set()
        with QSignalBlocker(self):
            self.clear()
            for label, path in models:
                key = _key(path)
                if key in seen:
                    continue
                seen.add(key)
                self.addItem(label, key)
                self.setItemData(self.count() - 1, str(path), Qt.ItemDataRole.ToolTipRole)
            if self._current and self._current not in seen:
                self.insertItem(0, Path(self._current).name, self._current)
            index = self.findData(self._current) if self._current else -1
            self.setCurrentIndex(index)
        self.setEnabled(self.count() > 0)

    def _picked(self, index: int) -> None:
        path = self.itemData(index)
        if path and path != self._current:
            self.modelChosen.emit(path)
