"""Translating a document: its blocks' sentences in length-sorted batches, with do-not-translate spans as
placeholders, glossary terms forced in, and each block's formatting carried over by alignment.

Per block (blocks.py): verbatim runs (inline code) and do-not-translate spans (placeholders.py) become
placeholder names; the text is cut into sentences by the one policy (core/decoding/document.py), a
sentence longer than the model takes cut into pieces that fit and named in `DocumentTranslation.cut_sentences`
(a document is never refused for one long list or table row, issue 42); every
sentence of the document is translated in batches (constraints.py, which also forces glossary terms and
placeholders in); the names are put back; and a block whose runs look different (a bold word, a link)
has its translation cut into its runs by word alignment (inline_transfer.py: the model's own alignment,
core/analysis/alignment.py). A block of one look needs no alignment: its text goes to its first run.
`save_translation` writes through a temporary file renamed into place, never over the input. With
`DocumentOptions.reuse` (a translation memory, `translate-file --tm`), a block whose plain text the memory holds
exactly is taken from it and never reaches the model for translation (`DocumentTranslation.reused`); if its runs
look different, the model only aligns the memory's target to it so that they land on its words
(given_translation.py).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.documents.blocks import Block, Document, DocumentError, TranslatedBlock, TranslatedRun, untranslated
from nmt_desktop.core.documents.constraints import Constraint, ConstraintReport, repair_all, translate_constrained
from nmt_desktop.core.documents.glossary import Glossary, Term, find_terms
from nmt_desktop.core.documents.given_translation import (given_block, position_alignment, run_infos,
                                                           source_words)
from nmt_desktop.core.documents.inline_transfer import transfer
from nmt_desktop.core.documents.number_words import number_words
from nmt_desktop.core.documents.placeholders import (Protected, dnt_spans, number_spans, protect, restore,
                                                     small_number_spans)

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation, Unit
    from nmt_desktop.core.decoding.translator import Translator


class Cancelled(Exception):
    """The user cancelled; nothing was written."""


@dataclass
class DocumentOptions:
    """glossary: terms the translation must use; dnt: the user's do-not-translate pattern; automatic_dnt:
    URLs, e-mail addresses, numbers with units and emoji kept too; keep_formatting: align runs (off: a
    block's whole translation goes to its first run, the others emptied)."""
    glossary: Glossary | None = None
    dnt: re.Pattern[str] | None = None
    automatic_dnt: bool = True
    keep_formatting: bool = True
    batch_size: int = 16
    # a translation memory's exact match of a block's text, or None (core/memory/document_matches.py): a block of
    # one look it answers is reused as it stands, not sent to the model
    reuse: Callable[[str], str | None] | None = None


@dataclass
class BlockResult:
    """One block's translation: its source and target text, its runs, and the sentences' translations
    (tokens, attention) for the preview and the trust signals."""
    source: str
    target: str
    runs: TranslatedBlock
    sentences: list["Translation"] = field(default_factory=list)


@dataclass
class DocumentTranslation:
    document: Document
    blocks: list[BlockResult]
    report: ConstraintReport
    sentences: int
    cut_sentences: list[tuple[str, int]] = field(default_factory=list)  # (block's where, sentences cut) per block
    reused: list[int] = field(default_factory=list)  # blocks taken from the translation memory (DocumentOptions.reuse)

    def cut_line(self) -> str:
        """"3 sentences were longer than the model takes and were translated in pieces: paragraph 12, …"
        ("" when none was)."""
        total = sum(n for _where, n in self.cut_sentences)
        if not total:
            return ""
        wheres = [where for where, _n in self.cut_sentences]
        shown = ", ".join(wheres[:10]) + (f" and {len(wheres) - 10} more" if len(wheres) > 10 else "")
        verb = "sentences were" if total > 1 else "sentence was"
        return f"{total} {verb} longer than the model takes and translated in pieces: {shown}"


@dataclass
class _Prepared:
    """A block ready for the model: its protected text, which run each of its characters came from, its
    sentences (units) with where they start, their constraints, and the placeholder names of verbatim runs."""
    protected: Protected
    owners: list[int]
    units: list["Unit"]
    starts: list[int]
    constraints: list[list[Constraint]]
    verbatim_names: dict[str, int]
    lead: str
    trail: str
    cut: int = 0  # sentences longer than the model takes, translated in pieces


def _styled(block: Block) -> bool:
    """Whether the block's runs with text look different, so that its translation needs cutting."""
    looks = {(run.style, run.verbatim) for run in block.runs if run.text.strip()}
    return len(looks) > 1


def target_language(translator: "Translator") -> str:
    """The translation's language code ("de", "fra"; "" unknown): a multilingual model's chosen >>code<<, else
    the model's own target language."""
    config = getattr(translator, "config", None)
    language = getattr(translator, "target_language", None) or getattr(config, "tgt_lang", "") or ""
    return language.strip("<>")


def _prepare(translator: "Translator", block: Block, options: DocumentOptions) -> _Prepared | None:
    text = block.text
    language = target_language(translator)
    if block.verbatim or not text.strip():
        return None
    stripped = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    owners_all, spans, position, verbatim_runs = [], [], 0, {}
    for r, run in enumerate(block.runs):
        owners_all += [r] * len(run.text)
        if run.verbatim and run.text.strip():
            inner = run.text.strip()
            start = position + run.text.index(inner) - len(lead)
            spans.append((start, start + len(inner)))
            verbatim_runs[start] = r
        position += len(run.text)
    owners = owners_all[len(lead): len(lead) + len(stripped)]
    free = [(s, e) for s, e in dnt_spans(stripped, options.dnt, options.automatic_dnt)
            if all(e <= a or s >= b for a, b in spans)]
    protected = protect(stripped, sorted(spans + free))
    new_owners, last = [], 0
    for placeholder, (s, e) in zip(protected.placeholders, sorted(spans + free)):
        new_owners += owners[last:s] + [owners[s]] * len(placeholder.name)
        last = e
    new_owners += owners[last:]
    verbatim_names = {p.name: verbatim_runs[s] for p, (s, _e) in zip(protected.placeholders, sorted(spans + free))
                      if s in verbatim_runs}
    units, cut = _units(translator, protected.text)
    starts, cursor = [], 0
    for unit in units:
        found = protected.text.find(unit.text, cursor)
        starts.append(max(found, cursor) if found >= 0 else cursor)
        cursor = starts[-1] + len(unit.text)
    constraints = []
    terms = options.glossary.terms if options.glossary else []
    for unit, start in zip(units, starts):
        found = [Constraint(m.start, m.end, m.term) for m in find_terms(unit.text, terms)]
        for p in protected.placeholders:
            if start <= p.start < start + len(unit.text):
                found.append(Constraint(p.start - start, p.end - start, Term(p.name, p.name), kept=True))
        if options.automatic_dnt:
            names = [(p.start - start, p.end - start) for p in protected.placeholders]
            for s, e in number_spans(unit.text, names):
                found.append(Constraint(s, e, Term(unit.text[s:e], unit.text[s:e]), kept=True))
            for s, e in small_number_spans(unit.text, names):  # kept where the language's words can be checked
                if (words := number_words(int(unit.text[s:e]), language)) is not None:
                    found.append(Constraint(s, e, Term(unit.text[s:e], unit.text[s:e]), kept=True, words=words))
        constraints.append(sorted(found, key=lambda c: c.start))
    return _Prepared(protected, new_owners, units, starts, constraints, verbatim_names, lead, trail, cut)


def _units(translator: "Translator", text: str) -> tuple[list["Unit"], int]:
    """The block's units by the one policy, a sentence too long for the model cut into pieces that fit
    (`sentence_pieces`), and how many sentences were cut."""
    from nmt_desktop.core.decoding.document import line_sentences, sentence_pieces
    from nmt_desktop.core.decoding.results import Unit

    limit, units, cut = translator.config.max_positions, [], 0
    for sentence in line_sentences(text):
        pieces = sentence_pieces(sentence, translator.source_ids, limit)
        cut += len(pieces) > 1
        units += [Unit(0, piece, ids, translator.source_pieces(ids)) for piece, ids in pieces]
    return units, cut


def translate_document(translator: "Translator", document: Document, cfg: DecodeConfig | None = None,
                       options: DocumentOptions | None = None, progress: Callable[[int, int], None] | None = None,
                       cancelled: Callable[[], bool] | None = None) -> DocumentTranslation:
    """Every block of the document translated (see the module docstring). progress(done, total) counts
    sentences; Cancelled when `cancelled()` turns true (between batches)."""
    cfg, options = cfg or DecodeConfig(), options or DocumentOptions()
    reused = _reused(document.blocks, options)
    prepared = [None if b in reused else _prepare(translator, block, options) for b, block in enumerate(document.blocks)]
    units = [u for p in prepared if p for u in p.units]
    constraints = [c for p in prepared if p for c in p.constraints]
    report, done = ConstraintReport(), [0]

    def on_done(_index: int, _translation: "Translation") -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], len(units))

    if progress is not None:
        progress(0, len(units))
    translations = translate_constrained(translator, units, constraints, cfg, options.batch_size, report,
                                         on_done, cancelled)
    if cancelled is not None and cancelled():
        raise Cancelled()
    results = _assembled(translator, document.blocks, prepared, translations, options, reused)
    if hasattr(document, "target_language"):  # OOXML adapters mark translated runs with it (w:lang, a:rPr lang)
        document.target_language = target_language(translator) or None
    if hasattr(document, "block_trust"):  # bilingual files write each segment's trust estimate (core/bilingual/)
        document.block_trust = [_trust(translator, result.sentences) for result in results]
    cut = [(block.where, prep.cut) for block, prep in zip(document.blocks, prepared) if prep and prep.cut]
    return DocumentTranslation(document, results, report, len(units), cut, sorted(reused))


@dataclass
class PreparedBlocks:
    """Blocks made ready for the model as translate_document makes them: their sentences (`units`, block after
    block) and each sentence's constraints (placeholders, numbers to keep, glossary terms). The server's
    continuous batching decodes the units in its running search and then calls `finish_blocks`
    (server/continuous_decoding.py), so that a line with a number needs no decode of its own."""

    blocks: list[Block]
    prepared: list[_Prepared | None]  # None: nothing to translate (verbatim or blank)

    @property
    def units(self) -> list["Unit"]:
        return [u for p in self.prepared if p for u in p.units]

    @property
    def constraints(self) -> list[list[Constraint]]:
        return [c for p in self.prepared if p for c in p.constraints]


def prepare_blocks(translator: "Translator", blocks: Sequence[Block], options: DocumentOptions) -> PreparedBlocks:
    """`blocks` made ready for the model (options.reuse is not consulted)."""
    return PreparedBlocks(list(blocks), [_prepare(translator, block, options) for block in blocks])


def finish_blocks(translator: "Translator", work: PreparedBlocks, translations: Sequence["Translation"],
                  cfg: DecodeConfig, options: DocumentOptions) -> list[BlockResult]:
    """Each block's result from its sentences' unforced translations (greedy or beam as `cfg`, in `work.units`'
    order), as translate_document makes it: constraints used or placed (constraints.repair_all, the repairs run
    together), placeholders restored, formatting moved by alignment."""
    final, constraints = list(translations), work.constraints
    needy = [u for u, found in enumerate(constraints) if found]
    if needy:
        units = work.units
        repaired = repair_all(translator, [units[u] for u in needy], [final[u] for u in needy],
                              [constraints[u] for u in needy], cfg, options.batch_size)
        for u, translation in zip(needy, repaired):
            final[u] = translation
    return _assembled(translator, work.blocks, work.prepared, final, options, {})


def _assembled(translator: "Translator", blocks: Sequence[Block], prepared: Sequence[_Prepared | None],
               translations: Sequence["Translation | None"], options: DocumentOptions,
               reused: dict[int, str]) -> list[BlockResult]:
    """Each block's result from its sentences' final translations (all blocks' in one list, in order)."""
    results, cursor = [], 0
    for b, (block, prep) in enumerate(zip(blocks, prepared)):
        if b in reused:
            results.append(_memory_block(translator, block, reused[b], options))
            continue
        if prep is None:
            results.append(BlockResult(block.text, block.text, untranslated(block)))
            continue
        sentences = translations[cursor: cursor + len(prep.units)]
        cursor += len(prep.units)
        results.append(_block_result(translator, block, prep, sentences, options))  # type: ignore[arg-type]
    return results


def _reused(blocks: Sequence[Block], options: DocumentOptions) -> dict[int, str]:
    """The blocks the memory answers (options.reuse, on their plain text) -> their targets."""
    if options.reuse is None:
        return {}
    found = {}
    for b, block in enumerate(blocks):
        if not block.verbatim and block.text.strip():
            target = options.reuse(block.text.strip())
            if target is not None:
                found[b] = target
    return found


def _memory_block(translator: "Translator", block: Block, target: str, options: DocumentOptions) -> BlockResult:
    """A block the memory answered: the memory's target as it stands; a block whose runs look different (a
    bold word, a link) has them put on the target's words by the model's alignment of the two
    (given_translation.py), as its own translation would."""
    if not options.keep_formatting or not _styled(block):
        return _whole_block(block, target)
    runs = given_block(translator, block, target)
    return BlockResult(block.text, "".join(run.text for run in runs), runs)


def _whole_block(block: Block, target: str) -> BlockResult:
    """A block whose whole translation is given: into its first run with text, the source's outer spaces kept."""
    text = block.text
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    first = next((r for r, run in enumerate(block.runs) if run.text.strip()), 0)
    runs = [TranslatedRun(r, lead + target + trail if r == first else "") for r in range(len(block.runs))]
    return BlockResult(text, lead + target + trail, runs)


def _trust(translator: "Translator", sentences: Sequence["Translation"]) -> list:
    """The trust signals (analysis/quality.py QualityEstimate) of a block's sentences, a sentence translated
    in pieces estimated piece by piece."""
    from nmt_desktop.core.analysis.quality import estimate_translation

    return [estimate_translation(translator, part) for sentence in sentences for part in (sentence.segments or [sentence])]


def _block_result(translator: "Translator", block: Block, prep: _Prepared, sentences: Sequence["Translation"],
                  options: DocumentOptions) -> BlockResult:
    words = [[_restored(w, prep) for w in s.text.split()] for s in sentences]
    target = " ".join(w for sentence in words for w in sentence)
    if not options.keep_formatting or not _styled(block):
        whole = _whole_block(block, target)
        return BlockResult(block.text, whole.target, whole.runs, list(sentences))
    evidence_parts, links, source_runs, fixed, offset_s, offset_t = [], [], [], {}, 0, 0
    for unit, start, sentence in zip(prep.units, prep.starts, sentences):
        src_words, src_runs = source_words(unit.text, start, prep.owners)
        tgt_words = sentence.text.split()
        if len(set(src_runs)) == 1:  # a sentence inside one run: all of it goes there, no alignment needed
            matrix, sentence_links = np.zeros((len(tgt_words), len(src_words))), []
            fixed.update({j + offset_t: src_runs[0] for j in range(len(tgt_words))})
        else:
            matrix, sentence_links = _alignment(translator, sentence, src_words, tgt_words)
        evidence_parts.append((matrix, offset_t, offset_s))
        links += [(i + offset_s, j + offset_t) for i, j in sentence_links]
        for j, word in enumerate(tgt_words):
            for name, run in prep.verbatim_names.items():
                if re.search(rf"(?<!\w){re.escape(name)}", word):
                    fixed[j + offset_t] = run
        source_runs += src_runs
        offset_s, offset_t = offset_s + len(src_words), offset_t + len(tgt_words)
    evidence = np.zeros((offset_t, offset_s))  # (target words, source words): block-diagonal by sentence
    for matrix, t0, s0 in evidence_parts:
        evidence[t0: t0 + matrix.shape[0], s0: s0 + matrix.shape[1]] = matrix
    flat = [w for sentence in words for w in sentence]
    runs = transfer(run_infos(block.runs), source_runs, flat, evidence, links, fixed, prep.lead, prep.trail)
    return BlockResult(block.text, prep.lead + target + prep.trail, runs, list(sentences))


def _restored(word: str, prep: _Prepared) -> str:
    return restore(word, [p for p in prep.protected.placeholders
                          if re.search(rf"(?<!\w){re.escape(p.name)}", word)])


def _alignment(translator: "Translator", sentence: "Translation", src_words: list[str],
               tgt_words: list[str]) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Word evidence (target, source) and links of one sentence by the model's default reading; by
    position when the pieces cannot be matched to the words."""
    from nmt_desktop.core.analysis.alignment import BEST_METHOD, decide, word_evidence

    try:
        matrix = word_evidence(sentence, BEST_METHOD, src_words, tgt_words, translator=translator)
        return matrix, list(decide(matrix, BEST_METHOD))
    except ValueError:
        return position_alignment(len(src_words), len(tgt_words))


# --- files -----------------------------------------------------------------------------------------


def output_path(path: str | Path, language: str | None = None) -> Path:
    """Where a translation is written by default: report.docx -> report.de.docx (report.translated.docx
    without a language), beside the source, never the source itself. A gettext template filled in a language
    is that language's PO file: messages.pot -> messages.de.po."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{language or 'translated'}{_saved_suffix(path)}")


def _saved_suffix(source: Path) -> str:
    """The suffix a translation of `source` has: its own, but .po for a .pot template."""
    return ".po" if source.suffix.lower() == ".pot" else source.suffix


def _new_file_mode(source: Path) -> int:
    """The source's permissions, else what the umask gives a new file."""
    try:
        return stat.S_IMODE(source.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def save_translation(result: DocumentTranslation, out: str | Path) -> Path:
    """Write the translated document to `out` through a temporary file renamed into place: a failure
    leaves no half-written file, and the input is never written over."""
    out, source = Path(out), Path(result.document.path)
    if out.exists() and source.exists() and os.path.samefile(out, source):
        raise DocumentError(f"{out.name} is the file being translated: choose another name for the translation")
    if out.suffix.lower() not in {source.suffix.lower(), _saved_suffix(source)}:
        raise DocumentError(f"{out.name}: a translation of {source.name} is saved as {_saved_suffix(source)}")
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial" + out.suffix, dir=out.parent or ".")
    os.close(fd)
    try:
        result.document.save(Path(temporary), [b.runs for b in result.blocks])
        os.chmod(temporary, _new_file_mode(source))  # mkstemp makes 0600: the translation is as readable as a new file
        os.replace(temporary, out)
    except DocumentError:
        raise
    except Exception as exc:
        raise DocumentError(f"cannot write {out.name}: {exc}") from exc
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return out


@dataclass
class _Lines:
    """Lines of plain text as a document of one-run blocks (`translate --glossary/--dnt`); never saved."""
    blocks: list[Block]
    path: Path = Path("<lines>")

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        raise DocumentError("lines of text are printed, not saved")


def translate_lines(translator: "Translator", lines: Sequence[str], cfg: DecodeConfig | None = None,
                    options: DocumentOptions | None = None) -> DocumentTranslation:
    """Each line translated with the glossary and do-not-translate spans of `options` (a block each)."""
    from nmt_desktop.core.documents.blocks import Run

    return translate_document(translator, _Lines([Block([Run(line)], f"line {n}") for n, line in enumerate(lines, 1)]),
                              cfg, options)
