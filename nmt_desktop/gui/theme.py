"""The app's look: a light or dark scheme (or the system's) and the heatmap colour map, in one place.

Why one module: the stylesheet, the Qt palette and every pyqtgraph plot (which paints its own
background and axis text and ignores stylesheets) must change together when the user picks
View > Theme or View > Colour map. Widgets that paint themselves register with `follow(owner, restyle)`:
`restyle(theme)` runs once at once and again after each change, for as long as `owner` lives.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette

SCHEMES = ("system", "light", "dark")
# Perceptually uniform maps; cividis and CET-CBL2 are also safe for red-green colour blindness.
COLORMAPS = {"viridis": "Viridis", "cividis": "Cividis (colour-blind safe)",
             "CET-CBL2": "Blue-yellow (colour-blind safe)", "magma": "Magma", "inferno": "Inferno", "plasma": "Plasma",
             "CET-L1": "Greys"}
DEFAULT_COLORMAP = "viridis"


@dataclass(frozen=True)
class Theme:
    """Every colour the app sets by hand (hex strings), for one scheme. Text colours keep a WCAG contrast of
    at least 4.5:1 on the backgrounds they are drawn on (tests/gui/test_theme.py checks the pairs)."""

    dark: bool
    window: str
    base: str
    text: str
    muted: str
    border: str
    accent: str
    accent_hover: str
    accent_disabled: str
    selection: str
    plot_background: str
    plot_text: str
    pending_cell: str  # heatmap rows still to come while streaming
    warning: str
    error: str
    error_background: str
    error_border: str
    code_background: str
    token_background: str  # a translated token's chip in the output pane
    diffuse_background: str  # a token with diffuse attention (highlighted)
    memory_background: str  # a token that came from the translation memory (issue 45; gui/translate/memory_marks.py)
    plot_line: str  # lines drawn on plot_background (alignment links): at least 3:1 on it
    control_border: str  # the ring of check boxes and radio buttons: at least 3:1 on window and base
    colormap: str = DEFAULT_COLORMAP


LIGHT = Theme(dark=False, window="#f5f6f8", base="#ffffff", text="#111827", muted="#636a77", border="#d9dce3",
              accent="#4f46e5", accent_hover="#4338ca", accent_disabled="#a5b4fc", selection="#e0e7ff",
              plot_background="#ffffff", plot_text="#1f2937", pending_cell="#e8e8e8", warning="#a14807",
              error="#b91c1c", error_background="#fef2f2", error_border="#fecaca", code_background="#f8fafc",
              token_background="#eef2ff", diffuse_background="#ffedd5", memory_background="#dcfce7",
              plot_line="#4f46e5",
              control_border="#7c8291")
DARK = Theme(dark=True, window="#1e1f24", base="#26282e", text="#e5e7eb", muted="#9ca3af", border="#3a3d45",
             accent="#6366f1", accent_hover="#818cf8", accent_disabled="#3f3f74", selection="#312e81",
             plot_background="#1b1c20", plot_text="#d1d5db", pending_cell="#34363c", warning="#fbbf24",
             error="#fca5a5", error_background="#3b1d1d", error_border="#7f1d1d", code_background="#1f2126",
             token_background="#2e3250", diffuse_background="#42290f", memory_background="#14392a",
             plot_line="#818cf8",
             control_border="#858b96")

STYLE = """
QMainWindow, QWidget#central {{ background: {window}; }}
QTabWidget::pane {{ border: 1px solid {border}; border-radius: 6px; background: {base}; top: -1px; }}
QTabBar::tab {{ padding: 7px 18px; margin-right: 2px; border: 1px solid transparent; color: {muted};
               border-top-left-radius: 6px; border-top-right-radius: 6px; }}
QTabBar::tab:selected {{ background: {base}; border-color: {border}; border-bottom-color: {base};
                        color: {text}; font-weight: 600; }}
QFrame#pane {{ background: {base}; border: 1px solid {border}; border-radius: 8px; }}
QLabel#paneTitle {{ color: {accent_hover}; font-weight: 600; font-size: 11pt; }}
QLabel#hint {{ color: {muted}; }}
QPlainTextEdit, QTextBrowser {{ border: none; font-size: 13pt; background: {base}; color: {text}; }}
QGroupBox {{ font-weight: 600; color: {text}; border: 1px solid {border}; border-radius: 8px;
            margin-top: 12px; padding-top: 6px; background: {base}; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 10px; padding: 0 4px; }}
QPushButton {{ padding: 5px 14px; border: 1px solid {border}; border-radius: 6px; background: {base}; color: {text}; }}
QPushButton:hover {{ background: {window}; }}
QPushButton:disabled {{ color: {muted}; }}
QPushButton#primaryButton {{ background: {accent}; color: white; border-color: {accent_hover}; font-weight: 600; }}
QPushButton#primaryButton:hover {{ background: {accent_hover}; }}
QPushButton#primaryButton:disabled {{ background: {accent_disabled}; border-color: {accent_disabled}; }}
QListWidget, QTableWidget {{ border: 1px solid {border}; border-radius: 6px; background: {base}; color: {text}; }}
QListWidget::item {{ padding: 3px; }}
QTableView#lineTable::item {{ padding: 3px 4px; }}
QListWidget::item:selected {{ background: {selection}; color: {text}; }}
QLabel#emptyTitle {{ font-size: 16pt; color: {text}; }}
QStatusBar {{ color: {muted}; }}
QLabel#warning {{ color: {warning}; }}
QLabel#error {{ color: {error}; font-weight: 600; }}
QLabel#errorBox {{ color: {error}; background: {error_background}; border: 1px solid {error_border};
                  border-radius: 6px; padding: 6px; font-family: monospace; }}
QPlainTextEdit#code {{ font-family: monospace; font-size: 9pt; background: {code_background}; }}
"""


class _Notifier(QObject):
    changed = Signal(object)  # the new Theme


_notifier: _Notifier | None = None
_current: Theme = LIGHT
_scheme = "system"


def notifier() -> _Notifier:
    global _notifier
    if _notifier is None:
        _notifier = _Notifier(QCoreApplication.instance())  # lives as long as the app, deleted with it
    return _notifier


def current() -> Theme:
    """The theme in use now (light until `apply` has run)."""
    return _current


def scheme() -> str:
    """The user's choice: "system", "light" or "dark"."""
    return _scheme


def system_is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def resolve(choice: str) -> Theme:
    """The Theme for a scheme choice ("system" asks the platform), keeping the current colour map."""
    if choice not in SCHEMES:
        raise ValueError(f"unknown theme {choice!r}: choose one of {', '.join(SCHEMES)}")
    dark = system_is_dark() if choice == "system" else choice == "dark"
    return replace(DARK if dark else LIGHT, colormap=_current.colormap)


def stylesheet(theme: Theme) -> str:
    fields = {k: v for k, v in theme.__dict__.items() if isinstance(v, str)}
    return STYLE.format(**fields)


def palette(theme: Theme) -> QPalette:
    """A Fusion palette in the theme's colours, so native parts (menus, tooltips, inputs) match."""
    pal = QPalette()
    role = QPalette.ColorRole
    for r, value in ((role.Window, theme.window), (role.Base, theme.base), (role.AlternateBase, theme.window),
                     (role.WindowText, theme.text), (role.Text, theme.text), (role.ButtonText, theme.text),
                     (role.Button, theme.base), (role.ToolTipBase, theme.base), (role.ToolTipText, theme.text),
                     (role.Highlight, theme.accent), (role.HighlightedText, "#ffffff"),
                     (role.PlaceholderText, theme.muted), (role.Link, theme.accent_hover)):
        pal.setColor(r, QColor(value))
    for r in (role.Text, role.WindowText, role.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, r, QColor(theme.muted))
    return pal


INDICATOR_CLASSES = ("QCheckBox", "QRadioButton")


def indicator_palette(theme: Theme) -> QPalette:
    """The palette of check boxes and radio buttons: Fusion draws their ring in the Window colour darkened
    1.4 times, which on a dark window is darker still and vanishes (the dark theme's low-contrast radio
    buttons). Here Window is `control_border` lightened by the same factor, so the ring is `control_border`;
    nothing else of these buttons paints Window (their text is WindowText, the box inside Base)."""
    pal = palette(theme)
    pal.setColor(QPalette.ColorRole.Window, QColor(theme.control_border).lighter(140))
    return pal


def apply(choice: str | None = None, colormap: str | None = None) -> Theme:
    """Switch scheme and/or colour map app-wide and tell every follower; returns the new theme.

    The palette and style sheet are set only when their colours change: a new style sheet repolishes
    every widget (a visible pause with the whole window built), and a colour map alone needs none."""
    global _current, _scheme
    if colormap is not None and colormap not in COLORMAPS:
        raise ValueError(f"unknown colour map {colormap!r}: choose one of {', '.join(COLORMAPS)}")
    theme = resolve(_scheme if choice is None else choice)  # an unknown choice raises before anything changes
    _scheme = _scheme if choice is None else choice
    if colormap is not None:
        theme = replace(theme, colormap=colormap)
    _current = theme
    app = QGuiApplication.instance()
    if app is not None:
        _watch_system()
        sheet = stylesheet(theme)
        if not hasattr(app, "styleSheet") or app.styleSheet() != sheet:
            app.setPalette(palette(theme))
            if hasattr(app, "setStyleSheet"):  # a QApplication: widgets, and palettes per widget class
                for name in INDICATOR_CLASSES:
                    app.setPalette(indicator_palette(theme), name)
                app.setStyleSheet(sheet)
    notifier().changed.emit(theme)
    return theme


_watching = False


def _watch_system() -> None:
    """While the choice is "system", a change of the platform's scheme re-applies it (once connected)."""
    global _watching
    if not _watching:
        QGuiApplication.styleHints().colorSchemeChanged.connect(lambda *_: _scheme == "system" and apply())
        _watching = True


def follow(owner: QObject, restyle: Callable[[Theme], None]) -> None:
    """Call `restyle(current())` now and after every theme change while `owner` is alive."""
    restyle(_current)
    conn = notifier().changed.connect(restyle)
    owner.destroyed.connect(lambda *_: _disconnect(conn))


def _disconnect(conn: object) -> None:
    """Drop a follower; PySide may have dropped it already with its receiver, which is fine."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            notifier().changed.disconnect(conn)
        except (RuntimeError, TypeError):
            pass
