"""The .xlsx adapter: a workbook using every feature (shared and inline strings, rich text, formulas, a
merged range, an image and a chart), round-tripped through the fake translation."""

from __future__ import annotations

import datetime
import zipfile
from pathlib import Path

import openpyxl
import pytest
from lxml import etree
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.chart import BarChart, Reference
from openpyxl.drawing.image import Image as SheetImage
from PIL import Image

from nmt_desktop.core.documents.blocks import DocumentError, TranslatedRun, untranslated
from nmt_desktop.core.documents.formats import sheet_header
from nmt_desktop.core.documents.formats import xlsx as xlsx_format
from tests.core.documents.fake_translation import MARK, fake_translate_all

WHEN = datetime.datetime(2026, 3, 4, 5, 6)
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SHARED = "xl/sharedStrings.xml"
# The parts a translation may re-serialise: the shared strings, the sheet with inline strings, the title.
EDITED = {SHARED, "xl/worksheets/sheet2.xml", "docProps/core.xml"}


def _share_strings(path: Path) -> None:
    """openpyxl writes every string inline; Excel keeps them in xl/sharedStrings.xml. Move the first sheet's
    strings there (one <si> per distinct string), so the workbook has both kinds."""
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        data = {info.filename: archive.read(info) for info in infos}
    sheet = etree.fromstring(data["xl/worksheets/sheet1.xml"])
    table = etree.Element(f"{{{MAIN}}}sst", nsmap={None: MAIN})
    index: dict[bytes, int] = {}
    for cell in sheet.iter(f"{{{MAIN}}}c"):
        string = cell.find(f"{{{MAIN}}}is")
        if cell.get("t") != "inlineStr" or string is None:
            continue
        key = etree.tostring(string)
        if key not in index:
            index[key] = len(index)
            etree.SubElement(table, f"{{{MAIN}}}si").extend(list(string))
        cell.remove(string)
        cell.set("t", "s")
        etree.SubElement(cell, f"{{{MAIN}}}v").text = str(index[key])
    table.set("count", str(len(index)))
    table.set("uniqueCount", str(len(index)))
    data["xl/worksheets/sheet1.xml"] = etree.tostring(sheet, xml_declaration=True, encoding="UTF-8")
    data[SHARED] = etree.tostring(table, xml_declaration=True, encoding="UTF-8", standalone=True)
    data["[Content_Types].xml"] = data["[Content_Types].xml"].replace(
        b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
                     b'officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
    data["xl/_rels/workbook.xml.rels"] = data["xl/_rels/workbook.xml.rels"].replace(
        b"</Relationships>", b'<Relationship Id="rIdStrings" Type="http://schemas.openxmlformats.org/'
                             b'officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
                             b"</Relationships>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in [info.filename for info in infos] + [SHARED]:
            archive.writestr(name, data[name])


@pytest.fixture
def source(tmp_path: Path) -> Path:
    workbook = openpyxl.Workbook()
    workbook.properties.title = "Budget"
    workbook.properties.subject = "Costs"
    sheet = workbook.active
    sheet.title = "Data sheet"
    sheet["A1"], sheet["B1"] = "Item", "Cost"
    sheet["A2"], sheet["B2"] = "Paper", 12.5
    sheet["A3"], sheet["B3"] = "Ink", 3
    sheet["A4"], sheet["B4"] = "Total", "=SUM(B2:B3)"
    sheet["C1"] = WHEN
    sheet["D2"] = "Paper"  # the same shared string as A2
    sheet["A5"] = "Merged heading"
    sheet.merge_cells("A5:C5")
    sheet["A6"] = CellRichText(["Prices ", TextBlock(InlineFont(b=True), "rose"), " sharply"])
    png = tmp_path / "dot.png"
    Image.new("RGB", (4, 4), (200, 30, 30)).save(png)
    sheet.add_image(SheetImage(str(png)), "F1")
    chart = BarChart()
    chart.add_data(Reference(sheet, min_col=2, min_row=2, max_row=3))
    sheet.add_chart(chart, "F8")
    other = workbook.create_sheet("Summary")
    other["A1"] = "Copied total"
    other["B1"] = "='Data sheet'!B4"
    other["A2"] = True
    other["A3"] = CellRichText([TextBlock(InlineFont(i=True), "Checked"), " by audit"])
    path = tmp_path / "budget.xlsx"
    workbook.save(path)
    _share_strings(path)
    return path


def _cells(path: Path) -> dict[tuple[str, str], tuple[str, object]]:
    workbook = openpyxl.load_workbook(path, rich_text=True)
    return {(s.title, c.coordinate): (c.data_type, c.value) for s in workbook.worksheets
            for row in s.iter_rows() for c in row}


def _members(path: Path) -> list[tuple[str, int, bytes]]:
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, info.compress_type, archive.read(info)) for info in archive.infolist()]


def test_the_source_has_shared_and_inline_strings_an_image_and_a_chart(source: Path) -> None:
    names = [name for name, _, _ in _members(source)]
    for name in (SHARED, "xl/media/image1.png", "xl/drawings/drawing1.xml", "xl/charts/chart1.xml"):
        assert name in names
    with zipfile.ZipFile(source) as archive:
        assert b't="s"' in archive.read("xl/worksheets/sheet1.xml")
        assert b'inlineStr' not in archive.read("xl/worksheets/sheet1.xml")
        assert b'inlineStr' in archive.read("xl/worksheets/sheet2.xml")


def test_blocks_are_the_string_cells(source: Path) -> None:
    blocks = xlsx_format.open_document(source).blocks
    assert [b.text for b in blocks] == ["Budget", "Costs", "Item", "Cost", "Paper", "Ink", "Total",
                                        "Merged heading", "Prices rose sharply", "Copied total",
                                        "Checked by audit"]
    assert [b.where for b in blocks[:5]] == ["workbook title", "workbook subject", "Data sheet!A1",
                                             "Data sheet!B1", "Data sheet!A2"]
    assert blocks[9].where == "Summary!A1"
    assert [r.style is None for r in blocks[8].runs] == [True, False, True]
    assert [r.style is None for r in blocks[10].runs] == [False, True]


def test_round_trip_translates_strings_and_keeps_the_rest(source: Path, tmp_path: Path) -> None:
    before = source.read_bytes()
    document = xlsx_format.open_document(source)
    out = tmp_path / "out.xlsx"
    document.save(out, fake_translate_all(document.blocks))
    assert source.read_bytes() == before
    old_members, new_members = _members(source), _members(out)
    assert [(n, c) for n, c, _ in new_members] == [(n, c) for n, c, _ in old_members]  # order, compression
    changed = {n for (n, _, a), (_, _, b) in zip(old_members, new_members) if a != b}
    assert changed == EDITED
    unchanged = {n for n, _, _ in old_members} - EDITED
    assert {"xl/media/image1.png", "xl/drawings/drawing1.xml", "xl/charts/chart1.xml",
            "xl/worksheets/sheet1.xml", "xl/worksheets/_rels/sheet1.xml.rels"} <= unchanged
    old, new = _cells(source), _cells(out)
    assert old.keys() == new.keys()
    for key, (kind, value) in old.items():
        assert new[key][0] == kind, key
        if kind == "s" and str(value).strip():
            assert str(new[key][1]).startswith(MARK), key
        else:
            assert new[key][1] == value, key
    assert new[("Data sheet", "D2")] == new[("Data sheet", "A2")] == ("s", MARK + "PAPER")
    assert new[("Data sheet", "B4")][1] == "=SUM(B2:B3)"
    assert new[("Summary", "B1")][1] == "='Data sheet'!B4"
    assert new[("Data sheet", "C1")][1] == WHEN
    assert new[("Data sheet", "B2")][1] == 12.5
    reopened = openpyxl.load_workbook(out, rich_text=True)
    assert reopened.sheetnames == ["Data sheet", "Summary"]
    assert reopened.properties.title == MARK + "BUDGET"
    assert reopened.properties.subject == MARK + "COSTS"
    assert [str(r) for r in reopened["Data sheet"].merged_cells.ranges] == ["A5:C5"]
    assert len(reopened["Data sheet"]._images) == 1 and len(reopened["Data sheet"]._charts) == 1
    rich = reopened["Data sheet"]["A6"].value
    assert [getattr(item, "text", item) for item in rich] == [MARK + " SHARPLY", MARK + "ROSE", MARK + "PRICES "]
    assert rich[1].font.b is True
    inline = reopened["Summary"]["A3"].value
    assert [getattr(item, "text", item) for item in inline] == [MARK + " BY AUDIT", MARK + "CHECKED"]
    assert inline[1].font.i is True and isinstance(inline[0], str)


def test_untranslated_save_gives_the_source_texts(source: Path, tmp_path: Path) -> None:
    document = xlsx_format.open_document(source)
    out = tmp_path / "same.xlsx"
    document.save(out, [untranslated(block) for block in document.blocks])
    assert {k: str(v) for k, v in _cells(source).items()} == {k: str(v) for k, v in _cells(out).items()}
    assert xlsx_format.open_document(out).blocks == document.blocks


def test_a_translation_starting_with_equals_stays_text(source: Path, tmp_path: Path) -> None:
    document = xlsx_format.open_document(source)
    translated = [untranslated(block) for block in document.blocks]
    translated[2] = [TranslatedRun(0, "=1+1")]
    out = tmp_path / "equals.xlsx"
    document.save(out, translated)
    assert _cells(out)[("Data sheet", "A1")] == ("s", "=1+1")


def test_spaces_and_characters_xml_cannot_hold_survive(source: Path, tmp_path: Path) -> None:
    document = xlsx_format.open_document(source)
    translated = [untranslated(block) for block in document.blocks]
    texts = {2: " lead\x01 _x0041_ ", 9: "tab\there "}
    for index, text in texts.items():
        translated[index] = [TranslatedRun(0, text)]
    out = tmp_path / "escaped.xlsx"
    document.save(out, translated)
    blocks = xlsx_format.open_document(out).blocks
    assert [blocks[i].text for i in texts] == list(texts.values())
    with zipfile.ZipFile(out) as archive:
        strings = archive.read(SHARED).decode()
    assert '<t xml:space="preserve"> lead_x0001_ _x005F_x0041_ </t>' in strings


def test_a_zip_that_is_not_a_workbook_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a workbook")
    with pytest.raises(DocumentError, match=r"^broken.xlsx cannot be read as an Excel workbook: it has no "
                                            r"xl/workbook.xml$"):
        xlsx_format.open_document(path)


CORPUS = Path(__file__).parents[2] / "real_documents" / "files"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def _text_of(path: Path, name: str) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return archive.read(name)


@pytest.fixture
def broken_lines(tmp_path: Path) -> Path:
    """Cells with line breaks typed with Alt+Enter, and a superscript footnote marker in rich text."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["A1"] = "First line\nSecond line"
    sheet["A2"] = CellRichText(["Sales grew", TextBlock(InlineFont(vertAlign="superscript"), "1")])
    sheet.oddHeader.center.text = "Quarterly report"
    sheet.oddFooter.left.text = "Confidential"
    sheet.oddFooter.right.text = "Page &P of &N"
    path = tmp_path / "lines.xlsx"
    workbook.save(path)
    _share_strings(path)
    return path


def test_a_line_break_in_a_cell_is_never_handed_to_the_translator(broken_lines: Path, tmp_path: Path) -> None:
    """The real model lost 7 of 7 in-cell line breaks (given as text or as a verbatim run): each line of a
    cell is a block of its own, and the break is put back between the translated lines."""
    document = xlsx_format.open_document(broken_lines)
    lines = [b for b in document.blocks if b.where.startswith("Sheet!A1")]
    assert [(b.where, b.text) for b in lines] == [("Sheet!A1, line 1", "First line"),
                                                  ("Sheet!A1, line 2", "Second line")]
    assert all("\n" not in b.text for b in document.blocks)
    out = tmp_path / "out.xlsx"
    document.save(out, fake_translate_all(document.blocks))
    assert _cells(out)[("Sheet", "A1")] == ("s", f"{MARK}FIRST LINE\n{MARK}SECOND LINE")
    table = etree.fromstring(_text_of(out, SHARED))
    cell = next(t for t in table.iter(f"{{{MAIN}}}t") if "\n" in (t.text or ""))
    assert cell.get("{http://www.w3.org/XML/1998/namespace}space") == "preserve"


def test_lines_of_rich_text_keep_their_runs(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = CellRichText(["Total ", TextBlock(InlineFont(b=True), "costs\nwithout"), " tax"])
    path = tmp_path / "rich.xlsx"
    workbook.save(path)
    document = xlsx_format.open_document(path)
    assert [[r.text for r in b.runs] for b in document.blocks] == [["Total ", "costs"], ["without", " tax"]]
    out = tmp_path / "out.xlsx"
    document.save(out, fake_translate_all(document.blocks))
    value = _cells(out)[("Sheet", "A1")][1]
    # the bold run's words are apart in the translation (one in each line): every run keeps its place
    assert [(str(part), bool(getattr(part, "font", None) and part.font.b)) for part in value] == \
           [(f"{MARK}TOTAL ", False), (f"{MARK}COSTS\n{MARK}WITHOUT", True), (f"{MARK} TAX", False)]


def test_a_superscript_the_alignment_left_empty_keeps_its_text(broken_lines: Path, tmp_path: Path) -> None:
    document = xlsx_format.open_document(broken_lines)
    block = next(b for b in document.blocks if b.text.startswith("Sales"))
    translated = [[TranslatedRun(0, "Der Umsatz wuchs"), TranslatedRun(1, "")] if b is block else untranslated(b)
                  for b in document.blocks]
    out = tmp_path / "out.xlsx"
    document.save(out, translated)
    value = _cells(out)[("Sheet", "A2")][1]
    assert [(str(part), getattr(part, "font", None) and part.font.vertAlign) for part in value] == \
           [("Der Umsatz wuchs", None), ("1", "superscript")]


def test_headers_and_footers_are_translated_with_their_codes_kept(broken_lines: Path, tmp_path: Path) -> None:
    document = xlsx_format.open_document(broken_lines)
    footer = next(b for b in document.blocks if b.text.startswith("Page"))
    assert footer.where == "Sheet oddFooter, right"
    assert [(r.text, r.verbatim) for r in footer.runs] == [("Page ", False), ("&P", True), (" of ", False),
                                                           ("&N", True)]
    out = tmp_path / "out.xlsx"
    document.save(out, fake_translate_all(document.blocks, reverse=False))
    sheet = openpyxl.load_workbook(out).active
    assert sheet.oddHeader.center.text == f"{MARK}QUARTERLY REPORT"
    assert sheet.oddFooter.left.text == f"{MARK}CONFIDENTIAL"
    assert sheet.oddFooter.right.text == f"{MARK}PAGE &P{MARK} OF &N"


def test_a_text_box_of_a_real_workbook_is_translated_and_nothing_else_changes(tmp_path: Path) -> None:
    source = CORPUS / "tika-testEXCEL_textbox.xlsx"
    document = xlsx_format.open_document(source)
    box = next(b for b in document.blocks if "drawing" in b.where)
    assert box.text == "this is some autoshape text"
    out = tmp_path / "out.xlsx"
    document.save(out, fake_translate_all(document.blocks))
    drawing = etree.fromstring(_text_of(out, "xl/drawings/drawing1.xml"))
    assert [t.text for t in drawing.iter(f"{{{A}}}t")] == [f"{MARK} SOME AUTOSHAPE TEXT", f"{MARK}THIS IS"]
    old, new = _members(source), _members(out)
    assert [(n, c) for n, c, _ in old] == [(n, c) for n, c, _ in new]
    changed = {n for (n, _, data), (_, _, after) in zip(old, new) if data != after}
    assert changed <= {"xl/drawings/drawing1.xml", SHARED, "docProps/core.xml"}, changed


def test_the_target_language_is_the_workbook_language(source: Path, tmp_path: Path) -> None:
    workbook = openpyxl.load_workbook(source)
    assert workbook.properties.language is None
    document = xlsx_format.open_document(source)
    document.target_language = "de"
    out = tmp_path / "out.xlsx"
    document.save(out, fake_translate_all(document.blocks))
    assert _text_of(out, "docProps/core.xml") == _text_of(source, "docProps/core.xml").replace(
        b"Budget", MARK.encode() + b"BUDGET").replace(b"Costs", MARK.encode() + b"COSTS")  # none where none was
    languaged = tmp_path / "languaged.xlsx"
    workbook.properties.language = "en-GB"
    workbook.save(languaged)
    document = xlsx_format.open_document(languaged)
    document.target_language = "de"
    document.save(out, fake_translate_all(document.blocks))
    assert openpyxl.load_workbook(out).properties.language == "de"


def test_no_header_code_is_lost_whatever_the_translation_does_with_its_runs(tmp_path: Path) -> None:
    """Excel's own header with formatting switched mid-section (&U on and off, colours, fonts): the real
    model dropped the second &U when codes were runs of their own; now formatting codes are written
    before their words and a dropped content code (&P) is put back."""
    source = CORPUS / "poi-HeaderFooterComplexFormats.xlsx"
    document = xlsx_format.open_document(source)
    blocks = [b for b in document.blocks if "Header" in b.where or "Footer" in b.where]
    assert blocks
    translated = [[TranslatedRun(i, "" if r.verbatim else r.text.upper()) for i, r in enumerate(b.runs)][::-1]
                  for b in document.blocks]
    out = tmp_path / "out.xlsx"
    document.save(out, translated)

    def codes(path: Path) -> list[list[str]]:
        sheet = etree.fromstring(_text_of(path, "xl/worksheets/sheet1.xml"))
        return [sorted(sheet_header.CODE.findall(el.text or "")) for el in sheet.iter()
                if isinstance(el.tag, str) and etree.QName(el).localname in sheet_header.KINDS]
    assert codes(out) == codes(source) and codes(source)
