"""nmt-desktop(1), generated from the CLI's own argparse help, so the man page never drifts from `--help`.

    python packaging/manpage.py OUT.1 [--date YYYY-MM-DD]

The root parser's help and each subcommand's `nmt-desktop COMMAND --help` are written verbatim (in no-fill
blocks, escaped for roff) under OPTIONS and COMMANDS; help2man would need one run per subcommand and the
frozen binary, this needs only the source tree. The version is nmt_desktop.__version__ (pyproject's too).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _escape(text: str) -> str:
    """Roff-safe lines: backslashes as \\e, minus signs as \\-, no line starting with a control character."""
    out = []
    for line in text.rstrip().splitlines():
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public accessor for them
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def render(date: str) -> str:
    """The whole page for nmt_desktop's current CLI; `date` (YYYY-MM-DD) goes into the title line."""
    os.environ["COLUMNS"] = "80"  # argparse wraps to the terminal: fix it, the page must not depend on who built it
    from nmt_desktop import __version__
    from nmt_desktop.cli.main import PROG, build_parser

    parser = build_parser()
    usage, _, rest = parser.format_help().partition("\n\n")
    title = PROG.upper().replace("-", "\\-")
    lines = [f'.TH {title} 1 "{date}" "{PROG} {__version__}" "User Commands"',
             ".SH NAME", f"{PROG} \\- encoder-decoder Transformer machine translation: desktop app and command line",
             ".SH SYNOPSIS", f".B {PROG}", "[\\fIOPTIONS\\fR] [\\fICOMMAND\\fR [\\fIARGUMENTS\\fR]]",
             ".SH DESCRIPTION", _escape(parser.description or ""),
             "Each command's own options are listed under COMMANDS (the same text as",
             f".B {PROG} COMMAND \\-\\-help\\fR).",
             ".SH OPTIONS", ".nf", _escape(usage + "\n\n" + rest), ".fi", ".SH COMMANDS"]
    todo = [(name, sub) for name, sub in _subparsers(parser).items()]
    while todo:  # depth first, in --help order: `models` has actions (list, search, remove) with their own help
        name, sub = todo.pop(0)
        lines += [f'.SS "{PROG} {name}"', ".nf", _escape(sub.format_help()), ".fi"]
        todo[:0] = [(f"{name} {child}", p) for child, p in _subparsers(sub).items()]
    lines += [".SH ENVIRONMENT", "NMT_DESKTOP_DATA_DIR, NMT_DESKTOP_CONFIG_DIR and NMT_DESKTOP_LOG_DIR replace the "
              "platform's user folders for models, settings and logs; HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE "
              f"are read by {PROG} pull and {PROG} models search.", ".SH SEE ALSO",
              f"/usr/share/doc/{PROG}/THIRD_PARTY_NOTICES.txt"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--date", help="default: SOURCE_DATE_EPOCH's day (UTC), else today")
    args = parser.parse_args(argv)
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", dt.datetime.now(dt.timezone.utc).timestamp()))
    date = args.date or dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%d")
    args.out.write_text(render(date), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
