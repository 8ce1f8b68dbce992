"""The `translate-file` command: a document (docx, odt, pptx, xlsx, html, md, srt, vtt, epub, txt) translated
into a copy with the same formatting (core/documents/), with a glossary and do-not-translate spans; a bilingual
file (XLIFF, PO: core/bilingual/) gets its empty targets filled and marked for review.

The translation is written beside the input (report.docx -> report.de.docx) or to -o, through a temporary
file renamed into place: the input is never written over, and a failed or interrupted run leaves nothing.
A summary on stderr says how many sentences were translated and how the glossary terms fared.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from nmt_desktop.cli.common import (MODEL_HELP, CLIError, UsageError, add_running_options, add_target_lang_option,
                                    fix_arg, load_translator)
from nmt_desktop.cli.document_options import add_document_options, document_options, glossary_summary

SUFFIXES = ".docx .odt .pptx .xlsx .html .htm .md .markdown .srt .vtt .epub .txt .xlf .xliff .po .pot"  # core/documents/formats (tests keep them equal)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "translate-file", parents=[common], help="translate a document, keeping its formatting",
        description=f"Translate a document ({SUFFIXES}) into a copy that keeps its structure and formatting: "
                    "every paragraph, table cell, header, footer, footnote, text box, slide note, alt text, "
                    "title and subtitle cue is translated; a bold word or a link inside a sentence lands on the "
                    "words of the translation aligned to it. URLs, e-mail addresses, numbers with units, emoji "
                    "and inline code are kept as they are. A bilingual file (XLIFF 1.2 or 2.x, PO/POT) gets its empty "
                    "targets filled, marked for review with the model's trust estimate; confirmed ones are kept.")
    p.add_argument("input", metavar="IN", help="the document to translate")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="where to write the translation (default: beside IN, named IN.<target language>.<suffix>)")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    add_target_lang_option(p)
    add_document_options(p)
    p.add_argument("--beam", type=int, default=1, metavar="N", help="beam size; 1 = greedy (default 1)")
    p.add_argument("--overwrite", action="store_true",
                   help="bilingual files (.xlf, .xliff, .po, .pot): translate again every segment that has a target, "
                        "confirmed ones included (default: only empty targets are filled; machine output is "
                        "marked for review)")
    p.add_argument("--plain", action="store_true",
                   help="do not carry formatting inside sentences (faster: no alignment; each paragraph's "
                        "translation goes into its first run)")
    m = p.add_argument_group("translation memory")
    m.add_argument("--tm", metavar="PATH",
                   help="a translation memory (nmt-desktop tm): a paragraph, cell or segment it holds exactly (for the "
                        "model's language pair) is taken from it as it stands, not translated; fuzzy matches of the "
                        "others are listed for the reviewer (and written into bilingual files where they have a place)")
    m.add_argument("--tm-min", type=float, default=75.0, metavar="SCORE",
                   help="the lowest fuzzy match score (0-100) shown (default 75)")
    add_running_options(p, "sentences translated")
    return p


def _open_memory(args: argparse.Namespace):  # -> TranslationMemory | None
    """--tm's file, opened before the model loads (a wrong path is said at once); CLIError in one sentence."""
    if not args.tm:
        return None
    from nmt_desktop.core.memory import TranslationMemory, TranslationMemoryError

    try:
        return TranslationMemory(Path(fix_arg(args.tm)), create=False)
    except TranslationMemoryError as exc:
        raise CLIError(str(exc)) from None


def _document_memory(memory, args: argparse.Namespace, translator, language: str | None):  # -> DocumentMemory | None
    """The memory as this document sees it: the model's language pair, --tm-min."""
    if memory is None:
        return None
    from nmt_desktop.core.memory import Pair
    from nmt_desktop.core.memory.document_matches import DocumentMemory

    source = (translator.config.src_lang or "").strip("<>")
    if not source or not language:
        raise CLIError("--tm needs the model's languages to find its memory entries, and the model names none")
    return DocumentMemory(memory, Pair.of(source, language), args.tm_min)


def run(args: argparse.Namespace) -> int:
    from nmt_desktop.core.config import ConfigError, DecodeConfig
    from nmt_desktop.core.documents.blocks import DocumentError
    from nmt_desktop.core.documents.formats import open_document
    from nmt_desktop.core.documents.translate_document import output_path, save_translation, translate_document

    source = Path(fix_arg(args.input))
    options = document_options(args, keep_formatting=not args.plain)
    try:
        cfg = DecodeConfig(beam_size=args.beam, attention=True, alternatives=0)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        document = open_document(source)
    except DocumentError as exc:
        raise CLIError(str(exc)) from None
    if args.overwrite and not hasattr(document, "select"):
        raise UsageError("--overwrite is for bilingual files (.xlf, .xliff, .po, .pot), whose segments may have targets")
    if args.overwrite:
        document.select(overwrite=True)
    memory_file = _open_memory(args)
    translator = load_translator(args.model, args, args.target_lang)
    if hasattr(document, "language_conflict"):  # a bilingual file that asks for other languages than the model's
        conflict = document.language_conflict(translator.config.src_lang, translator.target_language or translator.config.tgt_lang)
        if conflict:
            raise CLIError(conflict)
    language = (translator.target_language or translator.config.tgt_lang or "").strip("<>") or None
    out = Path(fix_arg(args.output)) if args.output else output_path(source, language)
    if not out.parent.is_dir():
        raise CLIError(f"cannot write {out}: folder {out.parent} does not exist")
    memory = _document_memory(memory_file, args, translator, language)
    if memory is not None:
        options.reuse = memory.reuse
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=0, unit="sentence", file=sys.stderr, leave=False)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    started = time.perf_counter()
    try:
        result = translate_document(translator, document, cfg, options, progress)
        if memory is not None:
            memory.find_fuzzy(document.blocks, set(result.reused))
            if hasattr(document, "memory_matches"):  # a bilingual file writes them for its reviewer (core/bilingual/)
                document.memory_matches = memory.block_matches(len(document.blocks))
        save_translation(result, out)
    except DocumentError as exc:
        raise CLIError(str(exc)) from None
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - started
    print(f"{out}: {result.sentences} sentences in {len(document.blocks)} blocks translated in {seconds:.1f} s; "
          f"{glossary_summary(result.report)}", file=sys.stderr)
    if hasattr(document, "kept"):  # bilingual files: targets already there stay as they were
        marked = "; machine translations marked for review" if document.blocks else ""
        print(f"  {document.kept} segments with a target kept as they were{marked}", file=sys.stderr)
    if memory is not None:  # what the translation memory gave (core/memory/document_matches.py)
        print("\n".join(f"  {line}" for line in memory.summary(len(result.reused))), file=sys.stderr)
        memory.memory.close()
    if result.cut_line():  # a sentence too long for the model, translated in pieces (issue 42)
        print(f"  {result.cut_line()}", file=sys.stderr)
    return 0
