"""Tools > Local server… (issue 43), used as a translator uses it: the menu opens the dialog, clicks on its real
controls start a real `nmt-desktop serve` child on a free port with the tiny model, a real HTTP request from
this test reaches it, and its row and counters appear; Stop (a click) ends the child; closing the app ends it
too. A host off this computer without a key is refused in one sentence and starts nothing; a port in use is one
sentence from the child; the settings are remembered."""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QApplication, QLabel, QLineEdit

from limits import SLOW_TIMEOUT_MS, TIMEOUT_MS, wait_for

from nmt_desktop.gui.server.dialog import ServerDialog
from nmt_desktop.gui.server.options import ServerOptions
from nmt_desktop.gui.settings import Settings


def click(qtbot, widget) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def open_dialog(window) -> ServerDialog:
    window.menus.actions["server"].trigger()
    dialog = window.server_dialog
    assert isinstance(dialog, ServerDialog) and dialog.isVisible()
    return dialog


def status_text(window) -> str:
    label = window.statusBar().findChild(QLabel, "server-status")
    return label.text() if label is not None and label.isVisibleTo(window) else ""


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def window(open_main_window, tiny_model_dir):
    return open_main_window(tiny_model_dir)


def test_start_translate_log_counters_and_stop_by_clicking(window, qtbot, config_dir) -> None:
    dialog = open_dialog(window)
    ticked = dialog.options().models
    assert len(ticked) == 1 and os.path.samefile(ticked[0], window.info.path)  # the loaded model, ticked
    dialog.port.setValue(0)  # any free port
    click(qtbot, dialog.start_button)
    assert dialog.running and not dialog.start_button.isEnabled()
    qtbot.waitUntil(lambda: status_text(window).startswith("Server on 127.0.0.1:"), timeout=SLOW_TIMEOUT_MS)
    host, port = dialog.server.address
    assert status_text(window) == f"Server on {host}:{port}" and port > 0
    assert f"http://127.0.0.1:{port}" in dialog.state_label.text()

    model = dialog.server.models[0]
    answer = post(f"http://127.0.0.1:{port}/translate",
                  {"q": ["red cat runs", "blue dog"], "source": model["source"] or "auto",
                   "target": model["target"], "format": "text"})
    assert answer["translatedText"] == ["rot katze rennt", "blau hund"]
    qtbot.waitUntil(lambda: dialog.log.rowCount() == 1, timeout=TIMEOUT_MS)
    row = [dialog.log.item(0, c).text() for c in range(dialog.log.columnCount())]
    assert row[1:6] == ["127.0.0.1", "POST /translate", "200", "2", str(len("red cat runs") + len("blue dog"))]
    assert dialog.counter_label.text().startswith("1 request · 2 segments · 20 characters · 0 errors · ")

    pid = dialog.server.pid()
    click(qtbot, dialog.stop_button)
    qtbot.waitUntil(lambda: not dialog.running, timeout=SLOW_TIMEOUT_MS)
    wait_for(lambda: not alive(pid), "the stopped server's process to go")
    assert status_text(window) == "" and dialog.state_label.text() == "Stopped."
    assert dialog.error == "" and dialog.start_button.isEnabled()
    saved = Settings(config_dir).get("server")
    assert saved["port"] == 0 and saved["host"] == "127.0.0.1" and saved["models"] == ticked


def test_another_host_needs_a_key_and_nothing_starts(window, qtbot) -> None:
    dialog = open_dialog(window)
    dialog.host.setText("0.0.0.0")
    dialog.key.clear()
    click(qtbot, dialog.start_button)
    assert not dialog.running and dialog.server.pid() == 0
    assert dialog.error_label.isVisibleTo(dialog)
    assert dialog.error.startswith("Listening on 0.0.0.0 lets other computers use the server, so it needs an API key")
    assert dialog.error.endswith("or listen on 127.0.0.1.") and "\n" not in dialog.error


def test_generated_key_is_masked_and_copied(window, qtbot) -> None:
    dialog = open_dialog(window)
    assert not dialog.copy_button.isEnabled()  # nothing to copy yet
    controls = [w for kind in (QAbstractButton, QAbstractSpinBox, QLineEdit) for w in dialog.findChildren(kind)
                if w.objectName() not in ("qt_spinbox_lineedit", "qt_tableview_cornerbutton")]  # Qt's own parts
    assert len(controls) >= 8 and [w for w in controls if not w.toolTip()] == []  # each says what it does
    click(qtbot, dialog.generate_button)
    key = dialog.key.text()
    assert len(key) == 32 and dialog.key.echoMode() == QLineEdit.EchoMode.Password
    click(qtbot, dialog.copy_button)
    assert QApplication.clipboard().text() == key
    click(qtbot, dialog.show_key)
    assert dialog.key.echoMode() == QLineEdit.EchoMode.Normal


def test_the_key_is_required_and_never_on_the_command_line(window, qtbot, config_dir) -> None:
    dialog = open_dialog(window)
    click(qtbot, dialog.generate_button)
    key = dialog.key.text()
    dialog.port.setValue(0)
    click(qtbot, dialog.start_button)
    qtbot.waitUntil(lambda: dialog.server.address is not None, timeout=SLOW_TIMEOUT_MS)
    port, model = dialog.server.address[1], dialog.server.models[0]
    with open(f"/proc/{dialog.server.pid()}/cmdline", "rb") as cmdline:
        assert key.encode() not in cmdline.read()  # every local user may read a command line
    key_file = config_dir / "server-api-key"
    assert key_file.read_text().split() == [key] and key_file.stat().st_mode & 0o077 == 0
    body = {"q": "red cat", "source": model["source"] or "auto", "target": model["target"]}
    with pytest.raises(urllib.error.HTTPError) as refused:
        post(f"http://127.0.0.1:{port}/translate", body)
    assert refused.value.code in (400, 403)
    assert post(f"http://127.0.0.1:{port}/translate", {**body, "api_key": key})["translatedText"] == "rot katze"
    click(qtbot, dialog.stop_button)
    qtbot.waitUntil(lambda: not dialog.running, timeout=SLOW_TIMEOUT_MS)


def test_port_in_use_is_one_sentence(window, qtbot) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        dialog = open_dialog(window)
        dialog.port.setValue(port)
        click(qtbot, dialog.start_button)
        qtbot.waitUntil(lambda: not dialog.running, timeout=SLOW_TIMEOUT_MS)
    assert dialog.error.startswith(f"The server stopped: cannot listen on 127.0.0.1:{port}"), dialog.error
    assert "\n" not in dialog.error and "Traceback" not in dialog.error
    assert status_text(window) == "" and dialog.start_button.isEnabled()


def test_a_bad_model_is_one_sentence(window, qtbot, tmp_path) -> None:
    dialog = open_dialog(window)
    dialog.set_models([("broken", str(tmp_path))], [str(tmp_path)])  # an empty folder: no model in it
    dialog.port.setValue(0)
    click(qtbot, dialog.start_button)
    qtbot.waitUntil(lambda: not dialog.running, timeout=SLOW_TIMEOUT_MS)
    assert dialog.error.startswith("The server stopped: ") and str(tmp_path) in dialog.error, dialog.error
    assert "\n" not in dialog.error and "Traceback" not in dialog.error


def test_closing_the_app_stops_the_server(window, qtbot) -> None:
    dialog = open_dialog(window)
    dialog.port.setValue(0)
    click(qtbot, dialog.start_button)
    qtbot.waitUntil(lambda: dialog.server.address is not None, timeout=SLOW_TIMEOUT_MS)
    pid = dialog.server.pid()
    dialog.close()  # the dialog's window closed: the server keeps running
    assert dialog.running and status_text(window).startswith("Server on ")
    window.close()
    wait_for(lambda: not alive(pid), "the server child to end with the app")


def test_remembered_options_come_back(config_dir, tmp_path) -> None:
    settings = Settings(config_dir)
    settings.set("server", ServerOptions("127.0.0.1", 8500, [str(tmp_path)], "k" * 32).to_settings())
    settings.save()
    dialog = ServerDialog(Settings(config_dir), [("a model", str(tmp_path)), ("other", "en-fr")])
    try:
        options = dialog.options()
        assert (options.host, options.port, options.models, options.api_key) == \
            ("127.0.0.1", 8500, [str(tmp_path)], "k" * 32)
    finally:
        dialog.deleteLater()


def test_options_rules() -> None:
    assert ServerOptions(models=["m"]).problem() is None
    assert ServerOptions(models=[]).problem() == "Tick at least one model for the server to translate with."
    assert ServerOptions(host="192.168.1.5", models=["m"], api_key="secret").problem() is None
    assert ServerOptions(host="localhost", models=["m"]).problem() is None
    assert ServerOptions.from_settings({"port": "x", "host": 3, "models": "m"}) == ServerOptions()
    assert ServerOptions(models=["m"], api_key="two words").problem() == \
        "The API key may not hold spaces or #: generate one instead."
    with pytest.raises(ValueError):
        ServerOptions(models=["m"], api_key="k").serve_arguments()  # a key never goes on the command line
