"""The desktop process's one way in and one way out: every entry (`nmt-desktop`, `gui`, `gui --screenshot`,
`--self-test`) runs inside `running_app()` (scripts that build a window call `close_down()`), and every way it ends
(the window closed, File > Quit, a headless run's success or error, Ctrl+C, SIGTERM, an exception)
goes through `close_down()`.

Why one path: PySide's own clean-up runs from `atexit`, after `main()` has returned, and deletes every
Qt object Python still owns in no particular order. A pyqtgraph item destroyed there calls its Python
overrides (`event`, `itemChange`) while the interpreter is being finalised, and the process dies with
SIGSEGV; a QThread still running there aborts it ("QThread: Destroyed while thread is still running").
Both happened when a window outlived its run (`deleteLater()` with no event loop left to run it, or
`gc.freeze()` hiding the window's reference cycles from the collector). `close_down` instead stops and
joins every worker thread, deletes every top-level widget while Python is whole, collects the cycles,
and deletes what is left of the Qt objects Python owns, so the interpreter's final clean-up finds
nothing to destroy.

Exit codes (the CLI's, see `cli/main.py`): 0 closed or quit, 1 a headless run failed, 2 a usage error,
130 interrupted by Ctrl+C (SIGINT), 143 ended by SIGTERM.
"""

from __future__ import annotations

import gc
import logging
import signal
import socket
import sys
import threading
import traceback
import weakref
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Callable, Iterator

from typing import Any

import shiboken6
from PySide6.QtCore import (QCoreApplication, QEvent, QObject, QSocketNotifier, QThread, QtMsgType,
                            qInstallMessageHandler)
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsView, QWidget

from nmt_desktop import __version__
from nmt_desktop.core.locations import app_icon_path

from . import theme
from .settings import Settings

log = logging.getLogger("nmt_desktop.gui.lifetime")

APP_TITLE = "NMT Desktop"

EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal's number, as shells report
THREAD_JOIN_S = 30.0  # a helper thread (a corpus check, device detection) is waited for this long at most


class Interrupted(KeyboardInterrupt):
    """Ctrl+C or SIGTERM arrived outside the event loop (a headless run's waiting); `code` is the exit code."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


# -- the application --------------------------------------------------------------------------------------

_QUIET_QT_MESSAGES = ("propagateSizeHints",)  # harmless offscreen-platform chatter
_qt_handler_installed = False


def _qt_message(mode: QtMsgType, context: Any, message: str) -> None:
    """Qt's own warnings go to the app log, not the terminal (the CLI keeps errors to one line)."""
    if any(q in message for q in _QUIET_QT_MESSAGES):
        return
    level = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO}.get(mode, logging.WARNING)
    logging.getLogger("nmt_desktop.qt").log(level, "%s", message)


def apply_saved_theme(settings: Settings) -> theme.Theme:
    """The View menu's saved theme and colour map (default: follow the system, viridis)."""
    return theme.apply(settings.choice("theme", theme.SCHEMES, "system"),
                       settings.choice("colormap", theme.COLORMAPS, theme.DEFAULT_COLORMAP))


def create_app(argv: list[str] | None = None, settings: Settings | None = None) -> QApplication:
    """The process's QApplication (made once), named, styled and themed. Enter `running_app()` instead
    wherever the process will also end: it closes down what this starts."""
    global _qt_handler_installed
    if not _qt_handler_installed:
        qInstallMessageHandler(_qt_message)
        _qt_handler_installed = True
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else [sys.argv[0]])
    app.setApplicationName("nmt-desktop")
    app.setApplicationDisplayName(APP_TITLE)
    app.setApplicationVersion(__version__)
    app.setStyle("Fusion")
    apply_saved_theme(settings or Settings())
    icon = app_icon_path()
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    return app  # type: ignore[return-value]


# -- helper threads ---------------------------------------------------------------------------------------

_threads: set[threading.Thread] = set()
_threads_lock = threading.Lock()


def start_thread(target: Callable[[], None], name: str) -> threading.Thread:
    """Run `target` on a Python helper thread that `close_down` joins before any widget is deleted, so a
    result is never emitted into an object being destroyed."""

    def run() -> None:
        try:
            target()
        finally:
            with _threads_lock:
                _threads.discard(thread)

    thread = threading.Thread(target=run, name=name, daemon=True)
    with _threads_lock:
        _threads.add(thread)
    thread.start()
    return thread


def join_threads(timeout_s: float = THREAD_JOIN_S) -> list[str]:
    """Wait for the helper threads started by `start_thread`; the names of any still running after `timeout_s`."""
    with _threads_lock:
        running = list(_threads)
    left = []
    for thread in running:
        thread.join(timeout_s)
        if thread.is_alive():
            left.append(thread.name)
    return left


# -- unexpected exceptions --------------------------------------------------------------------------------

_error_listeners: list[weakref.WeakMethod] = []
unexpected_errors: list[str] = []  # one line each, in order, since `running_app` began


def on_unexpected_error(listener: Callable[[str], None]) -> None:
    """Call the bound method `listener(one_line)` for every exception that reaches `sys.excepthook` (a bug in
    a slot). Held weakly: listening never keeps a window alive."""
    _error_listeners.append(weakref.WeakMethod(listener))  # type: ignore[arg-type]


def _excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """An exception no code caught, raised in a slot the event loop called: logged with its traceback, the
    window says it in one sentence, and the app stays up (PySide would only print it to the terminal)."""
    if isinstance(exc, Interrupted):
        return
    text = " ".join(str(exc).split())
    line = f"{kind.__name__}: {text}" if text else kind.__name__
    unexpected_errors.append(line)
    log.error("unexpected error: %s\n%s", line, "".join(traceback.format_exception(kind, exc, tb)).rstrip())
    for ref in list(_error_listeners):
        listener = ref()
        if listener is None or not shiboken6.isValid(getattr(listener, "__self__", None)):
            continue
        try:
            listener(line)
        except Exception:  # noqa: BLE001 - a failing listener must not hide the first error
            log.exception("error listener failed")


# -- Ctrl+C and SIGTERM -----------------------------------------------------------------------------------

class _Interrupts(QObject):
    """Turns SIGINT and SIGTERM into a clean exit. Python runs a signal handler only between bytecodes, which
    never happens while Qt's event loop waits in C++; a socket written by the C-level handler
    (`signal.set_wakeup_fd`) wakes the loop, so the handler runs at once. In the event loop the handler
    ends it with the signal's exit code; a headless run's waiting raises Interrupted (`raise_if_interrupted`)."""

    def __init__(self, app: QApplication):
        super().__init__(app)  # a child of the app: close_down leaves it in place until the very end
        self.app = app
        self.code: int | None = None
        self.closing = False
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)
        self._old_fd = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._old = {s: signal.signal(s, self._handle) for s in EXIT_INTERRUPTED}

    def _drain(self) -> None:
        try:
            while self._read.recv(64):
                pass
        except OSError:
            pass

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        code = EXIT_INTERRUPTED[signal.Signals(signum)]
        log.info("signal %s: closing", signal.Signals(signum).name)
        if self.closing:  # already closing down: let it finish; one more signal ends the process at once
            signal.signal(signum, signal.SIG_DFL)
            return
        self.code = code
        if QThread.currentThread().loopLevel() > 0:
            self.app.exit(code)
        # Outside the event loop (a headless run processing events while it waits) the handler usually runs
        # inside a slot, where an exception would only reach sys.excepthook: `raise_if_interrupted`, called
        # by every wait, raises it in the waiting code instead.

    def uninstall(self) -> None:
        for s, handler in self._old.items():
            signal.signal(s, handler)
        signal.set_wakeup_fd(self._old_fd)
        self._notifier.setEnabled(False)
        self._read.close()
        self._write.close()


_interrupts: _Interrupts | None = None


def raise_if_interrupted() -> None:
    """Raise Interrupted (exit code 130 or 143) if Ctrl+C or SIGTERM arrived outside the event loop; headless
    waits (`headless.wait_until`) call this between rounds of events."""
    if _interrupts is not None and _interrupts.code is not None and not _interrupts.closing:
        raise Interrupted(_interrupts.code)


# -- the one way out --------------------------------------------------------------------------------------

def close_down(app: QApplication | None = None) -> None:
    """End the app's Qt side while Python is whole: each top-level window's `shutdown()` (settings saved, a
    training child stopped), every worker thread quit and joined, every top-level widget deleted, reference
    cycles collected, and any Qt object Python still owns deleted. Idempotent."""
    from . import workers

    app = app or QApplication.instance()  # type: ignore[assignment]
    if app is None:
        return
    for widget in list(app.topLevelWidgets()):
        shutdown = getattr(widget, "shutdown", None)
        if callable(shutdown) and shiboken6.isValid(widget):
            try:
                shutdown()
            except Exception:  # noqa: BLE001 - one window's failure must not keep the others' threads running
                log.exception("shutdown of %s failed", type(widget).__name__)
    workers.stop_all_threads()
    left = join_threads()
    if left:
        log.warning("helper threads still running at exit: %s", ", ".join(left))
    _release_plots()
    gc.unfreeze()  # MainWindow froze its objects for faster collections; they must be collectable now
    was_enabled = gc.isenabled()
    gc.disable()  # no collection runs Python finalisers in the middle of a C++ destructor cascade
    try:
        _clear_scenes(app)
        for widget in list(app.topLevelWidgets()):
            if shiboken6.isValid(widget) and widget.parent() is None:
                shiboken6.delete(widget)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        _delete_owned_leftovers()
    finally:
        if was_enabled:
            gc.enable()
    gc.collect()


def _clear_scenes(app: QApplication) -> None:
    """Delete every graphics scene's items while its view is whole. Left to the window's destructor, a
    scene is cleared after its view's viewport is gone, and pyqtgraph's items call back into the view from
    their destructors (`itemChange`): the SIGSEGV at exit. pyqtgraph's own `GraphicsView.close` does the
    same clearing."""
    for widget in list(app.topLevelWidgets()):
        if not shiboken6.isValid(widget):
            continue
        views = widget.findChildren(QGraphicsView)
        if isinstance(widget, QGraphicsView):
            views.append(widget)
        for view in views:
            scene = view.scene()
            if scene is not None and shiboken6.isValid(scene):
                scene.clear()


def _release_plots() -> None:
    """pyqtgraph keeps every ViewBox in a class-level registry (for its link menus) until told to quit."""
    try:
        from pyqtgraph.graphicsItems.ViewBox import ViewBox
    except ImportError:
        return
    ViewBox.quit()


def _delete_owned_leftovers() -> int:
    """Delete the Qt objects Python still owns that have no parent to delete them: widgets and graphics
    items kept by a module global or by a reference cycle through a deleted window, and workers and their
    (stopped) QThreads. Left for PySide's atexit clean-up, they would be destroyed in no set order while
    the interpreter is being finalised. Objects parented to the app live and die with it."""
    deleted = 0
    for kinds in ((QWidget,), (QGraphicsItem,), (QObject,)):  # widgets first: they may own the others
        for obj in shiboken6.getAllValidWrappers():
            if not isinstance(obj, kinds) or isinstance(obj, QCoreApplication):
                continue
            if not shiboken6.isValid(obj) or not shiboken6.ownedByPython(obj):
                continue
            if isinstance(obj, QGraphicsItem):
                if obj.parentItem() is not None or obj.scene() is not None:
                    continue  # its parent or its scene deletes it
            elif obj.parent() is not None:
                continue  # its parent deletes it
            if isinstance(obj, QThread) and obj.isRunning():
                continue  # never happens after stop_all_threads; deleting it would abort the process
            shiboken6.delete(obj)
            deleted += 1
    if deleted:
        log.debug("deleted %d Qt objects left at exit", deleted)
    return deleted


@contextmanager
def running_app(argv: list[str] | None = None, settings: Settings | None = None) -> Iterator[QApplication]:
    """The QApplication for this process, with Ctrl+C/SIGTERM and stray exceptions handled; on leaving the
    block, however it is left, `close_down()`. Inside a process that already has an app (the tests), the
    app and its handlers are left as they were."""
    existing = QApplication.instance() is not None
    app = create_app(argv, settings)
    if existing:
        yield app
        return
    global _interrupts
    interrupts = _interrupts = _Interrupts(app)
    unexpected_errors.clear()
    old_hook, sys.excepthook = sys.excepthook, _excepthook
    try:
        yield app
    finally:
        interrupts.closing = True
        try:
            close_down(app)
        finally:
            sys.excepthook = old_hook
            interrupts.uninstall()
            _interrupts = None
            shiboken6.delete(interrupts)
