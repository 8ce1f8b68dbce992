"""Help > Keyboard shortcuts…: every shortcut of the window, read from its QActions when the dialog opens
(so the list is whatever the menus and panels define, never a copy that could go stale)."""

from __future__ import annotations

import html

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget


def action_label(action: QAction) -> str:
    """An action's text as a person reads it: no "&" mnemonic, no trailing "…"."""
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def shortcut_text(action: QAction) -> str:
    """The action's shortcuts as the platform writes them ("Ctrl+Return or Ctrl+Enter")."""
    return " or ".join(k.toString(QKeySequence.NativeText) for k in action.shortcuts() if not k.isEmpty())


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(what it does, keys) for every action with a shortcut under `window`, in the order they were made."""
    rows, seen = [], set()
    for action in window.findChildren(QAction):
        keys = shortcut_text(action)
        if keys and (action_label(action), keys) not in seen:
            seen.add((action_label(action), keys))
            rows.append((action_label(action), keys))
    return rows


def shortcuts_html(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><td style='padding:3px 18px 3px 0'><b>{html.escape(keys)}</b></td>"
                   f"<td style='padding:3px 0'>{html.escape(label)}</td></tr>" for label, keys in rows)
    return (f"<table cellspacing='0'>{body}</table><p>In the source box, Ctrl+Enter also translates. "
            "Drop a model folder or a document (.docx, .md, .srt, …) onto the window to open it.</p>")


class ShortcutsDialog(QDialog):
    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(460, 480)
        self.view = QTextBrowser()
        self.view.setHtml(shortcuts_html(shortcut_rows(window)))
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.button(QDialogButtonBox.Close).setToolTip("Close this list (Esc)")
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(buttons)

    def text(self) -> str:
        return self.view.toPlainText()
