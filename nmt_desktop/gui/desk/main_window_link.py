"""The desk's "Show in the main window" (Ctrl+I): the current segment's source and translation go to the
Translate tab, whose "Inspect this translation" scores that translation with the model (teacher forcing), so
the tab's attention grid, focus view, alternatives and the Analysis tab's alignment and attribution show that
segment through the path every inspected translation takes (translate/inspect_box.py). The desk holds no
copy of those views: one place to read a segment, the one the Translate tab already links."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker

if TYPE_CHECKING:
    from nmt_desktop.gui.window_api import WindowApi


def show_in_main_window(window: WindowApi, source: str, translation: str) -> str:
    """Put the pair in the Translate tab and inspect it; "" when started, else why not (one sentence)."""
    panel = window.translate_panel
    if panel.translator is None:
        return "Open a model in the main window first: the views show what a model makes of the segment"
    if not translation.strip():
        return "Type a translation (or Ctrl+Shift+U for the suggestion) to show it in the main window"
    if panel.running:
        return "The Translate tab is translating: stop it or let it finish, then show the segment again"
    with QSignalBlocker(panel.source):  # not the Translate tab's translate-as-you-type: the inspection shows it
        panel.source.setPlainText(source)
    panel.inspect_box.editor.setPlainText(translation)
    window.show_tab("translate")
    if not panel.inspect_box.inspect():
        return panel.inspect_box.status.text()
    window.raise_()
    window.activateWindow()
    return ""
