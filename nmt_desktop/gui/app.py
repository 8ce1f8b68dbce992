"""The application: QApplication set-up, the main window (tabs, menus, status bar), settings, and the
headless `gui --screenshot` mode used by the CLI.
"""

from __future__ import annotations

import base64
import gc
import logging
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QMimeData, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (QLabel, QMainWindow, QMessageBox, QProgressBar,
                               QStackedWidget, QTabWidget, QVBoxLayout, QWidget)

from nmt_desktop import __version__
from nmt_desktop.core.config import ConfigError

from . import theme
from .analysis.panel import AnalysisPanel, connect_to_translate_panel
from .waiting import HeadlessError, WindowClosed, wait_until  # noqa: F401 (re-export: scripts and the CLI use them here)
from .lifetime import (APP_TITLE, apply_saved_theme, create_app, on_unexpected_error,  # noqa: F401 (re-export)
                       raise_if_interrupted, running_app, unexpected_errors)
from .models.panel import (ModelsPanel, attribution, default_model_path, human_size, info_html,  # noqa: F401 (re-export)
                           model_label)
from .documents.dialog import DocumentDialog
from .documents.glossary_store import model_glossary
from .notices import LICENSE_HTML
from .drop import classify, install_file_drops
from .empty_state import EmptyState
from .analysis_session import AnalysisSession
from .menus import build_menus, check_theme
from .settings import Settings, setup_logging
from .server.dialog import ServerDialog
from .shortcuts import ShortcutsDialog
from .train.panel import TrainPanel
from .translate import TranslatePanel

log = logging.getLogger("nmt_desktop.gui.app")

SETTINGS_OR_BUNDLED = object()  # "choose the model from settings or the bundled default"


class MainWindow(QMainWindow):
    """The main window: Translate, Models and (later) Train tabs."""

    errorShown = Signal(str)
    modelChanged = Signal(object)  # ModelInfo

    def __init__(self, settings: Settings | None = None, model: Any = SETTINGS_OR_BUNDLED, int8: bool | None = None):
        super().__init__()
        self.settings = settings or Settings()
        self.info: Any = None
        self._tabs: dict[str, QWidget] = {}
        self._shut_down = False
        self._error_box: QMessageBox | None = None
        self.setWindowTitle(APP_TITLE)
        self.resize(1280, 820)

        self.translate_panel = TranslatePanel()
        self.empty_state = EmptyState(self.open_model)
        self.translate_stack = QStackedWidget()
        self.translate_stack.addWidget(self.empty_state)
        self.translate_stack.addWidget(self.translate_panel)
        self.models_panel = ModelsPanel()

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(False)
        self.add_tab("translate", self.translate_stack, "Translate")
        self.add_tab("models", self.models_panel, "Models")
        self.train_panel = TrainPanel()
        self.add_tab("train", self.train_panel, "Train")
        self.analysis_panel = AnalysisPanel()
        self.add_tab("analysis", self.analysis_panel, "Analysis")
        central = QWidget()
        central.setObjectName("central")
        lay = QVBoxLayout(central)
        lay.setContentsMargins(8, 8, 8, 4)
        lay.addWidget(self.tabs)
        self.setCentralWidget(central)

        self.analysis_session = AnalysisSession(self)  # File > Save / Open analysis (analysis_session.py)
        self.menus = build_menus(self)
        theme.follow(self, lambda _theme: check_theme(self.menus))  # the View menu ticks what is in use
        self.document_dialog: DocumentDialog | None = None
        self.server_dialog: ServerDialog | None = None  # Tools > Local server… (gui/server/dialog.py)
        install_file_drops(self, self.handle_drop)  # files dropped anywhere on the window (gui/drop.py)
        self.model_label = QLabel("No model")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setMaximumHeight(12)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.statusBar().addPermanentWidget(self.busy)
        self.statusBar().addPermanentWidget(self.model_label)

        self.models_panel.modelLoaded.connect(self._on_model_loaded)
        self.translate_panel.model_picker.modelChosen.connect(self.load_model)
        self.models_panel.loadFailed.connect(self._on_load_failed)
        self.models_panel.loadingChanged.connect(self._update_busy)
        self.translate_panel.busyChanged.connect(self._update_busy)
        self.translate_panel.statusMessage.connect(lambda m: self.statusBar().showMessage(m, 8000))
        self.translate_panel.translationFailed.connect(self._on_translation_failed)
        self.translate_panel.inspect_box.failed.connect(lambda m: self._report_error(m, "Cannot inspect"))
        self.modelChanged.connect(self.train_panel.set_model)
        connect_to_translate_panel(self.analysis_panel, self.translate_panel,
                                   lambda m: self._report_error(m, "Analysis failed"))
        self.translate_panel.alternativeForced.connect(lambda *_: self.show_tab("analysis"))
        self.analysis_panel.ablation.worker.failed.connect(
            lambda _i, m: self.statusBar().showMessage(f"Re-translation failed: {m}", 8000))
        self.train_panel.modelReady.connect(self._on_trained_model)
        self.train_panel.loadModelRequested.connect(self.load_model)
        self.train_panel.trainingFailed.connect(lambda m: self._report_error(m, "Training failed"))
        self.train_panel.statusMessage.connect(lambda m: self.statusBar().showMessage(m, 8000))

        on_unexpected_error(self._on_unexpected_error)
        self._restore_settings()
        self._refresh_model_picker()
        # Everything imported and built so far (torch, Qt wrappers, pyqtgraph: ~10^5 objects) lives as long as the
        # app: moved out of the collector's view, a full collection no longer walks it on the GUI thread.
        gc.freeze()
        if int8 is not None:
            self.translate_panel.options.int8.setChecked(int8)
        self.models_panel.int8 = self.translate_panel.options.int8.isChecked()
        self.translate_panel.options.int8.toggled.connect(self._set_int8)
        if model is SETTINGS_OR_BUNDLED:
            last = self.settings.get("last_model")
            model = last if isinstance(last, str) and Path(last).exists() else default_model_path()
        if model is not None:
            self.load_model(model)

    # -- tabs ------------------------------------------------------------------------------------------

    def add_tab(self, key: str, widget: QWidget, title: str) -> int:
        """Add a tab under a stable key (later issues add e.g. the real Train tab)."""
        if key in self._tabs:
            index = self.tabs.indexOf(self._tabs[key])
            self.tabs.removeTab(index)
            self._tabs[key].deleteLater()
            index = self.tabs.insertTab(index, widget, title)
        else:
            index = self.tabs.addTab(widget, title)
        self._tabs[key] = widget
        return index

    def show_tab(self, key: str) -> None:
        self.tabs.setCurrentWidget(self._tabs[key])

    def tab(self, key: str) -> QWidget:
        return self._tabs[key]

    # -- menus ---------------------------------------------------------------------------------------------

    def set_theme(self, scheme: str) -> None:
        """View > Theme: light, dark or the system's; saved for the next start."""
        theme.apply(scheme)
        self.settings.set("theme", scheme)
        self.settings.save()

    def set_colormap(self, name: str) -> None:
        """View > Colour map: the heatmaps' colours; saved for the next start."""
        theme.apply(colormap=name)
        self.settings.set("colormap", name)
        self.settings.save()

    def show_shortcuts(self) -> ShortcutsDialog:
        self._shortcuts = ShortcutsDialog(self)
        self._shortcuts.setAttribute(Qt.WA_DeleteOnClose)
        self._shortcuts.open()
        return self._shortcuts

    def open_model(self) -> None:
        self.models_panel.open_folder_dialog()

    def translate_file(self, path: str | os.PathLike | None = None) -> DocumentDialog | None:
        """File > Translate file…: the document dialog with the loaded model, on `path` (read and translated at
        once) or on a file the user picks (read, then Translate); a bad `path` or no model is one sentence in the
        usual error box."""
        panel = self.translate_panel
        if panel.translator is None:
            self._report_error("no model is loaded: open a model first, then translate a file", "Cannot translate")
            return None
        try:
            cfg = panel.options.config()
        except ConfigError as exc:
            self._report_error(f"invalid decoding options: {exc}", "Cannot translate")
            return None
        if self.document_dialog is not None:
            self.document_dialog.shutdown()
            self.document_dialog.deleteLater()
        tgt = panel.chosen_target_language() or (self.info.tgt_lang if self.info is not None else "")
        info = self.info
        self.document_dialog = DocumentDialog(panel.translator, cfg, (tgt or "").strip("<>"), self,
                                              model_path=info.path if info is not None else None,
                                              source_lang=info.src_lang if info is not None else "")
        if path is None:
            self.document_dialog.show()
            self.document_dialog.choose_file()
            return self.document_dialog
        error = self.document_dialog.translate_file(path)
        if error:
            self._report_error(error, "Cannot translate file")
            return None
        self.document_dialog.show()
        return self.document_dialog

    # -- drag and drop -------------------------------------------------------------------------------------

    def handle_drop(self, mime: QMimeData) -> None:
        """A model folder or .zip loads; a document (.docx, .md, .txt, …) opens Translate file…; anything else:
        one sentence."""
        drop = classify(mime)
        if drop.kind == "model":
            self.load_model(drop.path)
        elif drop.kind == "text":
            self.translate_file(drop.path)
        else:
            self.statusBar().showMessage(drop.message, 10000)

    # -- models --------------------------------------------------------------------------------------------

    def load_model(self, path: str | os.PathLike) -> int:
        self.empty_state.set_loading(model_label(str(path)) if self.info is None else None)
        return self.models_panel.load(path)

    def _set_int8(self, on: bool) -> None:
        """The Decoding box's int8 switch: reload the current model with or without int8 layers."""
        self.models_panel.int8 = on
        pending = self.models_panel.pending_path()  # a load under way is redone with the new setting
        if pending is not None:
            self.load_model(pending)
        elif self.info is not None and self.info.int8 != on:
            self.load_model(self.info.path)

    def _on_model_loaded(self, translator: Any, info: Any) -> None:
        self.info = info
        translator.glossary = model_glossary(getattr(info, "path", None))  # the Translate tab forces its terms in
        self.translate_panel.set_translator(translator, info)
        self.analysis_panel.set_translator(translator, info)
        self.translate_stack.setCurrentWidget(self.translate_panel)
        langs = f" ({info.languages})" if info.languages else ""
        self.model_label.setText(f"Model: {info.name}{langs} · {human_size(info.size_bytes)}"
                                 + (" · int8" if info.int8 else ""))
        # the platform appends the app's display name ("… — NMT Desktop"): the title names only the model
        self.setWindowTitle(f"{info.name}{langs}")
        self.settings.set("last_model", str(info.path))
        self.settings.add_recent_model(str(info.path))
        self.statusBar().showMessage(f"Loaded {info.name}", 5000)
        self._refresh_model_picker()
        self.modelChanged.emit(info)

    def _refresh_model_picker(self) -> None:
        """The Translate tab's model picker lists what the Models tab offers, the loaded model selected; the
        Compare view offers the same list for its model B."""
        models = self.models_panel.picker_models()
        self.translate_panel.model_picker.set_models(models, self.info.path if self.info is not None else None)
        self.analysis_panel.compare.set_models(models)

    def _on_trained_model(self, path: str) -> None:
        """A training run ended: its model joins the model picker (recent models), one click loads it."""
        self.settings.add_recent_model(path)
        self.models_panel.set_recent(self.settings.recent_models)
        self._refresh_model_picker()
        self.statusBar().showMessage(f"Trained model ready: {path}", 10000)

    def _on_load_failed(self, path: str, message: str) -> None:
        self._refresh_model_picker()  # the picker shows the model still loaded, not the one that failed
        if self.info is None:
            self.empty_state.set_loading(None)
        self._report_error(message, "Cannot load model")

    def _update_busy(self, _busy: bool = False) -> None:
        self.busy.setVisible(self.models_panel.loading or self.translate_panel.running)

    # -- errors and about ------------------------------------------------------------------------------

    def _report_error(self, message: str, title: str = "Error") -> None:
        message = " ".join(str(message).split())
        log.warning("%s: %s", title, message)
        self.errorShown.emit(message)
        self.statusBar().showMessage(f"{title}: {message}", 10000)
        self.show_error(message, title)

    def _on_translation_failed(self, _request_id: int, message: str) -> None:
        """Said inline under the translation (the panel's error line) and in the status bar: no modal box."""
        message = " ".join(str(message).split())
        log.warning("Translation failed: %s", message)
        self.errorShown.emit(message)
        self.statusBar().showMessage(f"Translation failed: {message}", 10000)

    def _on_unexpected_error(self, line: str) -> None:
        """A bug reached the event loop: said in one sentence, the traceback in the log, the app stays up."""
        self._report_error(f"{line} (this is a bug; the details are in the app log)", "Unexpected error")

    def show_error(self, message: str, title: str = "Error") -> None:
        """Show an error without blocking (a window-modal box opened with open(), never exec())."""
        box = QMessageBox(QMessageBox.Critical, title, message, QMessageBox.Ok, self)
        box.setAttribute(Qt.WA_DeleteOnClose)
        self._error_box = box
        box.open()

    def about_html(self) -> str:
        parts = [f"<h2>{APP_TITLE} {__version__}</h2>",
                 "<p>Encoder-decoder Transformer machine translation with live attention maps.</p>", LICENSE_HTML]
        if self.info is not None:
            parts.append(info_html(self.info))  # the same readable card as the Models tab
        else:
            parts.append("<p>No model loaded.</p>")
        return "".join(parts)

    def show_about(self) -> None:
        box = QMessageBox(QMessageBox.Information, f"About {APP_TITLE}", self.about_html(), QMessageBox.Ok, self)
        box.setTextFormat(Qt.RichText)
        box.setAttribute(Qt.WA_DeleteOnClose)
        self._about_box = box
        box.open()

    # -- settings and closing ----------------------------------------------------------------------------

    def _restore_settings(self) -> None:
        s = self.settings
        geometry = s.get("geometry")
        if isinstance(geometry, str):
            try:
                self.restoreGeometry(QByteArray(base64.b64decode(geometry)))
            except ValueError:
                pass
        self.translate_panel.restore_settings(s.data)
        self.models_panel.set_recent(s.recent_models)

    def save_settings(self) -> None:
        s = self.settings
        s.set("geometry", base64.b64encode(bytes(self.saveGeometry())).decode("ascii"))
        s.data.update(self.translate_panel.settings_dict())
        s.set("recent_models", self.models_panel.recent[:8] or s.recent_models)
        s.save()

    def shutdown(self) -> None:
        """Save settings and stop the worker threads (idempotent)."""
        if self._shut_down:
            return
        self._shut_down = True
        self.save_settings()
        self.translate_panel.shutdown()
        self.models_panel.shutdown()
        self.train_panel.shutdown()
        self.analysis_panel.shutdown()
        if self.document_dialog is not None:
            self.document_dialog.shutdown()
        if self.server_dialog is not None:  # the local server child goes with the app: SIGTERM, then kill
            self.server_dialog.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt name
        if not self._shut_down and not self.train_panel.confirm_close():  # asks during a training run
            event.ignore()
            return
        self.shutdown()
        super().closeEvent(event)


# -- running ----------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Open the main window on the last or default bundled model and run the event loop; the exit code is
    the loop's (0 when the window is closed or File > Quit, 130/143 after Ctrl+C/SIGTERM)."""
    setup_logging()
    with running_app(argv) as app:
        window = MainWindow()
        window.show()
        return int(app.exec())
