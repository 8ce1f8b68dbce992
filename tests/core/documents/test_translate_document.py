"""A document's blocks translated: formatting inside a sentence lands on the aligned words, kept spans come
back unchanged, glossary terms are used, progress is reported, Cancel writes nothing, and a save never
replaces the input or leaves half a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from nmt_desktop.core.documents.blocks import Block, DocumentError, Run, check_translated
from nmt_desktop.core.documents.glossary import Glossary, Term
from nmt_desktop.core.documents.inline_transfer import RunInfo, transfer
from nmt_desktop.core.documents.translate_document import (Cancelled, DocumentOptions, output_path, save_translation,
                                                           translate_document, translate_lines)

import numpy as np


@dataclass
class MemoryDocument:
    blocks: list[Block]
    path: Path = Path("memory.txt")
    saved: list = field(default_factory=list)
    fail: bool = False

    def save(self, path: Path, translated) -> None:
        path.write_text("partial")
        if self.fail:
            raise OSError("disk full")
        self.saved.append(translated)


def _texts(result, b):
    return {t.index: t.text for t in result.blocks[b].runs}


def test_a_bold_word_lands_on_its_aligned_translation(en_de):
    document = MemoryDocument([
        Block([Run("I saw the "), Run("black dog", "bold"), Run(" in the garden.")]),
        Block([Run("The "), Run("cat", "italic"), Run(" sleeps on the "), Run("chair", "bold"), Run(".")]),
    ])
    result = translate_document(en_de, document)
    for block, translated in zip(document.blocks, result.blocks):
        check_translated(block, translated.runs)
        assert "".join(t.text for t in translated.runs) == translated.target  # no text lost or added
    first = _texts(result, 0)
    assert first[1] == "schwarzen Hund", result.blocks[0].runs
    second = _texts(result, 1)
    assert second[1] == "Katze" and second[3] == "Stuhl", result.blocks[1].runs


def test_inline_code_urls_and_numbers_come_back_unchanged(en_de):
    document = MemoryDocument([Block([Run("Run "), Run("ls -la", "code", verbatim=True), Run(" in the terminal.")]),
                               Block([Run("Visit https://example.com/x?a=1 and bring 5 kg of apples.")])])
    result = translate_document(en_de, document)
    assert _texts(result, 0)[1] == "ls -la"
    assert "https://example.com/x?a=1" in result.blocks[1].target and "5 kg" in result.blocks[1].target
    assert "Tom" not in result.blocks[1].target and "Ken" not in result.blocks[1].target


def test_glossary_terms_and_progress(en_de):
    seen = []
    options = DocumentOptions(glossary=Glossary([Term("house", "Gebäude")]))
    document = MemoryDocument([Block([Run("My house is big. The house is old.")]), Block([Run("")]),
                               Block([Run("print(x)")], verbatim=True)])
    result = translate_document(en_de, document, options=options, progress=lambda d, n: seen.append((d, n)))
    assert result.blocks[0].target.count("Gebäude") == 2 and len(result.blocks[0].sentences) == 2
    assert result.blocks[1].target == "" and result.blocks[2].target == "print(x)"
    assert seen[0] == (0, 2) and seen[-1] == (2, 2)
    assert result.report.asked == 2 and result.report.missing == 0


def test_cancel_raises_before_anything_is_returned(en_de):
    calls = []

    def cancelled():
        calls.append(1)
        return len(calls) > 1

    document = MemoryDocument([Block([Run(f"Sentence number {n} is here.")]) for n in range(40)])
    with pytest.raises(Cancelled):
        translate_document(en_de, document, options=DocumentOptions(batch_size=4), cancelled=cancelled)


def test_save_never_replaces_the_input_nor_leaves_half_a_file(en_de, tmp_path):
    source = tmp_path / "a.txt"
    source.write_text("Hello.\n")
    document = MemoryDocument([Block([Run("Hello.")])], path=source)
    result = translate_document(en_de, document)
    with pytest.raises(DocumentError, match="is the file being translated"):
        save_translation(result, source)
    assert source.read_text() == "Hello.\n"
    document.fail = True
    with pytest.raises(DocumentError, match="cannot write b.txt"):
        save_translation(result, tmp_path / "b.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert output_path(tmp_path / "report.docx", "de").name == "report.de.docx"
    assert output_path(tmp_path / "messages.pot", "de").name == "messages.de.po"  # a filled template is a PO file
    source.chmod(0o644)
    document.fail = False
    saved = save_translation(result, tmp_path / "c.txt")
    assert saved.stat().st_mode & 0o777 == 0o644  # as readable as the source, not mkstemp's 0600


def test_translate_lines_keeps_line_count(en_de):
    result = translate_lines(en_de, ["I love you 😀.", "", "Thank you."])
    assert [b.target for b in result.blocks][1] == "" and "😀" in result.blocks[0].target


def test_transfer_keeps_every_run_and_word_when_nothing_aligns():
    runs = [RunInfo(False, True), RunInfo(True, True), RunInfo(False, True)]
    words = ["eins", "zwei", "drei", "vier"]
    out = transfer(runs, [0, 1, 2], words, np.zeros((4, 3)), [], {})
    assert sorted(t.index for t in out) == [0, 1, 2]
    assert " ".join("".join(t.text for t in out).split()) == "eins zwei drei vier"
    assert any(t.index == 1 and t.text.strip() for t in out)  # the formatted run is never emptied


def test_transfer_puts_plain_text_on_both_sides_of_a_bold_word_whichever_plain_runs_those_are():
    # "The Commission must **present** a new proposal before the end of the year ." -> German puts the verb
    # last and the words of the last plain run before it: the bold run still gets its own word
    runs = [RunInfo(False, True), RunInfo(True, True), RunInfo(False, True)]
    source_runs = [0, 0, 0, 1, 2, 2, 2, 2, 2]
    target = "Die Kommission muss vor Ende einen Vorschlag vorlegen .".split()
    links = [(0, 0), (1, 1), (2, 2), (7, 3), (8, 4), (5, 5), (6, 6), (3, 7)]
    evidence = np.zeros((len(target), len(source_runs)))
    for i, j in links:
        evidence[j, i] = 1.0
    out = transfer(runs, source_runs, target, evidence, links, {})
    assert [t.text for t in out if t.index == 1] == ["vorlegen"]
    assert " ".join("".join(t.text for t in out).split()) == " ".join(target)


def test_numbers_stay_in_the_text_and_are_kept_whole(en_de):
    result = translate_lines(en_de, ["It costs 250 euros.", "In 2024 we sold 1,000 units; call 555-1234."])
    assert result.blocks[0].target == "Es kostet 250 Euro."  # the model saw the number: no placeholder
    second = result.blocks[1].target
    for number in ("2024", "1,000", "555-1234"):
        assert number in second.split() or f"{number}." in second.split(), second
