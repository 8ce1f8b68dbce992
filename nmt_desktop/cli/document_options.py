"""The options `translate` and `translate-file` share: --glossary, --dnt and --no-auto-dnt, read into the
core's DocumentOptions (core/documents/translate_document.py), and the summary line of what the glossary did."""

from __future__ import annotations

import argparse

from nmt_desktop.cli.common import CLIError, UsageError, fix_arg


def add_document_options(p: argparse.ArgumentParser) -> None:
    """--glossary, --dnt and --no-auto-dnt (translate and translate-file)."""
    g = p.add_argument_group("glossary and do-not-translate")
    g.add_argument("--glossary", metavar="G",
                   help="a glossary (.tsv: source<TAB>target[<TAB>note] per line, or .tbx): the translation uses "
                        "the target term wherever the source term (or an inflected form) occurs")
    g.add_argument("--dnt", metavar="REGEX",
                   help="text matching this regular expression is kept as it is (names, product codes, ...)")
    g.add_argument("--no-auto-dnt", action="store_true",
                   help="translate URLs, e-mail addresses, numbers with units and emoji too (kept by default)")


def document_options(args: argparse.Namespace, keep_formatting: bool = True):  # -> DocumentOptions
    """DocumentOptions from --glossary/--dnt/--no-auto-dnt; CLIError/UsageError in one sentence."""
    from nmt_desktop.core.documents.blocks import DocumentError
    from nmt_desktop.core.documents.glossary import Glossary
    from nmt_desktop.core.documents.placeholders import compile_dnt
    from nmt_desktop.core.documents.translate_document import DocumentOptions

    try:
        dnt = compile_dnt(fix_arg(args.dnt) if args.dnt else None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    glossary = None
    if args.glossary:
        try:
            glossary = Glossary.read(fix_arg(args.glossary))
        except DocumentError as exc:
            raise CLIError(str(exc)) from None
    return DocumentOptions(glossary=glossary, dnt=dnt, automatic_dnt=not args.no_auto_dnt,
                           keep_formatting=keep_formatting, batch_size=args.batch_size)


def glossary_summary(report) -> str:  # report: ConstraintReport
    """What the glossary and kept spans did (core/documents/term_report.py): the counts, then a line per
    term use that was not placed or changed its sentence."""
    from nmt_desktop.core.documents.term_report import counts_line, details

    return "\n".join([counts_line(report), *(f"  {line}" for line in details(report))])
