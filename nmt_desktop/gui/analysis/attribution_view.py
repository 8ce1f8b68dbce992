"""Token attributions of the current translation (issue 31): which source tokens and which earlier target tokens
each target token owes its probability to, by a method picked from `core.analysis.attribution.METHODS`.

Laid out like the attention views: target tokens x source tokens and target tokens x target prefix as two
heatmaps (a diverging, symmetric scale for signed methods), then each target token's share on the source (ALTI+'s
own measure when chosen, else the share of |attribution| there, labelled so) and the method's cost. Faithfulness
(comprehensiveness / sufficiency AOPC against a random ranking) is a button: it costs many perturbed passes.

Methods cost from one pass to hundreds, so nothing runs until Explain is clicked; the job runs on the view's
worker thread with a progress bar and a Cancel that stops it (attribution_job.py). A new model or sentence
cancels the job and clears every result: no heatmap of another model or sentence stays on screen.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QMessageBox, QProgressBar,
                               QPushButton, QSplitter, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget)

from nmt_desktop.core.analysis.words import display_piece

from .. import theme
from ..attention import export
from ..attention.focus import FocusView
from ..empty_state import EmptyMessage
from ..job_view import JobView
from ..labels import fit_width
from . import attribution_job as job
from .analysis_view import AnalysisView

if TYPE_CHECKING:
    from nmt_desktop.core.analysis.attribution import Attribution, Faithfulness
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.decoding.translator import Translator

# the save dialog's file types: what is written follows the type chosen (a menu button would block a scripted click)
EXPORTS = (("Source heatmap, PNG image (*.png)", "source", ".png"),
           ("Source heatmap, SVG image (*.svg)", "source", ".svg"),
           ("Prefix heatmap, PNG image (*.png)", "prefix", ".png"),
           ("Prefix heatmap, SVG image (*.svg)", "prefix", ".svg"),
           ("Source matrix, CSV table (*.csv)", "source", ".csv"),
           ("Prefix matrix, CSV table (*.csv)", "prefix", ".csv"),
           ("Everything, JSON (*.json)", "record", ".json"),
           ("Everything, NumPy arrays (*.npz)", "record", ".npz"))
SHARE_FILL = {False: ("#eef2ff", "#818cf8"), True: ("#2e3250", "#4338ca")}  # (0 %, 100 %) behind the theme's text


def methods() -> tuple[str, ...]:
    """The core's methods, read when asked: a method added to the core appears without a change here."""
    from nmt_desktop.core.analysis import attribution

    return tuple(attribution.METHODS)


def default_method(available: tuple[str, ...]) -> str:
    return next((m for m in ("alti_plus", "leave_one_out") if m in available), available[0] if available else "")


def _blend(low: str, high: str, amount: float) -> str:
    a, b = (np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)], dtype=float) for c in (low, high))
    mixed = np.round(a + (b - a) * float(np.clip(amount, 0.0, 1.0))).astype(int)
    return "#" + "".join(f"{v:02x}" for v in mixed)


class AttributionView(JobView, AnalysisView):
    """Method picker, token/word toggle, Explain / Cancel / Faithfulness, two heatmaps, the source share."""

    failure = "No attribution"
    explained = Signal(object)  # the token-level Attribution now shown
    faithfulnessDone = Signal(object)  # its Faithfulness
    progressed = Signal(int, int, int)  # request id, decoder passes done, expected (0: not known)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("attribution-worker", parent)
        self.translator: Translator | None = None
        self.translation: Translation | None = None
        self.results: dict[str, Attribution] = {}  # method -> token-level attribution of self.translation
        self.faith: dict[str, Faithfulness] = {}
        self._progress: job.Progress | None = None  # the job under way
        self.method = QComboBox()
        self.method.setToolTip("The attribution method (each one's description is below the controls)")
        self.method.currentIndexChanged.connect(self._method_changed)
        self.method.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.words = QCheckBox("Words")
        self.words.setToolTip("Sum subword tokens into words (source columns and target rows)")
        self.words.toggled.connect(lambda _on: self.refresh())
        self.run_button = QPushButton("Explain")
        self.run_button.setObjectName("primaryButton")
        self.run_button.setToolTip("Compute the chosen method's attribution of the translation shown")
        self.run_button.clicked.connect(lambda: self.explain())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the computation under way")
        self.cancel_button.clicked.connect(lambda: self.cancel())
        self.faith_button = QPushButton("Faithfulness")
        self.faith_button.setToolTip("Comprehensiveness and sufficiency (AOPC) of this attribution against a random "
                                     "ranking: about 20 perturbed sentences per target token, in batches")
        self.faith_button.clicked.connect(lambda: self.measure_faithfulness())
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save a heatmap as PNG/SVG, a matrix as CSV, or everything as JSON/NPZ "
                                      "(pick the file type in the dialog)")
        self.export_button.clicked.connect(lambda: self._ask_export())
        self.about = fit_width(QLabel(""))
        self.about.setObjectName("hint")
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(220)
        self.bar.setFormat("%v / %m passes")
        self.bar.hide()
        self.progressed.connect(self._show_progress)
        self.source_view = FocusView()
        self.prefix_view = FocusView()
        self.share = QTextBrowser()
        self.share.setMaximumHeight(96)
        self.cost = fit_width(QLabel(""))
        self.cost.setObjectName("hint")
        self.cost.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.empty = EmptyMessage()
        self._build_layout()
        self._fill_methods()
        theme.follow(self, lambda _look: self.refresh())
        self._update_enabled()
        self._show_page()

    def _build_layout(self) -> None:
        row = QHBoxLayout()
        row.addWidget(QLabel("Method"))
        row.addWidget(self.method)
        row.addWidget(self.words)
        row.addStretch(1)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.faith_button)
        row.addWidget(self.export_button)
        status = QHBoxLayout()
        status.addWidget(self.status, 1)
        status.addWidget(self.bar)
        heatmaps = QSplitter(Qt.Horizontal)
        heatmaps.addWidget(self.source_view)
        heatmaps.addWidget(self.prefix_view)
        heatmaps.setStretchFactor(0, 3)
        heatmaps.setStretchFactor(1, 2)
        heatmaps.setChildrenCollapsible(False)
        self.result_page = QWidget()
        result = QVBoxLayout(self.result_page)
        result.setContentsMargins(0, 0, 0, 0)
        result.addWidget(heatmaps, 1)
        result.addWidget(self.share)
        result.addWidget(self.cost)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.result_page)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.about)
        layout.addLayout(status)
        layout.addWidget(self.pages, 1)

    def _fill_methods(self) -> None:
        available = methods()
        if tuple(self.method.itemData(i) for i in range(self.method.count())) == available:
            return
        chosen = self.chosen_method() or default_method(available)
        self.method.blockSignals(True)
        self.method.clear()
        for i, name in enumerate(available):
            self.method.addItem(job.method_title(name), name)
            self.method.setItemData(i, job.description(name), Qt.ToolTipRole)
        self.method.setCurrentIndex(max(0, self.method.findData(chosen)))
        self.method.blockSignals(False)
        self._method_changed()

    # -- inputs ------------------------------------------------------------------------------------

    def chosen_method(self) -> str:
        return self.method.currentData() or ""

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        """A new model: the job under way is cancelled, every result of the old model cleared."""
        self.cancel(quiet=True)
        self.translator, self.translation = translator, None
        self._clear()
        self._fill_methods()

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
        if translation is self.translation:
            return
        self.cancel(quiet=True)
        self.translation = translation
        self._clear()

    def _clear(self) -> None:
        self.results, self.faith = {}, {}
        self.status.setText("")
        self.refresh()

    # -- jobs --------------------------------------------------------------------------------------

    def explain(self, method: str | None = None) -> int:
        """Compute `method` (default: the one chosen) for the translation shown; returns the request id (0: none)."""
        method = method or self.chosen_method()
        if method and method != self.chosen_method():
            self.method.setCurrentIndex(self.method.findData(method))
        if self.translator is None or self.translation is None or not method:
            return 0
        translator, translation = self.translator, self.translation
        progress = self._start_progress()

        def done(result: Attribution | None) -> None:
            self._finish_progress()
            if result is None or translation is not self.translation or translator is not self.translator:
                return
            self.results[method] = result
            self.status.setText("")
            self.refresh()
            self.explained.emit(result)

        return self.run_job(lambda: _unless_cancelled(lambda: job.explain(translator, translation, method, progress)),
                            done, f"Computing {job.method_title(method)}…")

    def measure_faithfulness(self) -> int:
        """Comprehensiveness / sufficiency of the shown method's token-level attribution (many passes)."""
        method = self.chosen_method()
        attribution = self.results.get(method)
        if self.translator is None or self.translation is None or attribution is None:
            return 0
        translator, translation = self.translator, self.translation
        progress = self._start_progress()

        def done(result: Faithfulness | None) -> None:
            self._finish_progress()
            if result is None or translation is not self.translation or self.results.get(method) is not attribution:
                return
            self.faith[method] = result
            self.status.setText("")
            self.refresh()
            self.faithfulnessDone.emit(result)

        return self.run_job(
            lambda: _unless_cancelled(lambda: job.faithful(translator, translation, attribution, progress)),
            done, "Measuring faithfulness (perturbed passes)…")

    def cancel(self, quiet: bool = False) -> None:
        """Stop the job under way (its thread stops at its next pass) and forget its result."""
        if self._progress is not None:
            self._progress.cancel()
        was = self.running
        self.forget_job()
        self._finish_progress()
        if was and not quiet:
            self.status.setText("Cancelled.")

    def _start_progress(self) -> job.Progress:
        if self._progress is not None:
            self._progress.cancel()
        request = self._next_id  # run_job gives the job this id next
        progress = job.Progress(lambda done, expected: self.progressed.emit(request, done, expected))
        self._progress = progress
        self.bar.setRange(0, 0)
        self.bar.show()
        return progress

    def _finish_progress(self) -> None:
        self._progress = None
        self.bar.hide()
        self._update_enabled()

    def _show_progress(self, request_id: int, done: int, expected: int) -> None:
        if request_id != self.request_id:
            return
        if expected > 0:
            self.bar.setRange(0, expected)
            self.bar.setValue(min(done, expected))
        else:
            self.bar.setRange(0, 0)

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id == self.request_id:
            self._progress = None
            self.bar.hide()
        super()._on_failed(request_id, message)

    def _update_enabled(self) -> None:
        ready = self.translator is not None and self.translation is not None
        busy = self.running
        self.run_button.setEnabled(ready and not busy)
        self.cancel_button.setEnabled(busy)
        self.faith_button.setEnabled(ready and not busy and self.chosen_method() in self.results)
        self.export_button.setEnabled(self.chosen_method() in self.results)

    # -- showing -----------------------------------------------------------------------------------

    def _method_changed(self, *_: object) -> None:
        self.about.setText(job.description(self.chosen_method()) if self.chosen_method() else "")
        self.refresh()

    def shown(self) -> Attribution | None:
        """The attribution on screen (word level when Words is checked), None when there is none."""
        attribution = self.results.get(self.chosen_method())
        if attribution is None:
            return None
        return attribution.words() if self.words.isChecked() else attribution

    def shown_share(self) -> job.Share | None:
        shown = self.shown()
        return None if shown is None else job.source_share(shown)

    def refresh(self) -> None:
        self._update_enabled()
        self._show_page()
        attribution = self.shown()
        if attribution is None:
            return
        title = job.method_title(attribution.method)
        for view, matrix, columns, what, names in (
                (self.source_view, attribution.source, attribution.source_tokens, "target × source",
                 ("target", "source")),
                (self.prefix_view, attribution.prefix, attribution.target_tokens, "target × target prefix",
                 ("target", "prefix"))):
            if view.diverging != attribution.signed:
                view.diverging = attribution.signed
                view.restyle(theme.current())
            view.set_matrix(matrix, columns, attribution.target_tokens, title=f"{title} · {what}",
                            levels=_levels(attribution, matrix), names=names)
        self._show_share(attribution)
        method = attribution.method
        cost = (f"{title}: {attribution.seconds:.2f} s for {len(self.results[method].target_tokens)} target tokens"
                f" · {'signed (blue: lowers, red: raises log p)' if attribution.signed else 'unsigned'}")
        faith = self.faith.get(method)
        self.cost.setText(cost + (f"\nFaithfulness: {job.faithfulness_line(faith)}" if faith is not None else
                                  "\nFaithfulness: click Faithfulness to measure it (costs extra passes)."))

    def _show_share(self, attribution: Attribution) -> None:
        share = self.shown_share()
        if share is None:
            self.share.clear()
            return
        look = theme.current()
        low, high = SHARE_FILL[look.dark]
        chips = []
        for token, value in zip(attribution.target_tokens, share.values):
            tip = html.escape(f"{display_piece(token)}: {value:.1%} {share.label}", quote=True)
            chips.append(f'<span title="{tip}" style="color:{look.text}; background-color:{_blend(low, high, value)};">'
                         f'{html.escape(display_piece(token))}&nbsp;<b>{value:.0%}</b></span>')
        self.share.setHtml(f'<div style="font-size:11pt; line-height:150%;"><span style="color:{look.muted};">'
                           f'Source share per target {"word" if attribution.level == "word" else "token"} '
                           f'({html.escape(share.label)}):</span> {" ".join(chips)}</div>')

    def _show_page(self) -> None:
        if self.chosen_method() in self.results:
            self.pages.setCurrentWidget(self.result_page)
            return
        if self.translator is None:
            title, hint = "No model loaded", "Load a model on the Models tab, then translate a sentence."
        elif self.translation is None:
            title, hint = "No translation yet", ("Translate a sentence on the Translate tab: its tokens are "
                                                 "explained here.")
        elif self.running:
            title, hint = "Computing…", "The attribution appears here when it is done (Cancel stops it)."
        else:
            title = f"{job.method_title(self.chosen_method())} of this translation"
            hint = ("Click Explain to compute which source and earlier target tokens each target token owes "
                    "its probability to.")
        self.empty.set_message(title, hint)
        self.pages.setCurrentWidget(self.empty)

    # -- export ------------------------------------------------------------------------------------

    def export(self, which: str, path: str) -> None:
        """`which`: "source" or "prefix" (a heatmap as .png/.svg, its matrix as .csv) or "record" (.json/.npz)."""
        attribution = self.shown()
        if attribution is None:
            raise ValueError("nothing to export: click Explain first")
        suffix = Path(path).suffix.lower()
        if which == "record":
            _save_record(path, suffix, job.record(attribution, self.shown_share(), self.faith.get(attribution.method)))
            return
        view = self.source_view if which == "source" else self.prefix_view
        if suffix == ".csv":
            columns = attribution.source_tokens if which == "source" else attribution.target_tokens
            export.save_csv(path, view.matrix(), columns, attribution.target_tokens, title=view._title)
            return
        export._suffix(path, export.IMAGE_SUFFIXES)
        export.ensure_laid_out(view.graphics)
        view.fit_ticks()
        export.ensure_laid_out(view.graphics)
        with view.paper():
            export.save_scene_image(path, view.graphics.ci)

    def _ask_export(self) -> None:
        filters = [label for label, _which, _suffix in EXPORTS]
        path, chosen = QFileDialog.getSaveFileName(self, "Export attribution", f"attribution-{self.chosen_method()}",
                                                   ";;".join(filters), filters[0])
        if not path:
            return
        which, suffix = export_kind(path, chosen)
        if not path.lower().endswith(suffix):
            path += suffix
        try:
            self.export(which, path)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, "Export failed", str(exc))

    def shutdown(self) -> None:
        if self._progress is not None:
            self._progress.cancel()
        super().shutdown()


def export_kind(path: str, chosen: str) -> tuple[str, str]:
    """(what, suffix) to write: the file type chosen in the dialog, else the one the name's suffix says (a source
    heatmap as PNG when it says none)."""
    for label, which, suffix in EXPORTS:
        if label == chosen:
            return which, suffix
    suffix = Path(path).suffix.lower()
    return next(((w, s) for _label, w, s in EXPORTS if s == suffix), ("source", ".png"))


def _unless_cancelled(run):
    """The job's result, or None when it was cancelled (dropped quietly: never a failure line)."""
    try:
        return run()
    except job.Cancelled:
        return None


def _levels(attribution: Attribution, matrix: np.ndarray) -> tuple[float, float]:
    """Signed: symmetric around 0 (white: no effect); unsigned: 0 .. the largest value."""
    top = float(np.abs(matrix).max()) if matrix.size else 0.0
    top = top if np.isfinite(top) and top > 1e-9 else 1e-9
    return (-top, top) if attribution.signed else (0.0, top)


def _save_record(path: str, suffix: str, data: dict[str, Any]) -> None:
    import json

    if suffix == ".json":
        Path(path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        return
    if suffix != ".npz":
        raise ValueError(f"{path}: unsupported file type {suffix or '(none)'}; use .json or .npz")
    arrays = {key: np.asarray(value, dtype=np.float32) for key, value in data.items()
              if key in ("source", "prefix", "logprobs", "source_share")}
    strings = {key: np.array([str(v) for v in data[key]], dtype=str) for key in ("source_tokens", "target_tokens")}
    with open(path, "wb") as fh:
        np.savez(fh, **arrays, **strings, method=np.array(data["method"], dtype=str),
                 level=np.array(data["level"], dtype=str), index=np.array(data["index"], dtype=str))
