"""Tools > Local server…: start and stop `nmt-desktop serve` for the tools translators work in (Weblate,
Subtitle Edit, OmegaT, the OPUS-CAT plugins for Trados and memoQ), and watch what they ask of it.

The dialog belongs to the window for its whole life: closing it only hides it, the server (a child process,
process.py) keeps running while the window translates, the status bar says "Server on HOST:PORT", and the
window's shutdown stops it (SIGTERM, then kill after a grace period). What was started is remembered in the
app's settings (options.py), so the next start serves the same port, models and key.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QApplication, QCheckBox, QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from ..settings import Settings
from .options import SETTINGS_KEY, ServerOptions, generate_key, is_loopback
from .process import ServerProcess
from .request_log import RequestLog, ServerCounters

if TYPE_CHECKING:
    from ..window_api import WindowApi

KEY_PLACEHOLDER = "none: any program on this computer may translate"
KEY_FILE = "server-api-key"  # beside the settings; the child reads the key here (options.write_key_file)


class ServerDialog(QDialog):
    """The server's controls, its request log and counters; `statusChanged(text)` for the window's status bar
    ("" when stopped)."""

    statusChanged = Signal(str)

    def __init__(self, settings: Settings, models: list[tuple[str, str]], loaded: str | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Local server")
        self.resize(820, 600)
        self.settings = settings
        self.server = ServerProcess(self)
        self.counters = ServerCounters()
        self.error = ""  # the last failure's one sentence, "" when none
        saved = ServerOptions.from_settings(settings.get(SETTINGS_KEY))

        self.models = QListWidget()
        self.models.setToolTip("The models the server translates with; a request picks one by its language pair")
        self.models.setMaximumHeight(110)
        self.set_models(models, saved.models or ([loaded] if loaded else []))
        self.host = QLineEdit(saved.host)
        self.host.setToolTip("127.0.0.1: only programs on this computer can connect. Any other address lets "
                             "other computers connect, and then an API key is required")
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setSpecialValueText("any free port")
        self.port.setValue(saved.port)
        self.port.setToolTip("LibreTranslate clients default to 5000, the OPUS-CAT plugins to 8500")
        self.key = QLineEdit(saved.api_key)
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText(KEY_PLACEHOLDER)
        self.key.setToolTip("Clients send it as api_key (LibreTranslate) or tokenCode (OPUS-CAT); empty: no key")
        self.generate_button = self._button("Generate", "Make a new random key", self.generate_key)
        self.show_key = QCheckBox("Show")
        self.show_key.setToolTip("Show the key's characters")
        self.show_key.toggled.connect(lambda on: self.key.setEchoMode(
            QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password))
        self.copy_button = self._button("Copy", "Copy the key, to paste into a tool's settings", self.copy_key)
        self.copy_button.setEnabled(bool(saved.api_key))
        self.key.textChanged.connect(lambda text: self.copy_button.setEnabled(bool(text)))
        key_row = QHBoxLayout()
        key_row.addWidget(self.key, 1)
        for widget in (self.show_key, self.generate_button, self.copy_button):
            key_row.addWidget(widget)
        form = QFormLayout()
        form.addRow("Models", self.models)
        form.addRow("Host", self.host)
        form.addRow("Port", self.port)
        form.addRow("API key", key_row)

        self.start_button = self._button("Start", "Start the server with these settings", self.start)
        self.start_button.setObjectName("primaryButton")
        self.stop_button = self._button("Stop", "Stop the server (requests under way finish first)", self.stop)
        self.stop_button.setEnabled(False)
        self.close_button = self._button("Close", "Hide this window; the server keeps running", self.hide)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        self.state_label = QLabel("Stopped.")
        self.state_label.setWordWrap(True)
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel("")
        self.error_label.setObjectName("errorBox")  # coloured by the theme (gui/theme.py)
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.counter_label = QLabel(self.counters.text())
        self.log = RequestLog()

        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addLayout(buttons)
        lay.addWidget(self.state_label)
        lay.addWidget(self.error_label)
        lay.addWidget(self.counter_label)
        lay.addWidget(self.log, 1)

        self.server.listening.connect(self._on_listening)
        self.server.request.connect(self._on_request)
        self.server.failed.connect(self._on_failed)
        self.server.stopped.connect(self._on_stopped)

    def _button(self, text: str, tip: str, slot) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.clicked.connect(lambda *_: slot())
        return button

    # -- the settings ----------------------------------------------------------------------------------

    def set_models(self, models: list[tuple[str, str]], checked: list[str]) -> None:
        """The app's models (label, path), each once; those in `checked` ticked."""
        wanted = {_key(p) for p in checked}
        self.models.clear()
        seen: set[str] = set()
        for label, path in models:
            if _key(path) in seen:
                continue
            seen.add(_key(path))
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if _key(path) in wanted else Qt.CheckState.Unchecked)
            self.models.addItem(item)

    def options(self) -> ServerOptions:
        models = [self.models.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.models.count())
                  if self.models.item(i).checkState() == Qt.CheckState.Checked]
        return ServerOptions(host=self.host.text().strip(), port=self.port.value(), models=models,
                             api_key=self.key.text().strip())

    def generate_key(self) -> None:
        self.key.setText(generate_key())

    def copy_key(self) -> None:
        if self.key.text():
            QApplication.clipboard().setText(self.key.text())

    # -- starting and stopping -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.server.running

    def start(self) -> bool:
        """Start the server, or say in one sentence why not (nothing starts then)."""
        if self.server.running:
            return False
        options = self.options()
        problem = options.problem()
        if problem:
            self._show_error(problem)
            return False
        self._show_error("")
        self.settings.set(SETTINGS_KEY, options.to_settings())
        self.settings.save()
        self.counters = ServerCounters()
        self.counter_label.setText(self.counters.text())
        self.log.setRowCount(0)
        key_file = options.write_key_file(self.settings.path.parent / KEY_FILE) if options.api_key else None
        self.server.start(options.serve_arguments(key_file))
        self.state_label.setText(f"Starting on {options.host}:{options.port or 'a free port'}…")
        self._set_running(True)
        return True

    def stop(self) -> None:
        if self.server.running:
            self.state_label.setText("Stopping (requests under way finish first)…")
            self.stop_button.setEnabled(False)
            self.server.stop()

    def shutdown(self) -> None:
        """The window is closing: the server goes with it (SIGTERM, killed after the grace period)."""
        self.server.stop_and_wait()

    def _set_running(self, running: bool) -> None:
        for widget in (self.models, self.host, self.port, self.key, self.generate_button, self.start_button):
            widget.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def _on_listening(self, event: dict) -> None:
        host, port = self.server.address or (self.host.text(), self.port.value())
        url = f"http://{host}:{port}"
        names = ", ".join(f"{m.get('name')} ({m.get('source')}→{m.get('target')})"
                          for m in event.get("models", []) if isinstance(m, dict))
        where = "this computer only" if is_loopback(host) else "other computers too, with the API key"
        self.state_label.setText(f"Serving {names or 'the models'} at {url} ({where}). LibreTranslate clients: "
                                 f"{url}; OPUS-CAT plugins: host {host}, port {port}.")
        self.statusChanged.emit(f"Server on {host}:{port}")

    def _on_request(self, event: dict) -> None:
        self.counters.add(event)
        self.counter_label.setText(self.counters.text())
        self.log.add(event)

    def _on_failed(self, message: str) -> None:
        self._show_error(f"The server stopped: {message}")

    def _on_stopped(self) -> None:
        self._set_running(False)
        if not self.error:
            self.state_label.setText("Stopped.")
        else:
            self.state_label.setText("Not running.")
        self.statusChanged.emit("")

    def _show_error(self, message: str) -> None:
        self.error = " ".join(message.split())
        self.error_label.setText(self.error)
        self.error_label.setVisible(bool(self.error))


def _key(path: str) -> str:
    """One spelling per model: a folder's resolved path, or a name as given."""
    candidate = Path(path).expanduser()
    return str(candidate.resolve()) if candidate.exists() else path


def open_server_dialog(window: WindowApi) -> ServerDialog:
    """Tools > Local server…: the window's one server dialog (made on first use), its models list refreshed
    while the server is stopped, and its state in the status bar."""
    dialog = window.server_dialog
    loaded = str(window.info.path) if window.info is not None else None
    if not isinstance(dialog, ServerDialog):
        dialog = ServerDialog(window.settings, window.models_panel.picker_models(), loaded, window)  # type: ignore[arg-type]
        status = QLabel("")
        status.setObjectName("server-status")
        status.hide()
        window.statusBar().addPermanentWidget(status)
        dialog.statusChanged.connect(lambda text: (status.setText(text), status.setVisible(bool(text))))
        window.server_dialog = dialog
    elif not dialog.running:
        dialog.set_models(window.models_panel.picker_models(), dialog.options().models or ([loaded] if loaded else []))
    dialog.show()
    dialog.raise_()
    return dialog
