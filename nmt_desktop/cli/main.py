"""Command-line interface: ``nmt-desktop`` and ``python -m nmt_desktop``.

The root parser, dispatch and exit codes. Each command is one module of this package with
``add_parser(subparsers, common)`` (builds its parser, returns it) and ``run(args) -> int``; add a
new one to ``COMMANDS`` (`eval` is evaluate.py: a module named eval would shadow the builtin).
Shared helpers live in ``common.py``; command modules never import this module, the package's
``__init__`` or each other. Heavy imports (torch, the model code) happen inside ``run``, so
``--help`` and ``--version`` are fast.

Exit codes: 0 success, 1 a bad model or input (one ``nmt-desktop: error: ...`` line on stderr),
2 a usage error (also one line). A traceback is printed only with ``--debug``.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from types import ModuleType
from typing import Sequence

from nmt_desktop import __version__
from nmt_desktop.cli import (align, evaluate, explain, export, gui, heads, import_marian, info, models, pull, qe,
                             score, serve, tm, train, translate, translate_file)
from nmt_desktop.cli.common import PROG, CLIError, UsageError, print_error

# Exceptions meaning "bad model or input" (exit 1, message only); looked up lazily so that importing
# the CLI does not import torch. (module, class name)
_USER_ERRORS = (
    ("nmt_desktop.core.formats.model_folder_layout", "ModelFolderError"),
    ("nmt_desktop.core.decoding.document", "InputTooLongError"),
    ("nmt_desktop.core.decoding.backends.choice", "BackendUnavailableError"),
    ("nmt_desktop.core.tokenizer", "TokenizerError"),
    ("nmt_desktop.core.config", "ConfigError"),
    ("nmt_desktop.core.training.corpus_formats", "CorpusError"),
    ("nmt_desktop.core.training.metrics", "MetricError"),
    ("nmt_desktop.core.training.train", "TrainingError"),
    ("nmt_desktop.core.locations", "ModelNotFoundError"),
    ("nmt_desktop.core.formats.marian", "MarianImportError"),
    ("nmt_desktop.core.hub.client", "HubError"),
    ("nmt_desktop.core.memory.entries", "TranslationMemoryError"),
)


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError (reported as one line) instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


# --- no subcommand: the desktop app --------------------------------------------------------------

def _run_gui(parser: argparse.ArgumentParser) -> int:
    try:
        from nmt_desktop.gui.app import main as gui_main
    except ModuleNotFoundError as exc:
        if exc.name not in ("nmt_desktop.gui", "nmt_desktop.gui.app"):
            raise
        parser.print_help(sys.stderr)
        print(f"{PROG}: the desktop app is not part of this build yet; use '{PROG} translate' or "
              f"'{PROG} info'", file=sys.stderr)
        return 2
    return int(gui_main() or 0)


# --- parser and main -----------------------------------------------------------------------------

# The commands, in `--help` order: each module has `add_parser(subparsers, common) -> parser` and
# `run(args) -> exit code`.
COMMANDS: tuple[ModuleType, ...] = (translate, translate_file, score, align, explain, qe, info, heads, train, evaluate, export, import_marian,
                                   models, pull, tm, serve, gui)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Encoder-decoder Transformer machine translation. "
                                            "Without a subcommand, opens the desktop app.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--self-test", action="store_true",
                        help="check this installation: load the default bundled model (or -m MODEL), translate "
                             "three sentences, render the attention grid offscreen; prints a JSON report, "
                             "exit 0 if all worked")
    parser.add_argument("-m", "--model", dest="self_test_model", metavar="MODEL", default=None,
                        help="with --self-test: the model folder or .zip to test")
    # --debug is also accepted after the subcommand; SUPPRESS keeps a subparser from resetting it
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks for errors")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        command.add_parser(sub, common).set_defaults(handler=command.run)
    parser.set_defaults(handler=None)
    return parser


def _debug_requested(argv: Sequence[str]) -> bool:
    args = list(argv)
    if "--" in args:
        args = args[: args.index("--")]
    return "--debug" in args


def _is_user_error(exc: BaseException) -> bool:
    if isinstance(exc, (CLIError, OSError, UnicodeError)):
        return True
    for module_name, class_name in _USER_ERRORS:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (the console script passes it to sys.exit)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(argv)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        debug = bool(args.debug)
        if args.self_test:
            if args.handler is not None:
                raise UsageError("--self-test takes no subcommand")
            from nmt_desktop.self_test import main as self_test_main

            return self_test_main(args.self_test_model)
        if args.self_test_model is not None:
            raise UsageError("-m before a subcommand applies only with --self-test")
        if args.handler is None:
            return _run_gui(parser)
        return args.handler(args)
    except UsageError as exc:
        if debug:
            traceback.print_exc()
        print_error(str(exc))
        return 2
    except KeyboardInterrupt as exc:  # Ctrl+C; the GUI's Interrupted carries 143 for SIGTERM
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        code = getattr(exc, "code", 130)
        return code if isinstance(code, int) else 130
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, and keep Python from complaining at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except Exception as exc:  # noqa: BLE001 - the one place that turns any failure into one line
        if debug:
            traceback.print_exc()
        if _is_user_error(exc):
            print_error(str(exc))
        else:
            print_error(f"{type(exc).__name__}: {exc} (run with --debug for details)")
        return 1
