"""Every control a person can use says what it does: the real main window (tiny model, a translation done),
every tab, every Analysis view, the Train form, the Get models dialog and the Translate text file dialog."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import (QAbstractButton, QAbstractSpinBox, QCheckBox, QComboBox, QLineEdit,  # noqa: E402
                               QSlider, QWidget)

from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402

CONTROLS = (QAbstractButton, QComboBox, QAbstractSpinBox, QLineEdit, QSlider, QCheckBox)
# Qt's own parts, not the app's controls: they carry no tooltip of ours and need none
QT_INTERNALS = {
    "qt_scrollarea_hcontainer", "qt_scrollarea_vcontainer",  # scroll bars' containers
    "qt_spinbox_lineedit",  # the text field inside every spin box (the spin box has the tooltip)
    "ScrollLeftButton", "ScrollRightButton",  # a tab bar's scroll arrows
    "qt_toolbar_ext_button",  # a toolbar's overflow arrow
    "qt_tableview_cornerbutton",  # a table's select-all corner
    "qt_menubar_ext_button",  # a menu bar's overflow arrow
}


def _is_internal(widget: QWidget) -> bool:
    w = widget
    while w is not None:
        if w.objectName() in QT_INTERNALS:
            return True
        if isinstance(w, (QComboBox, QAbstractSpinBox)) and w is not widget:
            return True  # the line edit of an editable combo box or a spin box belongs to it
        w = w.parentWidget()
    return False


def untipped(root: QWidget) -> list[str]:
    """The controls under `root` without a tooltip, named so a failure says where to look. Disabled ones count
    too: they are enabled in another state (a model loaded, a run finished, another option chosen)."""
    missing = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, CONTROLS) or _is_internal(widget):
            continue
        if not widget.toolTip().strip():
            text = widget.text() if hasattr(widget, "text") else ""
            parent = widget.parentWidget()
            missing.append(f"{type(widget).__name__} {text!r} {widget.objectName()!r} "
                           f"in {type(parent).__name__ if parent else None}")
    return missing


def test_every_control_has_a_tooltip(qtbot, open_main_window, tiny_model_dir, tmp_path) -> None:
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate("red cat runs\nblue dog")
    missing: list[str] = []
    for key in ("translate", "models", "train", "analysis"):
        window.show_tab(key)
        missing += untipped(window.tab(key))
    analysis = window.analysis_panel
    tabs = getattr(analysis, "tabs", None)
    for i in range(tabs.count() if tabs is not None else 0):
        tabs.setCurrentIndex(i)
        missing += untipped(tabs.widget(i))
    for toggle in ("show_focus", "show_grid"):  # both faces of the attention view
        if hasattr(panel.view, toggle):
            getattr(panel.view, toggle)()
            missing += untipped(panel.view)
    missing += untipped(window.models_panel.get_models_dialog())
    doc = tmp_path / "doc.txt"
    doc.write_text("red cat\n", encoding="utf-8")
    dialog = window.translate_file(doc)
    missing += untipped(dialog)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    missing += untipped(dialog)  # Save enabled now
    missing += untipped(window.show_shortcuts())
    assert not missing, "controls without a tooltip:\n" + "\n".join(sorted(set(missing)))
