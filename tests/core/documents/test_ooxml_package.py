"""Every real .docx, .pptx and .xlsx of the corpus (tests/real_documents/) saved untranslated is the source
member for member (bytes, order, compression), and a translated save changes only the parts that hold text:
the adapters edit the parts in the package instead of re-serialising it through a library."""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

import pytest

from nmt_desktop.core.documents.blocks import untranslated
from nmt_desktop.core.documents.formats import open_document
from nmt_desktop.core.documents.formats.ooxml_package import Package
from tests.core.documents.fake_translation import fake_translate_all

CORPUS = Path(__file__).parents[2] / "real_documents"
with open(CORPUS / "SOURCES.tsv", newline="", encoding="utf-8") as _f:
    OOXML = sorted(row["file"] for row in csv.DictReader(_f, delimiter="\t")
                   if row["file"].endswith((".docx", ".pptx", ".xlsx")) and row["expect"] == "translate")
# Where text may live: the main parts and what they relate to (headers, notes, drawings, shared strings).
TEXT_PARTS = ("word/", "ppt/slides/", "ppt/notesSlides/", "xl/sharedStrings", "xl/worksheets/", "xl/drawings/",
              "docProps/core.xml")


def _members(path: Path) -> list[tuple[str, int, bytes]]:
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, info.compress_type, archive.read(info)) for info in archive.infolist()]


def test_the_corpus_has_files_of_each_kind() -> None:
    assert {name.rsplit(".", 1)[1] for name in OOXML} == {"docx", "pptx", "xlsx"}


@pytest.mark.parametrize("name", OOXML)
def test_an_untranslated_save_is_the_source_member_for_member(name: str, tmp_path: Path) -> None:
    source = CORPUS / "files" / name
    document = open_document(source)
    out = tmp_path / name
    document.save(out, [untranslated(block) for block in document.blocks])
    assert _members(out) == _members(source)


@pytest.mark.parametrize("name", OOXML)
def test_a_translated_save_changes_only_parts_that_hold_text(name: str, tmp_path: Path) -> None:
    source = CORPUS / "files" / name
    document = open_document(source)
    out = tmp_path / name
    document.save(out, fake_translate_all(document.blocks))
    old, new = _members(source), _members(out)
    assert [(n, c) for n, c, _ in old] == [(n, c) for n, c, _ in new]
    changed = [n for (n, _, data), (_, _, after) in zip(old, new) if data != after]
    assert all(n.startswith(TEXT_PARTS) and not n.endswith(".rels") for n in changed), changed


def test_a_parsed_part_that_did_not_change_is_copied_as_it_was(tmp_path: Path) -> None:
    source = CORPUS / "files" / OOXML[0]
    package = Package.open(source, "a test package")
    package.root(package.main_part("word/document.xml"))
    assert package.changed() == {}
