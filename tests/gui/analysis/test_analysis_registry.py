"""The Analysis registry (gui/analysis/registry.py) is the one place a view is wired: the panel's tabs and
fanned-out calls, the CLI's `--analysis-view` choices (through the Qt-free view_names.py) and the headless
screenshot's tables all come from it. Real widgets, offscreen, on the tiny model.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QLabel  # noqa: E402

from nmt_desktop.gui.analysis import registry  # noqa: E402
from nmt_desktop.gui.analysis.analysis_view import AnalysisView  # noqa: E402
from nmt_desktop.gui.analysis.panel import AnalysisPanel  # noqa: E402
from nmt_desktop.gui.analysis.view_names import VIEW_KEYS  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TEXT = "red cat runs"
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph")


def registry_keys() -> tuple[str, ...]:
    return tuple(entry.key for entry in registry.VIEWS)


def test_view_names_and_the_cli_import_no_qt(repo_root) -> None:
    """The CLI reads the keys without Qt: --help stays fast and works without a display."""
    child = ("import sys; import nmt_desktop.gui.analysis.view_names; from nmt_desktop.cli.main import build_parser; "
             "build_parser(); print(sorted(m for m in sys.modules if m.split('.')[0] in %r))" % (QT_MODULES,))
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    proc = subprocess.run([sys.executable, "-c", child], cwd=repo_root, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_cli_choices_and_screenshot_tables_are_the_registry() -> None:
    from nmt_desktop.cli.main import build_parser
    from nmt_desktop.gui.headless import screenshot

    parser = build_parser()
    gui = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith(" gui"))
    choices = next(a.choices for a in gui._actions if "--analysis-view" in a.option_strings)
    assert tuple(choices) == registry_keys() == VIEW_KEYS
    assert list(screenshot.VIEWS.items()) == [(e.key, e.attribute) for e in registry.VIEWS]
    assert screenshot._PREPARE == {e.key: e.prepare for e in registry.VIEWS if e.prepare is not None}
    assert screenshot._VIEW_OPTIONS == {"ablate": "ablation", "force_step": "forced", "compare": "compare"}


def test_registry_keys_must_match_view_names() -> None:
    with pytest.raises(RuntimeError, match=r"differ from view_names.VIEW_KEYS .*: a view must be in both"):
        registry._check_keys(registry.VIEWS[:-1], VIEW_KEYS)
    with pytest.raises(KeyError, match="no Analysis view 'nope': the views are stats, ablation"):
        registry.entry("nope")


def test_the_registry_drives_the_panel(qtbot, open_main_window, tiny_model_dir, monkeypatch) -> None:
    """One tab per entry, in order, under its title and attribute; the window's model and a real translation
    reach every view through the panel's loops."""
    window = open_main_window(tiny_model_dir)
    try:
        panel = window.analysis_panel
        assert panel.tabs.count() == len(registry.VIEWS) == len(panel.views)
        for index, entry in enumerate(registry.VIEWS):
            view = panel.tabs.widget(index)
            assert panel.tabs.tabText(index) == entry.title
            assert view is getattr(panel, entry.attribute) is panel.views[entry.key]
            assert isinstance(view, AnalysisView) and (view.key, view.title) == (entry.key, entry.title)
        assert panel.ablation.translator is window.translate_panel.translator  # set_translator reached them
        assert panel.ablation.boxes and panel.forced.layer.count() > 0 and panel.beam_tree.head.count() > 0

        received: dict[str, object] = {}
        for key, view in panel.views.items():
            real = view.set_translation

            def spy(translation, cfg=None, key=key, real=real) -> None:
                received[key] = translation
                real(translation, cfg)

            monkeypatch.setattr(view, "set_translation", spy)
        translate = window.translate_panel
        with qtbot.waitSignal(translate.translationFinished, timeout=TIMEOUT_MS):
            translate.translate(TEXT)
        shown = translate.sentences[0].translation
        assert panel.translation is shown
        assert received == {key: shown for key in registry_keys()}
        assert panel.coverage.translation is shown and panel.ablation.translation is shown
        assert panel.beam_tree.source_text == panel.compare.source_text == shown.source
    finally:
        window.close()
    assert not any(view.running for view in panel.views.values())
    assert not panel.ablation._thread.thread.isRunning()


class ProbeView(QLabel, AnalysisView):
    """A view the panel has never heard of: records what the panel tells it."""

    def __init__(self) -> None:
        super().__init__("probe")
        self.calls: list[tuple] = []

    def set_translator(self, translator, card=None) -> None:
        self.calls.append(("translator", translator))

    def set_translation(self, translation, cfg=None) -> None:
        self.calls.append(("translation", translation, cfg))

    def shutdown(self) -> None:
        self.calls.append(("shutdown",))


def test_a_new_registry_entry_adds_a_tab(qtbot, monkeypatch, tiny_translator) -> None:
    from nmt_desktop.core.config import DecodeConfig

    probe = registry.ViewEntry("probe", "Probe", "probe", ProbeView)
    monkeypatch.setattr(registry, "VIEWS", (*registry.VIEWS, probe))
    panel = AnalysisPanel()
    qtbot.addWidget(panel)
    try:
        assert panel.tabs.count() == len(VIEW_KEYS) + 1
        assert panel.tabs.tabText(panel.tabs.count() - 1) == "Probe"
        view = panel.tabs.widget(panel.tabs.count() - 1)
        assert isinstance(view, ProbeView) and view is panel.probe is panel.views["probe"] and view.key == "probe"
        cfg = DecodeConfig(attention=True)
        translation = tiny_translator.translate(TEXT, cfg)
        panel.set_translator(tiny_translator)
        panel.set_translation(translation, cfg)
    finally:
        panel.shutdown()
    assert view.calls == [("translator", tiny_translator), ("translation", translation, cfg), ("shutdown",)]


def test_a_bad_entry_is_one_sentence(qtbot, monkeypatch) -> None:
    clash = registry.ViewEntry("probe", "Probe", "title", ProbeView)  # the panel's own title label
    monkeypatch.setattr(registry, "VIEWS", (clash,))
    with pytest.raises(ValueError, match="Analysis view 'probe': the panel already has an attribute 'title'"):
        AnalysisPanel()
    not_a_view = registry.ViewEntry("label", "Label", "label", QLabel)
    monkeypatch.setattr(registry, "VIEWS", (not_a_view,))
    with pytest.raises(TypeError, match="Analysis view 'label': .* built a QLabel, not an AnalysisView"):
        AnalysisPanel()
