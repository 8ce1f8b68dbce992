"""The .xlsx adapter: a workbook using every feature, round-tripped through the fake translation."""

from __future__ import annotations

import datetime
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont

from nmt_desktop.core.documents.blocks import DocumentError, TranslatedRun, untranslated
from nmt_desktop.core.documents.formats import xlsx as xlsx_format
from tests.core.documents.fake_translation import MARK, fake_translate_all

WHEN = datetime.datetime(2026, 3, 4, 5, 6)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    workbook = openpyxl.Workbook()
    workbook.properties.title = "Budget"
    sheet = workbook.active
    sheet.title = "Data sheet"
    sheet["A1"], sheet["B1"] = "Item", "Cost"
    sheet["A2"], sheet["B2"] = "Paper", 12.5
    sheet["A3"], sheet["B3"] = "Ink", 3
    sheet["A4"], sheet["B4"] = "Total", "=SUM(B2:B3)"
    sheet["C1"] = WHEN
    sheet["A5"] = "Merged heading"
    sheet.merge_cells("A5:C5")
    sheet["A6"] = CellRichText(["Prices ", TextBlock(InlineFont(b=True), "rose"), " sharply"])
    other = workbook.create_sheet("Summary")
    other["A1"] = "Copied total"
    other["B1"] = "='Data sheet'!B4"
    other["A2"] = True
    path = tmp_path / "budget.xlsx"
    workbook.save(path)
    return path


def _cells(path: Path) -> dict[tuple[str, str], tuple[str, object]]:
    workbook = openpyxl.load_workbook(path, rich_text=True)
    return {(s.title, c.coordinate): (c.data_type, c.value) for s in workbook.worksheets
            for row in s.iter_rows() for c in row}


def test_blocks_are_the_string_cells(source: Path) -> None:
    blocks = xlsx_format.open_document(source).blocks
    assert [b.text for b in blocks] == ["Budget", "Item", "Cost", "Paper", "Ink", "Total", "Merged heading",
                                        "Prices rose sharply", "Copied total"]
    assert blocks[1].where == "Data sheet!A1"
    assert [r.style is None for r in blocks[7].runs] == [True, False, True]


def test_round_trip_translates_strings_and_keeps_the_rest(source: Path, tmp_path: Path) -> None:
    before = source.read_bytes()
    document = xlsx_format.open_document(source)
    out = tmp_path / "out.xlsx"
    document.save(out, fake_translate_all(document.blocks))
    assert source.read_bytes() == before
    old, new = _cells(source), _cells(out)
    assert old.keys() == new.keys()
    for key, (kind, value) in old.items():
        assert new[key][0] == kind, key
        if kind == "s" and str(value).strip():
            assert str(new[key][1]).startswith(MARK), key
        else:
            assert new[key][1] == value, key
    assert new[("Data sheet", "B4")][1] == "=SUM(B2:B3)"
    assert new[("Summary", "B1")][1] == "='Data sheet'!B4"
    assert new[("Data sheet", "C1")][1] == WHEN
    reopened = openpyxl.load_workbook(out, rich_text=True)
    assert reopened.sheetnames == ["Data sheet", "Summary"]
    assert reopened.properties.title == MARK + "BUDGET"
    assert [str(r) for r in reopened["Data sheet"].merged_cells.ranges] == ["A5:C5"]
    rich = reopened["Data sheet"]["A6"].value
    assert [getattr(item, "text", item) for item in rich] == [MARK + " SHARPLY", MARK + "ROSE", MARK + "PRICES "]
    assert rich[1].font.b is True


def test_untranslated_save_gives_the_source_texts(source: Path, tmp_path: Path) -> None:
    document = xlsx_format.open_document(source)
    out = tmp_path / "same.xlsx"
    document.save(out, [untranslated(block) for block in document.blocks])
    assert {k: str(v) for k, v in _cells(source).items()} == {k: str(v) for k, v in _cells(out).items()}


def test_a_translation_starting_with_equals_stays_text(source: Path, tmp_path: Path) -> None:
    document = xlsx_format.open_document(source)
    translated = [untranslated(block) for block in document.blocks]
    translated[1] = [TranslatedRun(0, "=1+1")]
    out = tmp_path / "equals.xlsx"
    document.save(out, translated)
    assert _cells(out)[("Data sheet", "A1")] == ("s", "=1+1")


def test_a_zip_that_is_not_a_workbook_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a workbook")
    with pytest.raises(DocumentError, match="broken.xlsx cannot be read as an Excel workbook"):
        xlsx_format.open_document(path)
