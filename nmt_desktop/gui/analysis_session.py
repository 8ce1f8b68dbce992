"""File > Save analysis… and File > Open analysis… on the main window (the file: saved_analysis.py).

Opening is a short chain of steps, each waiting for the window's own signal, never blocking the GUI thread:
the model (loaded when another one is shown: by its folder, else an installed model of the same name), then
the translation of the saved text with the saved settings, then the views (sentence, n-best row, attention
kind, scale, merged words, focused head, selection, ablated heads), then "Your translation" inspected again,
then the tab. A model that is not installed stops it with one sentence before anything changes; a model whose
card or configuration changed since is said and the analysis opens all the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QObject, QStandardPaths, Signal, SignalInstance
from PySide6.QtWidgets import QFileDialog

from .menus import TAB_KEYS
from .saved_analysis import SUFFIX, AnalysisFileError, SavedAnalysis, SavedModel, model_fingerprint, read_analysis
from .translate.inspect_view import GIVEN, MODEL

if TYPE_CHECKING:
    from .window_api import WindowApi

SHOWN = {GIVEN: "given", MODEL: "model"}
TABS = [key for key, _label in TAB_KEYS]


def _once(signal: SignalInstance, slot: Callable[..., None]) -> None:
    """Call `slot` on the next emission of `signal` only."""
    def fire(*args: Any) -> None:
        signal.disconnect(fire)
        slot(*args)
    signal.connect(fire)


def _same(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def capture(window: WindowApi) -> SavedAnalysis:
    """The window's analysis as it stands (ValueError when no model is loaded)."""
    info = window.info
    if info is None:
        raise ValueError("no model is loaded: there is no analysis to save")
    panel, analysis = window.translate_panel, window.analysis_panel
    view, box = panel.view, panel.inspect_box
    focused = view.focused_cell() if not view.focus_view.isHidden() else None
    selected = panel.links.tokens.selected
    current = window.tabs.currentWidget()
    tab = next((key for key in TABS if window.tab(key) is current),
               "translate")
    return SavedAnalysis(
        model=SavedModel(info.name, str(info.path), model_fingerprint(info.path)),
        source=panel.source.toPlainText(),
        decoding=panel.options.to_dict(),
        sentence=max(panel.shown_sentence, 0),
        hypothesis=panel.document.hypothesis,
        attention={"kind": view.kind(), "scale": view.color_scale(), "merge_words": view.merge_words(),
                   "focus": list(focused) if focused is not None else None},
        selection=(selected.row, selected.col),
        inspected=box.editor.toPlainText() if box.result is not None else "",
        inspected_shown=SHOWN.get(box.shown, ""),
        ablated=analysis.ablation.selected_heads(),
        tab=tab,
        analysis_view=analysis.tabs.tabText(analysis.tabs.currentIndex()),
    )


class AnalysisSession(QObject):
    """The window's Save analysis… / Open analysis…; `restored(path)` once an opened analysis is shown,
    `refused(message)` when it cannot be."""

    restored = Signal(str)
    refused = Signal(str)

    def __init__(self, window: WindowApi):
        super().__init__(window)
        self.window = window
        self.note = ""  # said when the model changed since the analysis was saved
        self._saved: SavedAnalysis | None = None
        self._path = ""

    # -- saving -----------------------------------------------------------------------------------

    def save_dialog(self) -> str:
        folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation) or str(Path.home())
        path, _ = QFileDialog.getSaveFileName(self.window, "Save analysis", str(Path(folder) / f"analysis{SUFFIX}"),
                                              f"NMT Desktop analysis (*{SUFFIX} *.json)")
        return self.save(path) if path else ""

    def save(self, path: str | Path) -> str:
        """Write the analysis to `path`; returns the path, "" when refused (the reason in an error box)."""
        try:
            capture(self.window).write(path)
        except (ValueError, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._refuse(f"Cannot save the analysis to {Path(path).name}: {reason}.")
            return ""
        self.window.statusBar().showMessage(f"Saved the analysis to {path}", 8000)
        return str(path)

    # -- opening ----------------------------------------------------------------------------------

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open analysis", "",
                                              f"NMT Desktop analysis (*{SUFFIX} *.json);;All files (*)")
        if path:
            self.open(path)

    def open(self, path: str | Path) -> bool:
        """Start restoring the analysis in `path`; False (and one sentence) when it cannot be."""
        try:
            saved = read_analysis(path)
        except AnalysisFileError as exc:
            self._refuse(str(exc))
            return False
        model = self._find_model(saved.model)
        if model is None:
            self._refuse(f"This analysis was made with the model “{saved.model.name}”, which is not installed "
                         f"here (it was in {saved.model.path}): get it in the Models tab or open its folder, "
                         f"then open the analysis again.")
            return False
        self._saved, self._path, self.note = saved, str(path), ""
        info = self.window.info
        if info is not None and _same(info.path, model):
            self._model_ready()
        else:
            _once(self.window.modelChanged, lambda _info: self._model_ready())
            self.window.load_model(model)
        return True

    def _find_model(self, saved: SavedModel) -> str | None:
        """The saved folder if it is a model folder here, else an installed or bundled model of that name."""
        if Path(saved.path, "config.json").is_file():
            return saved.path
        for _label, path in self.window.models_panel.picker_models():
            if Path(path).name == saved.name or Path(path).name == Path(saved.path).name:
                return path
        return None

    def _model_ready(self) -> None:
        saved, window = self._saved, self.window
        if saved is None or window.info is None:
            return
        if saved.model.fingerprint and model_fingerprint(window.info.path) != saved.model.fingerprint:
            self.note = (f"The model “{window.info.name}” has changed since this analysis was saved (its card or "
                         f"configuration differs): the translation and its attention may differ.")
        panel = window.translate_panel
        panel.options.from_dict(saved.decoding)
        panel.source.setPlainText(saved.source)
        if not saved.source.strip():
            self._views_ready()
            return
        _once(panel.translationFinished, lambda _id: self._views_ready())
        panel.translate()

    def _views_ready(self) -> None:
        saved, window = self._saved, self.window
        if saved is None:
            return
        panel, analysis = window.translate_panel, window.analysis_panel
        view = panel.view
        if 0 <= saved.sentence < len(panel.sentences):
            panel.select_sentence(saved.sentence)
        panel.select_hypothesis(saved.hypothesis)
        attention = saved.attention
        for combo, value in ((view.kind_combo, attention.get("kind")), (view.scale_combo, attention.get("scale"))):
            index = combo.findData(value)
            if index >= 0 and combo.model().item(index).isEnabled():
                combo.setCurrentIndex(index)
        view.merge_check.setChecked(bool(attention.get("merge_words", False)))
        focus = attention.get("focus")
        if isinstance(focus, list) and len(focus) == 2:
            try:
                view.focus(int(focus[0]), int(focus[1]))
            except (IndexError, ValueError):
                pass  # a head this model does not have: the grid alone
        analysis.ablation.set_heads(saved.ablated)
        panel.links.tokens.select(*saved.selection)
        box = panel.inspect_box
        if saved.inspected.strip():
            box.editor.setPlainText(saved.inspected)
            _once(box.inspected, lambda _result: self._inspected())
            if box.inspect():
                return
        self._finish()

    def _inspected(self) -> None:
        saved = self._saved
        if saved is not None and saved.inspected_shown:
            self.window.translate_panel.inspect_box.show_translation(GIVEN if saved.inspected_shown == "given"
                                                                     else MODEL)
        self._finish()

    def _finish(self) -> None:
        saved, window = self._saved, self.window
        if saved is None:
            return
        analysis = window.analysis_panel
        titles = [analysis.tabs.tabText(i) for i in range(analysis.tabs.count())]
        if saved.analysis_view in titles:
            analysis.tabs.setCurrentIndex(titles.index(saved.analysis_view))
        if saved.tab in TABS:
            window.show_tab(saved.tab)
        window.statusBar().showMessage(f"Opened the analysis {Path(self._path).name}", 8000)
        if self.note:
            window.show_error(self.note, "Analysis opened with a changed model")
        self._saved = None
        self.restored.emit(self._path)

    def _refuse(self, message: str) -> None:
        self.window.show_error(message, "Analysis")
        self.refused.emit(message)
