"""The `nmt-desktop gui ...` command: the main window opened from the command line, and its headless runs
(`--screenshot`, `--self-test` aside): translate --text, inspect, select a word, open an Analysis view,
search or pull models, translate a file, then save a PNG of the window and exit with a documented code."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from .. import theme
from ..app import SETTINGS_OR_BUNDLED, MainWindow
from ..documents.dialog import DocumentDialog
from ..lifetime import raise_if_interrupted, running_app, unexpected_errors
from ..settings import setup_logging
from ..waiting import HeadlessError, WindowClosed, wait_until


def run_gui(args: argparse.Namespace) -> int:
    """`nmt-desktop gui ...`: open the window; with --screenshot, translate, save a PNG and exit."""
    from . import screenshot

    screenshot.check_options(args)
    setup_logging()
    with running_app() as app:
        if getattr(args, "theme", None) is not None:
            theme.apply(args.theme)  # for this run only (the View menu saves a choice)
        window = MainWindow(model=SETTINGS_OR_BUNDLED if args.model is None else args.model, int8=args.int8 or None)
        try:
            return _run_window(app, window, args)
        except WindowClosed:
            return 0  # closed by its user before the steps asked for on the command line were done


def _run_window(app: QApplication, window: MainWindow, args: argparse.Namespace) -> int:
    """`run_gui`'s work once the window exists: the headless steps, the PNG, or the event loop."""
    from . import screenshot

    errors: list[str] = []
    window.errorShown.connect(errors.append)
    if args.screenshot:
        window.show_error = lambda message, title="Error": None  # type: ignore[method-assign]
    panel = window.translate_panel
    if args.beam is not None:
        panel.options.set_beam(args.beam)
    if args.tab:
        window.show_tab(args.tab)
    window.resize(1360, 860)
    window.show()
    if not args.screenshot and args.text is None and getattr(args, "get_models", None) is None \
            and getattr(args, "translate_file", None) is None:
        return int(app.exec())  # nothing to do before the user takes over
    if window.models_panel.loading:
        wait_until(lambda: not window.models_panel.loading, 300, "the model to load", window)
    if errors and window.info is None:
        raise HeadlessError(errors[0])
    if args.text is not None:
        if window.info is None:
            raise HeadlessError("no model to translate with: use -m MODEL (no bundled model found)")
        screenshot.check_focus(args, window.info)
        panel.source.setPlainText(args.text)
        finished: list[int] = []
        panel.translationFinished.connect(finished.append)
        panel.translationFailed.connect(lambda _i, m: errors.append(m))
        request = panel.translate()
        wait_until(lambda: request in finished or bool(errors) or not panel.running, 300, "the translation", window)
        if errors:
            raise HeadlessError(errors[-1])
        state = panel.document.current()
        rows = 0 if state is None else len(state.steps)
        wait_until(lambda: panel.view.painted_rows() >= rows, 60, "the attention view to paint", window)
        if getattr(args, "inspect", None) is not None:
            screenshot.inspect(window, args.inspect)  # returns once the result and its attention are shown
        if args.view == "focus" or getattr(args, "focus", None) is not None:
            screenshot.focus(panel.view, getattr(args, "focus", None))
        elif hasattr(panel.view, "show_grid"):
            panel.view.show_grid()
        if getattr(args, "select", None) is not None:
            screenshot.select_word(window, args.select)
        if getattr(args, "analysis_view", None) is not None:
            screenshot.prepare_analysis_view(window, args)  # returns once its job's result is shown
    dialog = _open_get_models(window, args) if getattr(args, "get_models", None) is not None else None
    if getattr(args, "translate_file", None) is not None:
        dialog = _open_document(window, args.translate_file, errors)
    for _ in range(5):
        QApplication.processEvents()
        QThread.msleep(20)
    raise_if_interrupted()
    if unexpected_errors:
        raise HeadlessError(f"unexpected error: {unexpected_errors[0]} (the traceback is in the app log)")
    if args.screenshot:
        pixmap = window.grab() if dialog is None else _with_dialog(window.grab(), dialog)
        path = Path(args.screenshot)
        if not pixmap.save(str(path), "PNG"):
            raise HeadlessError(f"cannot write {path}")
        return 0
    return int(app.exec()) if window.isVisible() else 0


def _open_get_models(window: "MainWindow", args: argparse.Namespace) -> Any:
    """--get-models QUERY [--pull REPO]: the dialog searched (and the download started, and with
    --screenshot under way: some bytes in, not finished)."""
    window.show_tab("models")
    dialog = window.models_panel.get_models_dialog(args.get_models)
    dialog.search()
    wait_until(lambda: dialog.search_button.isEnabled(), 120, "the model search")
    if args.pull is not None:
        dialog.download(args.pull)
        if args.screenshot:
            wait_until(lambda: dialog.progress.maximum() == 1000 and dialog.progress.value() >= 200
                       or not dialog.pulling, 600, "the download to start")
            if not dialog.pulling and not dialog.installed_path:
                raise HeadlessError(dialog.progress_label.text().lstrip("⚠ "))
    return dialog


def _open_document(window: MainWindow, path: str, errors: list[str]) -> DocumentDialog:
    """--translate-file PATH: File > Translate file… on PATH, waited for until the translation is done."""
    dialog = window.translate_file(path)
    if dialog is None:
        raise HeadlessError(errors[-1] if errors else f"cannot translate {path}")
    wait_until(lambda: not dialog.running, 600, "the file's translation")
    if dialog.lines is None:
        raise HeadlessError(dialog.status.text().lstrip("⚠ "))
    return dialog


def _with_dialog(pixmap: Any, dialog: Any) -> Any:
    """The window's picture with the dialog's drawn over its centre, as a person would see them."""
    from PySide6.QtGui import QColor, QPainter

    shot = dialog.grab()
    painter = QPainter(pixmap)
    x, y = (pixmap.width() - shot.width()) // 2, (pixmap.height() - shot.height()) // 2
    painter.drawPixmap(x, y, shot)
    painter.setPen(QColor(theme.current().muted))  # the dialog's edge, as a window frame would draw it
    painter.drawRect(x - 1, y - 1, shot.width() + 1, shot.height() + 1)
    painter.end()
    return pixmap
