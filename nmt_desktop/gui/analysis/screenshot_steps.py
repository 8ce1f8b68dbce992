"""What `gui --analysis-view KEY --screenshot FILE.png` does to a view before the PNG: each view's usage check
(before any window opens) and preparation (once the translation is shown), named by its registry entry.

A view that needs a job of its own starts it here: a re-translation with heads switched off (ablation), a
re-decoding with an alternative forced (forced), a beam search (beam tree), loading and running a second model
(compare). A preparation returns only once that job has finished and the view shows its result, so the PNG
saved next holds it; a failed job is a HeadlessError with the view's own one-line message.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable, Protocol

from PySide6.QtCore import SignalInstance

from nmt_desktop.core.analysis.head_names import HeadNameError, HeadRef, check_head_refs, expand_heads

from ..waiting import HeadlessError, wait_until

if TYPE_CHECKING:
    from ..job_view import JobView
    from .ablation import AblationView
    from .alignment import AlignmentView
    from .attribution_view import AttributionView
    from .beam_tree import BeamTreeView
    from .compare import CompareView
    from .forced_prefix import ForcedPrefixView

DEFAULT_TREE_BEAM = 4
JOB_TIMEOUT_S = 300



class ShotWindow(Protocol):
    """What a screenshot step uses of the main window. Typed loosely: naming the window or the panel here
    would make the analysis package import what imports it."""

    translate_panel: Any  # the Translate tab (its last_config)
    analysis_panel: Any  # this package's AnalysisPanel

def check_heads(refs: list[HeadRef], flag: str, layers: int, heads: int) -> None:
    """A HeadlessError (code 2) naming `flag` when a head or layer of `refs` is not in the model."""
    try:
        check_head_refs(refs, flag, layers, heads)
    except HeadNameError as exc:
        raise HeadlessError(str(exc), 2) from None


def run_job(view: JobView, start: Callable[[], int], done: SignalInstance, what: str) -> None:
    """Start a view's background job and process events until it ends (the view's request_id back to 0);
    HeadlessError with the view's status line unless `done` was emitted."""
    results: list[tuple] = []
    done.connect(lambda *a: results.append(a))
    if not start():
        raise HeadlessError(f"could not start {what}")
    wait_until(lambda: view.request_id == 0, JOB_TIMEOUT_S, what)
    if not results:
        raise HeadlessError(view.status_label().text() or f"{what} failed")


def ablation(window: ShotWindow, view: AblationView, args: argparse.Namespace) -> None:
    cfg = view.translator.config
    refs = args.ablate or [HeadRef(cfg.decoder_layers - 1)]  # default: the last layer's heads
    check_heads(refs, "--ablate", cfg.decoder_layers, cfg.n_heads)
    view.set_heads(expand_heads(refs, cfg.n_heads))
    run_job(view, view.retranslate, view.retranslated, "the re-translation with heads off")


def alignments(window: ShotWindow, view: AlignmentView, args: argparse.Namespace) -> None:
    """A reading that runs the model (masking) started when the view was shown, and has been waited for."""
    if not view.links:
        raise HeadlessError(view.pharaoh_label.text() or "no alignment to show")


def forced(window: ShotWindow, view: ForcedPrefixView, args: argparse.Namespace) -> None:
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
    run_job(view, lambda: window.analysis_panel.force_alternative(translation, n - 1, other.token_id, cfg),
            view.forcedDone, "the forced re-decoding")


def check_beam_tree(args: argparse.Namespace) -> None:
    if args.beam is not None and args.beam < 2:
        raise HeadlessError(f"--analysis-view beam-tree needs --beam 2 or more (default {DEFAULT_TREE_BEAM})", 2)


def beam_tree(window: ShotWindow, view: BeamTreeView, args: argparse.Namespace) -> None:
    beam = args.beam or DEFAULT_TREE_BEAM
    if not view.beam.minimum() <= beam <= view.beam.maximum():
        raise HeadlessError(f"--beam {beam}: the beam tree draws beams of {view.beam.minimum()}.."
                            f"{view.beam.maximum()}", 2)
    view.beam.setValue(beam)
    run_job(view, view.decode, view.decoded, "the beam search")  # selects the best node
    fit_tree(view)


def fit_tree(view: BeamTreeView, min_scale: float = 0.55) -> None:
    """Show the whole tree when it fits at >= min_scale, else that scale around the selected node."""
    graphics, rect = view.graphics, view.scene.sceneRect()
    viewport = graphics.viewport().rect()
    scale = min(1.0, viewport.width() / max(rect.width(), 1.0), viewport.height() / max(rect.height(), 1.0))
    graphics.resetTransform()
    graphics.scale(max(scale, min_scale), max(scale, min_scale))
    if view.selected in view.items:
        graphics.centerOn(view.items[view.selected])


def check_compare(args: argparse.Namespace) -> None:
    if args.compare is None:
        raise HeadlessError("--analysis-view compare needs --compare MODEL (the second model)", 2)


def compare(window: ShotWindow, view: CompareView, args: argparse.Namespace) -> None:
    run_job(view, lambda: view.load_other(args.compare), view.otherLoaded, "model B to load")
    run_job(view, view.compare, view.compared, "the comparison")


def attribution(window: ShotWindow, view: AttributionView, args: argparse.Namespace) -> None:
    """The view's default method (ALTI+ when the core has it, else leave-one-out), computed and waited for."""
    run_job(view, view.explain, view.explained, "the attribution")
