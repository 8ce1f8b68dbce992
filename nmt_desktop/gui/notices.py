"""Help > Third-party notices…: the licences of everything the packaged app bundles.

packaging/notices.py writes THIRD_PARTY_NOTICES.txt beside the frozen binary (core/locations.py finds it);
it is plain text of a few MB, so it is shown read-only in a QPlainTextEdit (rich text would be slow). From
source there is no bundle to describe: a short message says where the licences are instead.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox, QPlainTextEdit, QVBoxLayout, QWidget

from nmt_desktop.core.locations import third_party_notices_path

FROM_SOURCE = ("Third-party notices are generated when the app is packaged (packaging/notices.py). Running from "
               "source, each library's licence is in its installed package; nmt-desktop itself is MIT (LICENSE).")
LICENSE_HTML = ("<p>Licensed under the MIT licence. Copyright © 2026 the nmt-desktop authors.<br>"
                "Bundles Qt and PySide6 under the LGPL-3.0; see Help › Third-party notices.</p>")


def show_notices(parent: QWidget) -> QWidget:
    """The notices in a non-modal read-only dialog (or the from-source message); returns what it opened."""
    path = third_party_notices_path()
    if path is None:
        box = QMessageBox(QMessageBox.Information, "Third-party notices", FROM_SOURCE, QMessageBox.Ok, parent)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        return box
    dialog = QDialog(parent)
    dialog.setWindowTitle("Third-party notices")
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    text = QPlainTextEdit(dialog)
    text.setReadOnly(True)
    text.setLineWrapMode(QPlainTextEdit.NoWrap)
    text.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
    try:
        text.setPlainText(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        text.setPlainText(f"Cannot read {path}: {exc}")
    buttons = QDialogButtonBox(QDialogButtonBox.Close, dialog)
    buttons.rejected.connect(dialog.close)
    layout = QVBoxLayout(dialog)
    layout.addWidget(text)
    layout.addWidget(buttons)
    dialog.resize(900, 700)
    dialog.text = text  # type: ignore[attr-defined]  (tests read it)
    dialog.show()
    return dialog
