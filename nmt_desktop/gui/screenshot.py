"""Headless `gui --tab analysis --analysis-view VIEW --screenshot FILE.png`: one Analysis view in a meaningful state.

`run_gui` has translated --text by the time `prepare_analysis_view` runs (the Translate tab fed the
Analysis tab its translation). Views that need a job of their own start it here: a re-translation with
heads switched off (ablation), a re-decoding with an alternative forced (forced), a beam search (beam
tree), loading and running a second model (compare), an alignment reading that runs the model (alignments).
The function returns only once that job has finished and the view shows its result, so the PNG saved next
holds it; a failed job is a HeadlessError with the view's own one-line message.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import SignalInstance

from nmt_desktop.core.analysis.head_names import HeadNameError, HeadRef, check_head_refs, expand_heads
from nmt_desktop.core.analysis.words import word_ids, words_of

from .headless import HeadlessError, wait_until

if TYPE_CHECKING:
    from .analysis.ablation import AblationView
    from .analysis.alignment import AlignmentView
    from .analysis.beam_tree import BeamTreeView
    from .analysis.compare import CompareView
    from .analysis.forced_prefix import ForcedPrefixView
    from .analysis.job import JobView
    from .app import MainWindow
    from .attention_view import AttentionView

# --analysis-view NAME -> the AnalysisPanel attribute holding that view (tab order)
VIEWS = {"stats": "stats", "ablation": "ablation", "alignments": "alignment", "coverage": "coverage",
         "forced": "forced", "beam-tree": "beam_tree", "compare": "compare"}
# options that only make sense with one view
_VIEW_OPTIONS = {"ablate": "ablation", "force_step": "forced", "compare": "compare"}
DEFAULT_TREE_BEAM = 4
JOB_TIMEOUT_S = 300


def check_options(args: argparse.Namespace) -> None:
    """Usage errors (HeadlessError, code 2) for analysis options that do not fit together; before any window
    opens. `--analysis-view` implies `--tab analysis`."""
    view = getattr(args, "analysis_view", None)
    for option, owner in _VIEW_OPTIONS.items():
        if getattr(args, option, None) is not None and view != owner:
            raise HeadlessError(f"--{option.replace('_', '-')} needs --analysis-view {owner}", 2)
    if view is None:
        return
    if args.tab not in (None, "analysis"):
        raise HeadlessError(f"--analysis-view shows the Analysis tab: drop --tab {args.tab}", 2)
    if args.text is None:
        raise HeadlessError("--analysis-view needs --text TEXT (the input to analyse)", 2)
    if view == "compare" and args.compare is None:
        raise HeadlessError("--analysis-view compare needs --compare MODEL (the second model)", 2)
    if view == "beam-tree" and args.beam is not None and args.beam < 2:
        raise HeadlessError(f"--analysis-view beam-tree needs --beam 2 or more (default {DEFAULT_TREE_BEAM})", 2)
    args.tab = "analysis"


def check_focus(args: argparse.Namespace, info: Any) -> None:
    """HeadlessError (code 2) when `--focus L3H2` names a layer or head the loaded model (`info`) lacks."""
    focus = getattr(args, "focus", None)
    if focus is not None:
        _check_heads([focus], "--focus", info.layers, info.heads)


def focus(view: AttentionView, ref: HeadRef | None) -> None:
    """Open the focus view on `--focus` (a layer alone: its heads averaged; None: the first head)."""
    ref = ref or HeadRef(0, 0)
    view.focus(ref.layer, -1 if ref.head is None else ref.head)


def inspect(window: MainWindow, translation: str) -> None:
    """`--inspect TRANSLATION`: typed under "Your translation" and inspected; returns once the result is shown
    and the attention view has painted its tokens (a refusal or failure is a HeadlessError, its one sentence)."""
    box = window.translate_panel.inspect_box
    box.editor.setPlainText(translation)
    results: list[Any] = []
    failures: list[str] = []
    box.inspected.connect(results.append)
    box.failed.connect(failures.append)
    if not box.inspect():
        raise HeadlessError(box.status.text())
    wait_until(lambda: bool(results or failures), JOB_TIMEOUT_S, "the inspection")
    if failures:
        raise HeadlessError(failures[-1])
    rows = len(results[0].given.best.tokens)
    wait_until(lambda: window.translate_panel.view.painted_rows() >= rows, 60, "the attention view to paint")


def select_word(window: MainWindow, word: str) -> None:
    """`--select WORD`: select WORD of the sentence shown, as a click would (linked views): a source word (its
    first token), else a word of the translation; a word in neither is a HeadlessError (code 2) naming them."""
    panel = window.translate_panel
    unit = panel.document.current()
    if unit is None or unit.translation is None:
        raise HeadlessError("--select: there is no finished translation to select a word of", 2)
    target_tokens = unit.translation.best.tokens
    for side, tokens in (("source", unit.source_tokens), ("target", target_tokens)):
        words = words_of(tokens)
        if word in words:
            token = word_ids(tokens).index(words.index(word))
            panel.links.tokens.select(*((-1, token) if side == "source" else (token, -1)))
            return
    raise HeadlessError(f"--select {word}: no such word in the source ({', '.join(words_of(unit.source_tokens))}) "
                        f"or the translation ({', '.join(words_of(target_tokens))})", 2)


def _check_heads(refs: list[HeadRef], flag: str, layers: int, heads: int) -> None:
    try:
        check_head_refs(refs, flag, layers, heads)
    except HeadNameError as exc:
        raise HeadlessError(str(exc), 2) from None


def prepare_analysis_view(window: MainWindow, args: argparse.Namespace) -> None:
    """Show `args.analysis_view` on the Analysis tab and, for a job view, run its job and wait for the result."""
    panel = window.analysis_panel
    view = getattr(panel, VIEWS[args.analysis_view])
    window.show_tab("analysis")
    panel.tabs.setCurrentWidget(view)
    if panel.translation is None:
        raise HeadlessError(f"nothing to analyse: {panel.title.text()}")
    prepare = _PREPARE.get(args.analysis_view)
    if prepare is not None:
        prepare(window, view, args)


def _run_job(view: JobView, start: Callable[[], int], done: SignalInstance, what: str,
             message: Callable[[], str]) -> None:
    """Start a view's background job and process events until it ends (the view's request_id back to 0);
    HeadlessError with the view's message unless `done` was emitted."""
    results: list[tuple] = []
    done.connect(lambda *a: results.append(a))
    if not start():
        raise HeadlessError(f"could not start {what}")
    wait_until(lambda: view.request_id == 0, JOB_TIMEOUT_S, what)
    if not results:
        raise HeadlessError(message() or f"{what} failed")


def _ablation(window: MainWindow, view: AblationView, args: argparse.Namespace) -> None:
    cfg = view.translator.config
    refs = args.ablate or [HeadRef(cfg.decoder_layers - 1)]  # default: the last layer's heads
    _check_heads(refs, "--ablate", cfg.decoder_layers, cfg.n_heads)
    view.set_heads(expand_heads(refs, cfg.n_heads))
    _run_job(view, view.retranslate, view.retranslated, "the re-translation with heads off", view.status.text)


def _forced(window: MainWindow, view: ForcedPrefixView, args: argparse.Namespace) -> None:
    """Force the most probable token other than the chosen one at step --force-step (1-based)."""
    translation = window.analysis_panel.translation
    n = args.force_step or 1
    steps = min(len(translation.target_ids), len(translation.best.alternatives))
    if not 1 <= n <= steps:
        raise HeadlessError(f"--force-step {n} is out of range: the translation has {steps} steps (1..{steps})", 2)
    chosen = translation.target_ids[n - 1]
    other = next((a for a in translation.best.alternatives[n - 1] if a.token_id != chosen), None)
    if other is None:
        raise HeadlessError(f"--force-step {n}: the step has no alternative to force")
    cfg = getattr(window.translate_panel, "last_config", None)
    _run_job(view, lambda: window.analysis_panel.force_alternative(translation, n - 1, other.token_id, cfg),
             view.forcedDone, "the forced re-decoding", view.info.text)


def _beam_tree(window: MainWindow, view: BeamTreeView, args: argparse.Namespace) -> None:
    beam = args.beam or DEFAULT_TREE_BEAM
    if not view.beam.minimum() <= beam <= view.beam.maximum():
        raise HeadlessError(f"--beam {beam}: the beam tree draws beams of {view.beam.minimum()}.."
                            f"{view.beam.maximum()}", 2)
    view.beam.setValue(beam)
    _run_job(view, view.decode, view.decoded, "the beam search", view.status.text)  # selects the best node
    _fit_tree(view)


def _fit_tree(view: BeamTreeView, min_scale: float = 0.55) -> None:
    """Show the whole tree when it fits at >= min_scale, else that scale around the selected node."""
    graphics, rect = view.graphics, view.scene.sceneRect()
    viewport = graphics.viewport().rect()
    scale = min(1.0, viewport.width() / max(rect.width(), 1.0), viewport.height() / max(rect.height(), 1.0))
    graphics.resetTransform()
    graphics.scale(max(scale, min_scale), max(scale, min_scale))
    if view.selected in view.items:
        graphics.centerOn(view.items[view.selected])


def _compare(window: MainWindow, view: CompareView, args: argparse.Namespace) -> None:
    _run_job(view, lambda: view.load_other(args.compare), view.otherLoaded, "model B to load", view.status.text)
    _run_job(view, view.compare, view.compared, "the comparison", view.status.text)


def _alignments(window: MainWindow, view: AlignmentView, args: argparse.Namespace) -> None:
    """A reading that runs the model (masking) starts once the view is shown: wait for its links."""
    wait_until(lambda: not view.running, JOB_TIMEOUT_S, "the alignment")
    if not view.links:
        raise HeadlessError(view.pharaoh_label.text() or "no alignment to show")


_PREPARE: dict[str, Callable[..., None]] = {  # (window, view, args)
    "ablation": _ablation, "alignments": _alignments, "forced": _forced, "beam-tree": _beam_tree,
    "compare": _compare}
