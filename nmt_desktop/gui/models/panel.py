"""The Models tab: bundled, installed and recent models, "Get models…" (OPUS-MT from the Hugging Face
Hub, gui/get_models_dialog.py), "Open model…" (folder or zip), removing installed models, model info and card.

Loading runs in a `ModelLoader` on its own QThread. On success `modelLoaded(translator, info)` is
emitted; on failure `loadFailed(message)` (one line) and the current model stays loaded.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFileDialog, QGroupBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QMessageBox, QProgressBar, QPushButton, QSplitter, QTextBrowser, QVBoxLayout, QWidget)

from nmt_desktop.core.locations import bundled_models_dir, default_model_path, user_models_dir  # noqa: F401
from nmt_desktop.core.formats.model_folder import human_size

from .. import theme
from .card_html import card_html
from .names import run_model_name
from ..workers import WorkerThread
from .loader import ModelInfo, ModelLoader

if TYPE_CHECKING:
    from .get_models_dialog import GetModelsDialog

log = logging.getLogger("nmt_desktop.gui.models")

TATOEBA_ATTRIBUTION = "Tatoeba Project (tatoeba.org) via manythings.org/anki, CC-BY 2.0 FR"


def _scan(folder: Path) -> list[Path]:
    """Model folders (with a config.json) and .zip files directly inside `folder`, by name."""
    try:
        found = [p for p in folder.iterdir()
                 if (p.is_dir() and (p / "config.json").is_file()) or (p.is_file() and p.suffix.lower() == ".zip")]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.name)


def bundled_models() -> list[Path]:
    """Model folders and zips in the bundled `models/` folder, by name."""
    return _scan(bundled_models_dir())


def installed_models() -> list[Path]:
    """Models the user installed into the user data folder."""
    return _scan(user_models_dir())


def _same_path(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return str(a) == str(b)


def model_label(path: str) -> str:
    """A model's name in the list: its folder's; a training run's model is named after the run (model_names.py)."""
    return run_model_name(path) or Path(path).name


def attribution(card: dict) -> str:
    """The data attribution to show for a model card ("" if none is known)."""
    for key in ("attribution", "license"):
        value = card.get(key)
        if value:
            text = value if isinstance(value, str) else str(value)
            if key == "license" and "tatoeba" in str(card).lower() and "tatoeba" not in text.lower():
                text = f"{text}; {TATOEBA_ATTRIBUTION}"
            return text
    if "tatoeba" in str(card).lower():
        return TATOEBA_ATTRIBUTION
    return ""


def info_html(info: ModelInfo | None) -> str:
    """The model's page: its card rendered readably (gui/card_html.py) and where it lives."""
    if info is None:
        return (f"<p style='color:{theme.current().muted}'>No model loaded. Pick a bundled or recent model, "
                "or open one.</p>")
    card = dict(info.card)
    if not card.get("attribution") and attribution(card):
        card["attribution"] = attribution(card)
    return card_html(card, name=info.name, src_lang=info.src_lang, tgt_lang=info.tgt_lang, layers=info.layers,
                     heads=info.heads, facts=[("Size on disk", human_size(info.size_bytes)),
                                              ("Location", str(info.path))], muted=theme.current().muted)


class ModelsPanel(QWidget):
    modelLoaded = Signal(object, object)  # translator, ModelInfo
    loadFailed = Signal(str, str)  # path, one-line message
    loadingChanged = Signal(bool)
    _request = Signal(int, str, bool)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.info: ModelInfo | None = None
        self.recent: list[str] = []
        self._load_id = 0
        self._pending: dict[int, str] = {}
        self.int8 = False  # load models for int8 decoding (the Decoding box's "int8 weights")

        self.loader = ModelLoader()
        self._thread = WorkerThread(self.loader, "model-loader")
        self._request.connect(self.loader.load)
        self.loader.finished.connect(self._on_loaded)
        self.loader.failed.connect(self._on_failed)

        self.bundled_list = QListWidget()
        self.recent_list = QListWidget()
        self._picked: QListWidgetItem | None = None
        for lst in (self.bundled_list, self.recent_list):
            lst.itemActivated.connect(self._activated)
            lst.itemClicked.connect(self._picked_item)
        self.load_button = QPushButton("Load selected")
        self.load_button.clicked.connect(self._load_selected)
        self.open_button = QPushButton("Open model folder…")
        self.open_button.clicked.connect(self.open_folder_dialog)
        self.open_zip_button = QPushButton("Open model zip…")
        self.open_zip_button.clicked.connect(self.open_zip_dialog)
        self.get_button = QPushButton("Get models…")
        self.get_button.setToolTip("Download OPUS-MT translation models (1,000+ language pairs) from the Hugging "
                                   "Face Hub")
        self.get_button.clicked.connect(lambda _checked=False: self.get_models_dialog())  # clicked(bool) is no query
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Delete the selected installed model from your models folder")
        self.remove_button.clicked.connect(self.remove_selected)
        self.parent_button = QPushButton("Back to the parent model")  # a fine-tuned model's card names its parent
        self.parent_button.setToolTip("Load the model the loaded one was fine-tuned from")
        self.parent_button.clicked.connect(self.load_parent)
        self.parent_button.hide()
        self.load_button.setToolTip("Load the selected model")
        self.open_button.setToolTip("Load a model folder from disk")
        self.open_zip_button.setToolTip("Load a zipped model folder")
        self.dialog = None  # the Get models dialog, made on first use and kept (a download runs on when closed)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumHeight(6)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.busy_label = QLabel("")
        self.busy_label.setObjectName("hint")

        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        for title, lst in (("Bundled and installed models", self.bundled_list), ("Recent models", self.recent_list)):
            box = QGroupBox(title)
            QVBoxLayout(box).addWidget(lst)
            ll.addWidget(box, 1)
        row = QHBoxLayout()
        row.addWidget(self.load_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        row.addWidget(self.get_button)
        row.addWidget(self.open_button)
        row.addWidget(self.open_zip_button)
        ll.addLayout(row)
        ll.addWidget(self.parent_button)
        ll.addWidget(self.busy_label)
        ll.addWidget(self.busy)

        self.info_view = QTextBrowser()
        self.info_view.setOpenExternalLinks(True)
        info_box = QGroupBox("Current model")
        QVBoxLayout(info_box).addWidget(self.info_view)

        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(info_box)
        split.setSizes([420, 600])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(split)
        self.refresh()
        theme.follow(self.info_view, lambda _t: self.info_view.setHtml(info_html(self.info)))  # View > Theme

    # -- lists ---------------------------------------------------------------------------------------

    def _mark_loaded(self, item: QListWidgetItem, path: str) -> None:
        """The loaded model's row: bold, with "(loaded)" after its name."""
        if self.info is None or not _same_path(path, self.info.path):
            return
        item.setText(item.text() + "  (loaded)")
        font = item.font()
        font.setBold(True)
        item.setFont(font)

    def refresh(self) -> None:
        self.bundled_list.clear()
        models = [(p, "") for p in bundled_models()] + [(p, "  (installed)") for p in installed_models()]
        for p, suffix in models:
            item = QListWidgetItem(p.name + suffix)
            item.setData(Qt.UserRole, str(p))
            item.setData(Qt.UserRole + 1, bool(suffix))  # removable: installed by the user
            item.setToolTip(str(p))
            self._mark_loaded(item, str(p))
            self.bundled_list.addItem(item)
        if not models:
            item = QListWidgetItem("No models yet — use “Get models…” or “Open model folder…”")
            item.setFlags(Qt.NoItemFlags)
            self.bundled_list.addItem(item)
        self._picked = None
        self.recent_list.clear()
        for path in self.recent:
            item = QListWidgetItem(model_label(path))
            item.setData(Qt.UserRole, path)
            item.setToolTip(path)
            self._mark_loaded(item, path)
            self.recent_list.addItem(item)
        self.info_view.setHtml(info_html(self.info))
        parent = self.parent_model()
        self.parent_button.setVisible(parent is not None)
        if parent is not None:
            self.parent_button.setText(f"Back to the parent model ({model_label(parent)})")
            self.parent_button.setToolTip(f"Load {parent}, the model this one was fine-tuned from")

    def parent_model(self) -> str | None:
        """The loaded model's parent (card "parent", written when it was fine-tuned), if it is still there."""
        parent = self.info.card.get("parent") if self.info is not None else None
        return parent if isinstance(parent, str) and Path(parent).exists() else None

    def load_parent(self) -> None:
        """Back to the model the loaded one was fine-tuned from: one click undoes a fine-tune's effect."""
        parent = self.parent_model()
        if parent is not None:
            self.load(parent)

    def picker_models(self) -> list[tuple[str, str]]:
        """(label, path) of every model to offer for translating: recently used first, then the bundled and
        installed ones (the Translate tab's model picker)."""
        listed = [(model_label(p), p) for p in self.recent]
        listed += [(p.name, str(p)) for p in bundled_models() + installed_models()]
        return listed

    def set_recent(self, paths: list[str]) -> None:
        self.recent = list(paths)
        self.refresh()

    def _activated(self, item: QListWidgetItem) -> None:
        path = item.data(Qt.UserRole)
        if path:
            self.load(path)

    def _picked_item(self, item: QListWidgetItem) -> None:
        self._picked = item

    def _load_selected(self) -> None:
        item = self._picked
        try:
            path = item.data(Qt.UserRole) if item is not None else None
        except RuntimeError:  # the list was refreshed and the item deleted
            path = None
        if path:
            self.load(path)

    def remove_selected(self) -> None:
        """Delete the selected installed model (after a confirmation); bundled ones are not removable."""
        from nmt_desktop.core.hub.installed import remove_model

        item = self._picked
        try:
            path = item.data(Qt.UserRole) if item is not None else None
            removable = bool(item.data(Qt.UserRole + 1)) if item is not None else False
        except RuntimeError:
            path, removable = None, False
        if not path or not removable:
            QMessageBox.information(self, "Remove model", "Select a model you installed (marked “installed”); "
                                                          "bundled models cannot be removed.")
            return
        name = Path(path).name
        if self.info is not None and Path(self.info.path).resolve() == Path(path).resolve():
            QMessageBox.information(self, "Remove model", f"{name} is loaded: load another model first.")
            return
        if QMessageBox.question(self, "Remove model", f"Delete {name} from {Path(path).parent}?") != QMessageBox.Yes:
            return
        try:
            remove_model(name)
        except (ValueError, OSError) as exc:
            QMessageBox.warning(self, "Remove model", str(exc))
        if path in self.recent:
            self.recent.remove(path)
        self.refresh()

    def get_models_dialog(self, query: str = "") -> "GetModelsDialog":
        """Open (or raise) the Get models dialog; an installed model refreshes the list, Load loads it."""
        from .get_models_dialog import GetModelsDialog

        if self.dialog is None:
            self.dialog = GetModelsDialog(self.window(), query)
            self.dialog.modelInstalled.connect(lambda _path: self.refresh())
            self.dialog.loadRequested.connect(self.load)
        elif query:
            self.dialog.query.setText(query)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog

    # -- opening -------------------------------------------------------------------------------------

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open model folder", str(Path.home()))
        if path:
            self.load(path)

    def open_zip_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open model zip", str(Path.home()), "Model archives (*.zip)")
        if path:
            self.load(path)

    @property
    def loading(self) -> bool:
        return bool(self._pending)

    def pending_path(self) -> str | None:
        """The model the newest load still under way is loading (None when none is)."""
        return self._pending.get(self._load_id)

    def load(self, path: str | Path) -> int:
        """Start loading a model off the UI thread; returns the load request id."""
        self._load_id += 1
        self._pending[self._load_id] = str(path)
        self.busy_label.setText(f"Loading {model_label(str(path))}…")
        self.busy.show()
        self.loadingChanged.emit(True)
        self._request.emit(self._load_id, str(path), self.int8)  # queued into the loader's thread
        return self._load_id

    def _done(self, request_id: int) -> str:
        path = self._pending.pop(request_id, "")
        if not self._pending:
            self.busy.hide()
            self.busy_label.setText("")
            self.loadingChanged.emit(False)
        return path

    def _on_loaded(self, request_id: int, result: tuple) -> None:
        path = self._done(request_id)
        if request_id != self._load_id:  # an older load finished after a newer one was asked for
            return
        translator, info = result
        self.info = info
        if path in self.recent:
            self.recent.remove(path)
        self.recent.insert(0, path)
        self.refresh()
        self.modelLoaded.emit(translator, info)

    def _on_failed(self, request_id: int, message: str) -> None:
        path = self._done(request_id)
        self.loadFailed.emit(path, message)

    def shutdown(self) -> None:
        if self.dialog is not None:
            self.dialog.shutdown()
        self._thread.stop()
