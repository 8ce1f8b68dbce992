"""The Analysis tab's views, in tab order: the one table the panel builds its tabs and fans its calls out
from, the screenshot's `--analysis-view` table is generated from, and the CLI's choices are checked against.

A new view is one `ViewEntry` here (and its key in `view_names.VIEW_KEYS`, the CLI's Qt-free copy: a
mismatch is refused at import); neither the panel nor the screenshot names a view.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from . import screenshot_steps as steps
from .ablation import AblationView
from .alignment import AlignmentView
from .attribution_view import AttributionView
from .analysis_view import AnalysisView
from .beam_tree import BeamTreeView
from .compare import CompareView
from .coverage import CoverageView
from .dataset_view import DatasetView
from .forced_prefix import ForcedPrefixView
from .head_stats import HeadStatsView
from .view_names import VIEW_KEYS

if TYPE_CHECKING:
    from .screenshot_steps import ShotWindow

Prepare = Callable[["ShotWindow", Any, argparse.Namespace], None]  # (window, the view, the CLI's arguments)


@dataclass(frozen=True)
class ViewEntry:
    """One page of the Analysis tab: how it is named, built and reached, and what a headless screenshot of it
    (`gui --analysis-view KEY --screenshot`) checks and runs."""

    key: str  # `--analysis-view KEY`
    title: str  # its tab's title (a saved analysis names its view by it)
    attribute: str  # `AnalysisPanel.<attribute>`: how the window, the saved analysis and tests reach the view
    view: Callable[[], AnalysisView]  # builds the view (its class)
    options: tuple[str, ...] = ()  # the CLI options (argparse dests) only this view takes
    check: Callable[[argparse.Namespace], None] | None = None  # usage errors, before any window opens
    prepare: Prepare | None = None  # the job to run (and wait for) before the PNG

    def build(self) -> AnalysisView:
        """A new view, told its key and title."""
        view = self.view()
        if not isinstance(view, AnalysisView):
            raise TypeError(f"Analysis view {self.key!r}: {self.view!r} built a {type(view).__name__}, "
                            f"not an AnalysisView")
        view.key, view.title = self.key, self.title
        return view


VIEWS: tuple[ViewEntry, ...] = (
    ViewEntry("stats", "Head statistics", "stats", HeadStatsView),
    ViewEntry("ablation", "Head ablation", "ablation", AblationView, options=("ablate",), prepare=steps.ablation),
    ViewEntry("alignments", "Alignments", "alignment", AlignmentView, prepare=steps.alignments),
    ViewEntry("coverage", "Coverage", "coverage", CoverageView),
    ViewEntry("forced", "Forced prefix", "forced", ForcedPrefixView, options=("force_step",), prepare=steps.forced),
    ViewEntry("beam-tree", "Beam tree", "beam_tree", BeamTreeView, check=steps.check_beam_tree,
              prepare=steps.beam_tree),
    ViewEntry("compare", "Compare models", "compare", CompareView, options=("compare",), check=steps.check_compare,
              prepare=steps.compare),
    ViewEntry("attribution", "Attribution", "attribution", AttributionView, prepare=steps.attribution),
    ViewEntry("dataset", "Heads/methods", "dataset", DatasetView),
)


def entry(key: str) -> ViewEntry:
    """The entry of `--analysis-view KEY`."""
    for candidate in VIEWS:
        if candidate.key == key:
            return candidate
    raise KeyError(f"no Analysis view {key!r}: the views are {', '.join(e.key for e in VIEWS)}")


def _check_keys(entries: tuple[ViewEntry, ...], keys: tuple[str, ...]) -> None:
    registered = tuple(e.key for e in entries)
    if registered != keys:
        raise RuntimeError(f"the Analysis registry's keys ({', '.join(registered)}) differ from "
                           f"view_names.VIEW_KEYS ({', '.join(keys)}): a view must be in both, in the same order")


_check_keys(VIEWS, VIEW_KEYS)
