"""Help > Third-party notices… and the licence in the About box: the packaged app's notices file shown
read-only; from source, one message saying where the licences are."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox


def test_notices_from_the_bundle_and_from_source(qtbot, open_main_window, tmp_path, monkeypatch):
    from nmt_desktop.gui import notices

    window = open_main_window()
    notices_file = tmp_path / "THIRD_PARTY_NOTICES.txt"
    notices_file.write_text("THIRD-PARTY NOTICES for nmt-desktop\n\nPySide6: LGPL-3.0\n", encoding="utf-8")
    monkeypatch.setattr(notices, "third_party_notices_path", lambda: notices_file)
    window.menus.actions["notices"].trigger()  # Help > Third-party notices…
    shown = [w for w in window.findChildren(object) if hasattr(w, "text") and hasattr(w, "windowTitle")
             and getattr(w, "windowTitle")() == "Third-party notices"]
    dialog = shown[-1]
    assert dialog.text.isReadOnly() and dialog.text.toPlainText().startswith("THIRD-PARTY NOTICES for nmt-desktop")
    dialog.close()
    monkeypatch.setattr(notices, "third_party_notices_path", lambda: None)
    window.menus.actions["notices"].trigger()
    box = [b for b in window.findChildren(QMessageBox) if b.windowTitle() == "Third-party notices"][-1]
    assert "nmt-desktop itself is MIT" in box.text()
    assert "MIT licence" in window.about_html() and "LGPL-3.0" in window.about_html()
