"""What the main window's parts ask of it: the menus, saved analyses, headless screenshots and the analysis
registry's screenshot steps take the window as a `WindowApi`, so none of them imports app.py, which
imports them (app.MainWindow satisfies it structurally)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import os

    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QDialog, QMenuBar, QStatusBar, QTabWidget, QWidget

    from .analysis.panel import AnalysisPanel
    from .models.panel import ModelsPanel
    from .translate.panel import TranslatePanel
    from .models.loader import ModelInfo
    from .settings import Settings


class AnalysisFiles(Protocol):
    """File > Save analysis… / Open analysis… (analysis_session.AnalysisSession)."""

    def save_dialog(self) -> Any: ...

    def open_dialog(self) -> Any: ...


class WindowApi(Protocol):
    translate_panel: TranslatePanel
    analysis_panel: AnalysisPanel
    models_panel: ModelsPanel
    analysis_session: AnalysisFiles
    tabs: QTabWidget
    info: ModelInfo | None  # the loaded model, None before the first load
    settings: Settings
    server_dialog: QDialog | None  # Tools > Local server… (server/dialog.py: made on first use, owns the server child)
    modelChanged: SignalInstance  # noqa: N815 - Qt signal name

    def show_tab(self, key: str) -> None: ...

    def tab(self, key: str) -> QWidget: ...

    def load_model(self, path: str | os.PathLike) -> int: ...

    def open_model(self) -> None: ...

    def translate_file(self, path: str | os.PathLike | None = None) -> Any: ...

    def show_error(self, message: str, title: str = "Error") -> None: ...

    def show_shortcuts(self) -> Any: ...

    def show_about(self) -> None: ...

    def set_theme(self, scheme: str) -> None: ...

    def set_colormap(self, name: str) -> None: ...

    def menuBar(self) -> QMenuBar: ...  # noqa: N802 - Qt name

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt name

    def close(self) -> bool: ...
