"""The `gui` command: open the desktop app, or (with --screenshot) run it headless and save a PNG.

Arguments are checked here, before any window opens, so a bad model or option is one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nmt_desktop.cli.common import (CLIError, UsageError, fix_arg, head_name, head_names, naming_model, positive_int,
                                    resolve_model)
from nmt_desktop.core.analysis.head_names import HeadRef, names
from nmt_desktop.gui.analysis.view_names import VIEW_KEYS  # Qt-free: --help stays fast

# the Analysis tab's views, in tab order: the keys of gui/analysis/registry.py (which imports Qt)
ANALYSIS_VIEWS = VIEW_KEYS


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "gui", parents=[common], help="open the desktop app (the default without a subcommand)",
        description="Open the desktop app. With --screenshot it runs headless-friendly (QT_QPA_PLATFORM="
                    "offscreen works): loads the model, translates --text, waits until decoding has finished "
                    "and the attention view has painted, saves a PNG of the window and exits. With "
                    "--analysis-view it shows that view of the Analysis tab and first runs the view's job "
                    "(ablation: --ablate; forced: --force-step; beam-tree: --beam; compare: --compare) and "
                    "waits for its result.")
    p.add_argument("-m", "--model", metavar="MODEL",
                   help="model folder or .zip, or an installed model's name (default: last used or bundled en-de)")
    p.add_argument("--text", metavar="TEXT", help="text to translate on start")
    p.add_argument("--beam", type=positive_int, default=None, metavar="N", help="beam size (1 = greedy)")
    p.add_argument("--int8", action="store_true", help="decode with int8 linear layers (the Decoding box's switch)")
    p.add_argument("--view", choices=("grid", "focus"), default=None, help="attention view: all heads or one")
    p.add_argument("--focus", type=head_name("--focus"), default=None, metavar="L3H2",
                   help="open the focus view on this decoder layer and head, counted from 1 (L3H2: layer 3, head 2; "
                        "L3 alone: layer 3's heads averaged)")
    for old in ("--layer", "--head"):  # the old 0-based pair: refused with the --focus spelling (see run)
        p.add_argument(old, default=None, help=argparse.SUPPRESS)
    p.add_argument("--inspect", metavar="TRANSLATION", default=None,
                   help="with --text: type TRANSLATION under “Your translation” and inspect it (its tokens coloured by "
                        "the model's probability, the model's own choices marked, both sentence scores; the attention "
                        "view and the Analysis tab show its tokens)")
    p.add_argument("--select", metavar="WORD", default=None,
                   help="with --text: select WORD as a click would (linked views): a source word lights up in the "
                        "source box, as a column of every heatmap and in its alignment links; a word of the translation "
                        "in the translation, as a row of every heatmap and in the Alternatives tab")
    p.add_argument("--tab", choices=("translate", "models", "train", "analysis"), default=None, help="tab to show")
    p.add_argument("--screenshot", metavar="FILE.png", help="save a PNG of the window and exit")
    p.add_argument("--theme", choices=("system", "light", "dark"), default=None,
                   help="colour scheme for this run (default: View > Theme's saved choice; not saved)")
    p.add_argument("--translate-file", metavar="FILE", default=None,
                   help="open File > Translate file… on this document (.docx, .odt, .pptx, .xlsx, .html, .md, .srt, "
                        ".vtt, .epub, .txt) and translate it (with "
                        "--screenshot, the PNG shows the finished dialog over the window)")
    g = p.add_argument_group("getting models (the Models tab's Get models… dialog)")
    g.add_argument("--get-models", metavar="QUERY", default=None,
                   help="open the Get models dialog and search for QUERY (e.g. 'en de'; '' lists every OPUS-MT model)")
    g.add_argument("--pull", metavar="REPO", default=None,
                   help="with --get-models: start downloading REPO in the dialog (with --screenshot, the PNG is "
                        "taken while the download is in progress)")
    a = p.add_argument_group("analysis tab (with --text)")
    a.add_argument("--analysis-view", choices=ANALYSIS_VIEWS, default=None,
                   help="show this view of the Analysis tab (implies --tab analysis)")
    a.add_argument("--ablate", type=head_names("--ablate"), default=None, metavar="L3H2[,...]",
                   help="ablation: heads switched off (zeroed) before re-translating, counted from 1 (L3H2: "
                        "decoder layer 3, head 2; L3: all of layer 3's heads; default: every head of the last layer)")
    a.add_argument("--force-step", type=positive_int, default=None, metavar="N",
                   help="forced: re-decode with the most probable other token forced at target step N "
                        "(1-based, default 1)")
    a.add_argument("--compare", metavar="MODEL",
                   help="compare: the second model (folder, .zip or installed name), run on the same --text")
    return p


def run(args: argparse.Namespace) -> int:
    if args.layer is not None or args.head is not None:
        raise UsageError(_old_focus(args.layer, args.head))
    if args.view == "grid" and args.focus is not None:
        raise UsageError("--focus chooses the focus view: drop --view grid")
    if args.pull is not None and args.get_models is None:
        raise UsageError("--pull needs --get-models QUERY (the dialog it runs in)")
    if args.screenshot is not None:
        shot = Path(args.screenshot)
        if not shot.parent.is_dir():
            raise CLIError(f"cannot write {shot}: folder {shot.parent} does not exist")
    for option in ("model", "compare"):
        if getattr(args, option) is not None:
            from nmt_desktop.core.formats.model_folder import read_config

            model_path = resolve_model(getattr(args, option))
            with naming_model(model_path):
                read_config(model_path)  # a quick check, so a bad model is one line before any window opens
            setattr(args, option, str(model_path))
    if args.inspect is not None and args.text is None:
        raise UsageError("--inspect needs --text TEXT (the source the translation translates)")
    for option in ("text", "inspect"):
        if getattr(args, option) is not None:
            setattr(args, option, fix_arg(getattr(args, option)))
    from nmt_desktop.gui.headless.gui_command import HeadlessError, run_gui

    try:
        return run_gui(args)
    except HeadlessError as exc:
        if exc.code == 2:
            raise UsageError(str(exc)) from None
        raise CLIError(str(exc)) from None


def _old_focus(layer: str | None, head: str | None) -> str:
    """The sentence refusing the old 0-based `--layer L --head H` (what it now reads as --focus)."""
    given = " ".join(f"--{name} {value}" for name, value in (("layer", layer), ("head", head)) if value is not None)
    text = f"{given}: the focused head is now --focus L3H2, counted from 1"
    try:
        old_layer, old_head = int(layer or 0), int(head or 0)  # the old default for the one left out: 0
    except ValueError:
        return text
    if old_layer < 0 or old_head < 0:
        return text
    return f"{text} ({given} in the old 0-based spelling is --focus {names([HeadRef(old_layer, old_head)])})"
