"""Headless `gui --tab analysis --analysis-view VIEW --screenshot FILE.png`: one Analysis view in a meaningful state.

`run_gui` has translated --text by the time `prepare_analysis_view` runs (the Translate tab fed the
Analysis tab its translation). What each view checks and runs is its registry entry's (`analysis/registry.py`,
the steps in `analysis/screenshot_steps.py`); the tables here are generated from it. The function returns
only once the view's job has finished and the view shows its result, so the PNG saved next holds it; a
failed job is a HeadlessError with the view's own one-line message.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable

from nmt_desktop.core.analysis.head_names import HeadRef
from nmt_desktop.core.analysis.words import word_ids, words_of

from ..analysis import registry
from ..analysis.screenshot_steps import JOB_TIMEOUT_S, check_heads
from ..waiting import HeadlessError, wait_until

if TYPE_CHECKING:
    from ..window_api import WindowApi
    from ..attention.grid import AttentionView

# generated from the registry, in tab order: --analysis-view KEY -> the AnalysisPanel attribute holding its view,
# -> its usage check, -> its preparation; an option (argparse dest) only one view takes -> that view's key
VIEWS: dict[str, str] = {entry.key: entry.attribute for entry in registry.VIEWS}
_CHECK: dict[str, Callable[[argparse.Namespace], None]] = {
    entry.key: entry.check for entry in registry.VIEWS if entry.check is not None}
_PREPARE: dict[str, registry.Prepare] = {
    entry.key: entry.prepare for entry in registry.VIEWS if entry.prepare is not None}
_VIEW_OPTIONS: dict[str, str] = {option: entry.key for entry in registry.VIEWS for option in entry.options}


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
    check = _CHECK.get(view)
    if check is not None:
        check(args)
    args.tab = "analysis"


def check_focus(args: argparse.Namespace, info: Any) -> None:
    """HeadlessError (code 2) when `--focus L3H2` names a layer or head the loaded model (`info`) lacks."""
    focus = getattr(args, "focus", None)
    if focus is not None:
        check_heads([focus], "--focus", info.layers, info.heads)


def focus(view: AttentionView, ref: HeadRef | None) -> None:
    """Open the focus view on `--focus` (a layer alone: its heads averaged; None: the first head)."""
    ref = ref or HeadRef(0, 0)
    view.focus(ref.layer, -1 if ref.head is None else ref.head)


def inspect(window: WindowApi, translation: str) -> None:
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


def select_word(window: WindowApi, word: str) -> None:
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


def prepare_analysis_view(window: WindowApi, args: argparse.Namespace) -> None:
    """Show `args.analysis_view` on the Analysis tab, wait for a job it starts on being shown, then run its
    preparation (its own job, waited for) if it has one."""
    panel = window.analysis_panel
    view = getattr(panel, VIEWS[args.analysis_view])
    window.show_tab("analysis")
    panel.tabs.setCurrentWidget(view)
    if panel.translation is None:
        raise HeadlessError(f"nothing to analyse: {panel.title.text()}")
    wait_until(lambda: not view.running, JOB_TIMEOUT_S, f"the {view.title} view")
    prepare = _PREPARE.get(args.analysis_view)
    if prepare is not None:
        prepare(window, view, args)
