"""View > Theme and View > Colour map on the real main window: dark changes the window's palette and
stylesheet, text stays readable, widgets that colour themselves follow, and the choice survives a restart."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor, QPalette  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from nmt_desktop.gui import theme  # noqa: E402
from nmt_desktop.gui.app import create_app  # noqa: E402
from nmt_desktop.gui.settings import Settings  # noqa: E402
from colour_contrast import contrast  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

# (text colour, background) pairs a person reads: every one must keep WCAG AA contrast (4.5:1)
READ_PAIRS = [("text", "base"), ("text", "window"), ("muted", "base"), ("muted", "window"), ("warning", "base"),
              ("error", "base"), ("error", "error_background"), ("text", "code_background"), ("text", "selection"),
              ("text", "token_background"), ("warning", "token_background"), ("error", "token_background"),
              ("text", "diffuse_background"), ("warning", "diffuse_background"), ("error", "diffuse_background"),
              ("text", "memory_background"), ("warning", "memory_background"), ("error", "memory_background"),
              ("plot_text", "plot_background")]


@pytest.mark.parametrize("scheme", [theme.LIGHT, theme.DARK], ids=["light", "dark"])
@pytest.mark.parametrize("pair", READ_PAIRS, ids=["/".join(p) for p in READ_PAIRS])
def test_every_text_colour_is_readable_on_its_background(scheme, pair) -> None:
    fg, bg = (getattr(scheme, name) for name in pair)
    assert contrast(fg, bg) >= 4.5, f"{pair} in {'dark' if scheme.dark else 'light'}: {contrast(fg, bg):.2f}"


def test_dark_theme_changes_window_palette_stylesheet_and_output(qtbot, open_main_window, tiny_model_dir) -> None:
    window = open_main_window(tiny_model_dir)
    app = QApplication.instance()
    window.menus.theme_actions["light"].trigger()
    light_window = window.palette().color(QPalette.Window)
    panel = window.translate_panel
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate("red cat runs")
    assert theme.LIGHT.token_background in panel.output.toHtml()

    window.menus.theme_actions["dark"].trigger()
    assert theme.current().dark and theme.scheme() == "dark"
    assert window.menus.theme_actions["dark"].isChecked() and not window.menus.theme_actions["light"].isChecked()
    palette = window.palette()
    assert palette.color(QPalette.Window) != light_window
    assert palette.color(QPalette.Window).lightness() < 60  # a dark window, not a light one
    assert contrast(palette.color(QPalette.Text), palette.color(QPalette.Base)) >= 7
    assert contrast(palette.color(QPalette.WindowText), palette.color(QPalette.Window)) >= 7
    assert theme.DARK.base in app.styleSheet() and theme.LIGHT.base not in app.styleSheet()
    # widgets that colour their own HTML re-render in the new colours
    html = panel.output.toHtml()
    assert theme.DARK.token_background in html and theme.LIGHT.token_background not in html
    assert theme.DARK.muted in window.models_panel.info_view.toHtml()
    # labels coloured by the stylesheet: a warning label's text is the dark theme's warning colour
    label = panel.coverage_label
    label.setText("⚠ test")
    label.show()
    label.ensurePolished()
    assert label.palette().color(label.foregroundRole()) == QColor(theme.DARK.warning)
    window.close()


def test_theme_and_colour_map_survive_a_restart(qtbot, open_main_window, tiny_model_dir) -> None:
    window = open_main_window(tiny_model_dir)
    window.menus.theme_actions["dark"].trigger()
    window.menus.colormap_actions["cividis"].trigger()
    assert theme.current().colormap == "cividis"
    assert window.menus.colormap_actions["cividis"].isChecked()
    window.close()

    theme.apply("light", theme.DEFAULT_COLORMAP)  # as a fresh process starts
    saved = Settings()
    assert (saved.get("theme"), saved.get("colormap")) == ("dark", "cividis")
    create_app()  # applies the saved choice, as `nmt-desktop gui` does at start
    assert theme.current().dark and theme.current().colormap == "cividis"
    again = open_main_window(tiny_model_dir)
    assert again.menus.theme_actions["dark"].isChecked()
    assert again.menus.colormap_actions["cividis"].isChecked()
    assert again.palette().color(QPalette.Window) == QColor(theme.DARK.window)
    again.close()


def test_unknown_saved_theme_falls_back_to_the_system_scheme(config_dir) -> None:
    settings = Settings()
    settings.set("theme", "purple")
    settings.set("colormap", "rainbow")
    settings.save()
    create_app()
    assert theme.scheme() == "system"
    assert theme.current().colormap == theme.DEFAULT_COLORMAP


def test_unknown_choice_changes_nothing(config_dir) -> None:
    theme.apply("dark", "magma")
    with pytest.raises(ValueError, match="unknown theme 'purple'"):
        theme.apply("purple")
    with pytest.raises(ValueError, match="unknown colour map 'rainbow'"):
        theme.apply(colormap="rainbow")
    assert theme.scheme() == "dark" and theme.current().dark and theme.current().colormap == "magma"
