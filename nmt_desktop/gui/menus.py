"""The main window's menu bar: File, Translate, Tools (glossary, local server, fine-tune on my memory), View (theme,
colour map, tabs) and Help.

Every keyboard shortcut of the app is a QAction made here, so Help > Keyboard shortcuts (gui/shortcuts.py)
lists them from the window's actions and cannot go stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu

from . import theme
from .desk.opening import open_desk
from .documents.glossary_editor import open_glossary_editor
from .notices import show_notices
from .server.dialog import open_server_dialog
from .train.memory_fine_tune import fine_tune_on_memory

if TYPE_CHECKING:
    from .window_api import WindowApi

THEME_LABELS = {"system": "&System (follow the desktop)", "light": "&Light", "dark": "&Dark"}
TAB_KEYS = (("translate", "&Translate"), ("models", "&Models"), ("train", "T&rain"), ("analysis", "&Analysis"))


@dataclass
class Menus:
    """The actions other code reads or triggers (tests, the View menu's checked state)."""

    actions: dict[str, QAction] = field(default_factory=dict)  # by key: "open", "translate_file", ...
    theme_actions: dict[str, QAction] = field(default_factory=dict)  # by scheme
    colormap_actions: dict[str, QAction] = field(default_factory=dict)  # by colour map name


def _action(window: WindowApi, menu: QMenu, text: str, slot: Callable[[], object], shortcut: str | None = None,
            tip: str = "") -> QAction:
    act = QAction(text, window)
    if shortcut:
        act.setShortcut(QKeySequence(shortcut))
    if tip:
        act.setToolTip(tip)
        act.setStatusTip(tip)
    act.triggered.connect(lambda *_: slot())
    menu.addAction(act)
    return act


def build_menus(window: WindowApi) -> Menus:
    menus = Menus()
    a = menus.actions
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    a["open"] = _action(window, file_menu, "&Open model folder…", window.open_model, "Ctrl+O",
                        "Load a model folder from disk")
    a["open_zip"] = _action(window, file_menu, "Open model &zip…", window.models_panel.open_zip_dialog,
                            tip="Load a zipped model folder")
    a["get_models"] = _action(window, file_menu, "&Get models…", lambda: window.models_panel.get_models_dialog(),
                              tip="Download OPUS-MT models from the Hugging Face Hub")
    file_menu.addSeparator()
    a["translate_file"] = _action(window, file_menu, "&Translate file…", lambda: window.translate_file(),
                                  "Ctrl+Shift+O", "Translate a whole document (Word, OpenDocument, PowerPoint, Excel, "
                                  "HTML, Markdown, subtitles, EPUB, text) keeping its formatting, and save it")
    a["post_edit"] = _action(window, file_menu, "Post-&edit file…", lambda: open_desk(window), "Ctrl+Shift+E",
                             "Confirm an XLIFF or PO file's translations segment by segment, with memory suggestions")
    a["save_analysis"] = _action(window, file_menu, "&Save analysis…", window.analysis_session.save_dialog, "Ctrl+S",
                                 "Save the text, model, settings, inspected translation, head and views in one small "
                                 "file")
    a["open_analysis"] = _action(window, file_menu, "Open &analysis…", window.analysis_session.open_dialog,
                                 tip="Open a saved analysis: the same model, text, settings and views again")
    file_menu.addSeparator()
    a["quit"] = _action(window, file_menu, "&Quit", window.close, "Ctrl+Q", "Close the app")

    translate_menu = bar.addMenu("&Translate")
    a["translate"] = _action(window, translate_menu, "&Translate", lambda: window.translate_panel.translate(),
                             tip="Translate the source text")
    a["translate"].setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
    a["stop"] = _action(window, translate_menu, "&Stop", window.translate_panel.stop, "Esc", "Stop decoding")
    translate_menu.addSeparator()
    box = window.translate_panel.inspect_box  # "Your translation" (gui/translate/inspect_box.py)
    a["use_model"] = _action(window, translate_menu, "&Use model's translation", box.use_model_translation,
                             tip="Copy the model's translation into “Your translation”, to edit it")
    a["inspect"] = _action(window, translate_menu, "&Inspect this translation", box.inspect, "Ctrl+I",
                           "Score “Your translation” with the model: token probabilities, its own choices, attention")

    tools_menu = bar.addMenu("T&ools")
    a["glossary"] = _action(window, tools_menu, "&Glossary…", lambda: open_glossary_editor(window),
                            tip="Edit a glossary, import or export it (TSV, TBX), keep it with the loaded model")
    a["server"] = _action(window, tools_menu, "Local &server…", lambda: open_server_dialog(window),
                          tip="Serve the models to Weblate, Subtitle Edit, OmegaT, Trados and memoQ on this computer "
                              "(LibreTranslate's and OPUS-CAT's APIs)")
    a["fine_tune_memory"] = _action(window, tools_menu, "&Fine-tune on my memory…", lambda: fine_tune_on_memory(window),
                                    tip="Fill the Train tab to fine-tune the loaded model on your translation memory, "
                                        "with its own training data replayed so it keeps what it knew")

    view_menu = bar.addMenu("&View")
    theme_menu = view_menu.addMenu("&Theme")
    group = QActionGroup(window)
    for scheme in theme.SCHEMES:
        act = _action(window, theme_menu, THEME_LABELS[scheme], lambda s=scheme: window.set_theme(s))
        act.setCheckable(True)
        group.addAction(act)
        menus.theme_actions[scheme] = act
    cmap_menu = view_menu.addMenu("&Colour map")
    group = QActionGroup(window)
    for name, label in theme.COLORMAPS.items():
        act = _action(window, cmap_menu, label, lambda n=name: window.set_colormap(n),
                      tip=f"Paint attention heatmaps with the {label} colour map")
        act.setCheckable(True)
        group.addAction(act)
        menus.colormap_actions[name] = act
    view_menu.addSeparator()
    for n, (key, label) in enumerate(TAB_KEYS, start=1):
        a[f"tab_{key}"] = _action(window, view_menu, f"{label} tab", lambda k=key: window.show_tab(k), f"Ctrl+{n}",
                                  f"Show the {label.replace('&', '')} tab")

    help_menu = bar.addMenu("&Help")
    a["shortcuts"] = _action(window, help_menu, "&Keyboard shortcuts…", window.show_shortcuts, "F1",
                             "List every keyboard shortcut")
    a["notices"] = _action(window, help_menu, "Third-party &notices…", lambda: show_notices(window),
                           tip="Licences of the libraries and models bundled with the app")
    a["about"] = _action(window, help_menu, "&About NMT Desktop", window.show_about)
    check_theme(menus)
    return menus


def check_theme(menus: Menus) -> None:
    """Tick the View menu's scheme and colour map in use."""
    current = theme.current()
    for scheme, act in menus.theme_actions.items():
        act.setChecked(scheme == theme.scheme())
    for name, act in menus.colormap_actions.items():
        act.setChecked(name == current.colormap)
