"""The .docx adapter: a document using every feature, round-tripped through the fake translation."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from docx.shared import Pt
from lxml import etree
from PIL import Image

from nmt_desktop.core.documents.blocks import DocumentError, TranslatedRun, untranslated
from nmt_desktop.core.documents.formats import docx as docx_format
from tests.core.documents.fake_translation import MARK, fake_translate_all

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS = (f'xmlns:w="{W}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
      'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
      'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
      'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
      'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
      'xmlns:v="urn:schemas-microsoft-com:vml"')
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
URL = "https://example.com/dog"
VERBATIM = {"print()", "1/1/2026", "7"}  # inline code, a complex field's result, a simple field's result
TEXT_BOX = f"""<w:r {NS}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>
<wp:inline><wp:extent cx="914400" cy="457200"/><wp:docPr id="50" name="Text Box 1"/><a:graphic>
<a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp>
<wps:cNvSpPr txBox="1"/><wps:spPr/><wps:txbx><w:txbxContent>
<w:p><w:r><w:t xml:space="preserve">Box text </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>inside</w:t></w:r></w:p>
</w:txbxContent></wps:txbx><wps:bodyPr/></wps:wsp></a:graphicData></a:graphic></wp:inline>
</w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent>
<w:p><w:r><w:t xml:space="preserve">Box text </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>inside</w:t></w:r></w:p>
</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"""
FOOTNOTES = f"""<w:footnotes {NS}>
<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>
<w:footnote w:id="1"><w:p><w:r><w:t xml:space="preserve">A note with </w:t></w:r><w:r><w:rPr><w:i/></w:rPr>
<w:t>emphasis</w:t></w:r></w:p></w:footnote></w:footnotes>"""


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


def _hyperlink(paragraph, text: str, url: str) -> None:
    rid = paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True)
    paragraph._p.append(parse_xml(f'<w:hyperlink {NS} r:id="{rid}"><w:r><w:rPr><w:u w:val="single"/>'
                                  f'</w:rPr><w:t>{text}</w:t></w:r></w:hyperlink>'))


def _complex_field(paragraph) -> None:
    for xml in ('<w:r {0}><w:fldChar w:fldCharType="begin"/></w:r>',
                '<w:r {0}><w:instrText xml:space="preserve"> DATE </w:instrText></w:r>',
                '<w:r {0}><w:fldChar w:fldCharType="separate"/></w:r>', '<w:r {0}><w:t>1/1/2026</w:t></w:r>',
                '<w:r {0}><w:fldChar w:fldCharType="end"/></w:r>'):
        paragraph._p.append(parse_xml(xml.format(NS)))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    document = docx.Document()
    document.core_properties.title = "Annual report"
    document.core_properties.subject = "Finance"
    p = document.add_paragraph("The ")
    p.add_run("quick").bold = True
    p.add_run(" fox ")
    p.add_run("jumps").italic = True
    p.add_run(" over ")
    _hyperlink(p, "the dog", URL)
    p.add_run(" and calls ")
    p.add_run("print()").font.name = "Consolas"
    p.add_run(".")
    p._p.append(parse_xml(f'<w:r {NS}><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                          '<w:footnoteReference w:id="1"/></w:r>'))
    document.add_paragraph("Col one\tCol two")
    lines = document.add_paragraph()
    lines.add_run("Line one").add_break()
    lines.add_run("line two")
    dated = document.add_paragraph("Today is ")
    _complex_field(dated)
    dated.add_run(" indeed.")
    box = document.add_paragraph("Before the box ")
    box._p.append(parse_xml(TEXT_BOX))
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Name"
    table.cell(0, 1).text = "Value"
    table.cell(1, 0).text = "Apples"
    inner = table.cell(1, 1).add_table(rows=1, cols=2)
    inner.cell(0, 0).text = "Nested left"
    inner.cell(0, 1).text = "Nested right"
    document.add_picture(io.BytesIO(_png()), width=Pt(20))
    doc_pr = document.inline_shapes[0]._inline.docPr
    doc_pr.set("descr", "A red square")
    doc_pr.set("title", "Logo")
    section = document.sections[0]
    section.header.paragraphs[0].text = "Header text"
    footer = section.footer.paragraphs[0]
    footer.text = "Page "
    footer._p.append(parse_xml(f'<w:fldSimple {NS} w:instr=" PAGE "><w:r><w:t>7</w:t></w:r></w:fldSimple>'))
    section.different_first_page_header_footer = True
    section.first_page_header.paragraphs[0].text = "First page header"
    notes = Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, FOOTNOTES.encode(), document.part.package)
    document.part.relate_to(notes, RT.FOOTNOTES)
    path = tmp_path / "report.docx"
    document.save(str(path))
    return path


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _xml(parts: dict[str, bytes], name: str) -> etree._Element:
    return etree.fromstring(parts[name])


def _texts(parts: dict[str, bytes]) -> dict[str, list[str]]:
    """Each part's runs' texts (tabs and breaks as in blocks), field instructions aside."""
    return {name: [docx_format.run_text(r) for r in _xml(parts, name).iter(f"{{{W}}}r")]
            for name in parts if name.startswith("word/") and name.endswith(".xml")}


def _counts(parts: dict[str, bytes]) -> dict[str, dict[str, int]]:
    tags = ("p", "r", "tbl", "tc", "hyperlink", "tab", "br", "fldChar", "instrText", "fldSimple",
            "footnoteReference", "drawing", "txbxContent", "b", "i")
    return {name: {tag: sum(1 for _ in _xml(parts, name).iter(f"{{{W}}}{tag}")) for tag in tags}
            for name in parts if name.startswith("word/") and name.endswith(".xml")}


def _translate(source: Path, out: Path, reverse: bool = True) -> None:
    document = docx_format.open_document(source)
    document.save(out, fake_translate_all(document.blocks, reverse))


def test_blocks_cover_every_piece_of_text(source: Path) -> None:
    texts = [block.text for block in docx_format.open_document(source).blocks]
    for expected in ("Annual report", "Finance", "Header text", "First page header", "A note with emphasis",
                     "Box text inside", "Before the box ", "Nested left", "Apples", "A red square", "Logo",
                     "Col one", "Col two", "Line one", "line two", "Page "):
        assert expected in texts
    assert not any("\t" in text or "\n" in text for text in texts)  # a tab or break never goes to the model
    assert texts.count("Box text inside") == 1  # the mc:Fallback copy is not a block of its own
    assert "Today is  indeed." in texts  # the field (instruction and result) is left out
    first = next(b for b in docx_format.open_document(source).blocks if b.text.startswith("The quick"))
    assert [r.text for r in first.runs if r.verbatim] == ["print()"]
    link = next(r for r in first.runs if r.text == "the dog")
    assert link.style[:2] == ("link", URL)
    assert first.runs[0].style is None and first.runs[1].style is not None


def test_round_trip_translates_every_text_and_keeps_the_rest(source: Path, tmp_path: Path) -> None:
    before = source.read_bytes()
    out = tmp_path / "out.docx"
    _translate(source, out)
    assert source.read_bytes() == before
    old, new = _parts(source), _parts(out)
    assert sorted(old) == sorted(new)
    split = {"word/document.xml": {"r": 3}}  # the runs holding a tab or a break and text: one per stretch and break
    assert _counts(new) == {name: {tag: n + split.get(name, {}).get(tag, 0) for tag, n in counts.items()}
                            for name, counts in _counts(old).items()}
    for name in old:
        if name.startswith("word/media/") or name == "word/styles.xml" or name.endswith(".rels"):
            assert old[name] == new[name], name
    for name, texts in _texts(new).items():
        for text in texts:
            assert not text.strip() or text.startswith(MARK) or text in VERBATIM, (name, text)
    reopened = docx.Document(str(out))
    assert reopened.core_properties.title == MARK + "ANNUAL REPORT"
    assert reopened.core_properties.subject == MARK + "FINANCE"
    body = _xml(new, "word/document.xml")
    first = body.find(f".//{{{W}}}p")
    texts = [t.text for t in first.iter(f"{{{W}}}t")]
    assert texts == [MARK + ".", "print()", MARK + " AND CALLS ", MARK + "THE DOG", MARK + " OVER ",
                     MARK + "JUMPS", MARK + " FOX ", MARK + "QUICK", MARK + "THE "]
    runs = {"".join(t.text for t in r.iter(f"{{{W}}}t")): r for r in first.iter(f"{{{W}}}r")}
    assert runs[MARK + "QUICK"].find(f"{{{W}}}rPr/{{{W}}}b") is not None
    assert runs[MARK + "JUMPS"].find(f"{{{W}}}rPr/{{{W}}}i") is not None
    assert runs[MARK + " FOX "].find(f"{{{W}}}rPr") is None
    link = first.find(f"{{{W}}}hyperlink")
    assert [t.text for t in link.iter(f"{{{W}}}t")] == [MARK + "THE DOG"]
    assert reopened.part.rels[link.get(R_ID)].target_ref == URL
    assert first[-1].find(f"{{{W}}}footnoteReference") is not None  # not a run of the block: stays put
    tabbed = next(p for p in body.iter(f"{{{W}}}p") if p.find(f".//{{{W}}}tab") is not None)
    assert [[c.tag.split("}")[1] + (c.text or "") for c in r if c.tag != f"{{{W}}}rPr"] for r in tabbed] == [
        ["t" + MARK + "COL ONE"], ["tab"], ["t" + MARK + "COL TWO"]]
    broken = next(p for p in body.iter(f"{{{W}}}p") if p.find(f".//{{{W}}}br") is not None)
    assert [[c.tag.split("}")[1] + (c.text or "") for c in r if c.tag != f"{{{W}}}rPr"] for r in broken] == [
        ["t" + MARK + "LINE ONE"], ["br"], ["t" + MARK + "LINE TWO"]]
    assert reopened.inline_shapes[0]._inline.docPr.get("descr") == MARK + "A RED SQUARE"
    boxes = [[t.text for t in box.iter(f"{{{W}}}t")] for box in body.iter(f"{{{W}}}txbxContent")]
    assert boxes == [[MARK + "INSIDE", MARK + "BOX TEXT "]] * 2  # the Fallback copy follows the Choice
    bold_box = next(next(body.iter(f"{{{W}}}txbxContent")).iter(f"{{{W}}}r"))
    assert bold_box.find(f"{{{W}}}rPr/{{{W}}}b") is not None
    note = [t.text for t in _xml(new, "word/footnotes.xml").iter(f"{{{W}}}t")]
    assert note == [MARK + "EMPHASIS", MARK + "A NOTE WITH "]
    assert reopened.tables[0].cell(1, 1).tables[0].cell(0, 1).text == MARK + "NESTED RIGHT"


def test_untranslated_save_gives_the_source_texts(source: Path, tmp_path: Path) -> None:
    document = docx_format.open_document(source)
    out = tmp_path / "same.docx"
    document.save(out, [untranslated(block) for block in document.blocks])
    old, new = _parts(source), _parts(out)
    assert _texts(old) == _texts(new)
    assert old["word/document.xml"] == new["word/document.xml"]


def test_a_hyperlink_split_by_the_translation_keeps_its_place(tmp_path: Path) -> None:
    document = docx.Document()
    p = document.add_paragraph("Go ")
    rid = p.part.relate_to(URL, RT.HYPERLINK, is_external=True)
    p._p.append(parse_xml(f'<w:hyperlink {NS} r:id="{rid}"><w:r><w:t>to</w:t></w:r><w:r><w:rPr><w:b/></w:rPr>'
                          '<w:t>there</w:t></w:r></w:hyperlink>'))
    source = tmp_path / "link.docx"
    document.save(str(source))
    opened = docx_format.open_document(source)
    out = tmp_path / "split.docx"
    opened.save(out, [[TranslatedRun(1, "B"), TranslatedRun(0, "A"), TranslatedRun(2, "C")]])
    texts = [t.text for t in _xml(_parts(out), "word/document.xml").iter(f"{{{W}}}t")]
    assert texts == ["A", "B", "C"]  # order as in the source, texts where their runs are


def test_a_zip_that_is_not_a_word_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a document")
    with pytest.raises(DocumentError, match="broken.docx cannot be read as a Word document"):
        docx_format.open_document(path)


def test_code_styles_are_verbatim(tmp_path: Path) -> None:
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    document.styles.add_style("Inline Code", WD_STYLE_TYPE.CHARACTER)
    document.styles.add_style("Code Block", WD_STYLE_TYPE.PARAGRAPH)
    p = document.add_paragraph("Call ")
    p.add_run("main()", style="Inline Code")
    document.add_paragraph("x = 1", style="Code Block")
    path = tmp_path / "code.docx"
    document.save(str(path))
    first, second = docx_format.open_document(path).blocks
    assert [r.verbatim for r in first.runs] == [False, True]
    assert second.verbatim


def test_an_untranslated_save_is_the_source_member_for_member(source: Path, tmp_path: Path) -> None:
    document = docx_format.open_document(source)
    out = tmp_path / "same.docx"
    document.save(out, [untranslated(block) for block in document.blocks])
    assert _parts(out) == _parts(source)


def test_only_the_parts_holding_text_change_in_their_order_and_compression(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.docx"
    _translate(source, out)
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(out) as zout:
        assert [(i.filename, i.compress_type) for i in zin.infolist()] == \
               [(i.filename, i.compress_type) for i in zout.infolist()]
    old, new = _parts(source), _parts(out)
    changed = {name for name in old if old[name] != new[name]}
    assert changed == {"word/document.xml", "word/header1.xml", "word/header2.xml", "word/footer1.xml",
                       "word/footnotes.xml", "docProps/core.xml"}, changed


INS_DEL = f"""<w:p {NS}><w:r><w:t xml:space="preserve">The price </w:t></w:r>
<w:ins w:id="3" w:author="Ann" w:date="2026-01-02T00:00:00Z"><w:r><w:t>rose</w:t></w:r></w:ins>
<w:del w:id="4" w:author="Ann" w:date="2026-01-02T00:00:00Z"><w:r><w:delText>fell</w:delText></w:r></w:del>
<w:r><w:t xml:space="preserve"> sharply</w:t></w:r><w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:t>2</w:t></w:r>
<w:r><w:t xml:space="preserve"> (see </w:t></w:r><w:hyperlink w:anchor="_Toc1"><w:r><w:t>totals</w:t></w:r></w:hyperlink>
<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteReference w:id="1"/></w:r><w:r><w:t>)</w:t></w:r>
</w:p>"""


@pytest.fixture
def tracked(tmp_path: Path) -> Path:
    """A paragraph as Word writes it with track changes on: an insertion, a deletion, a typed superscript,
    a link to a bookmark and a footnote reference."""
    document = docx.Document()
    document.element.body.insert(0, parse_xml(INS_DEL))
    notes = Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, FOOTNOTES.encode(), document.part.package)
    document.part.relate_to(notes, RT.FOOTNOTES)
    path = tmp_path / "tracked.docx"
    document.save(str(path))
    return path


def test_a_tracked_insertion_is_translated_inside_it_and_deleted_text_stays(tracked: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.docx"
    _translate(tracked, out)
    body = _xml(_parts(out), "word/document.xml")
    inserted = [docx_format.run_text(r) for r in body.iter(f"{{{W}}}ins") for r in r.iter(f"{{{W}}}r")]
    assert inserted == [MARK + "ROSE"]
    assert [t.text for t in body.iter(f"{{{W}}}delText")] == ["fell"]
    link = next(body.iter(f"{{{W}}}hyperlink"))
    assert link.get(f"{{{W}}}anchor") == "_Toc1" and docx_format.run_text(link[0]) == MARK + "TOTALS"
    assert sum(1 for _ in body.iter(f"{{{W}}}footnoteReference")) == 1


def test_markers_links_and_insertions_the_alignment_left_empty_keep_their_text(tracked: Path, tmp_path: Path) -> None:
    document = docx_format.open_document(tracked)
    block = next(b for b in document.blocks if b.text.startswith("The price"))
    assert [r.text for r in block.runs] == ["The price ", "rose", " sharply", "2", " (see ", "totals", ")"]
    words = {0: "Der Preis stieg stark (siehe Summen)"}
    translated = [[TranslatedRun(i, words.get(i, "")) for i in range(len(b.runs))] if b is block else untranslated(b)
                  for b in document.blocks]
    out = tmp_path / "out.docx"
    document.save(out, translated)
    body = _xml(_parts(out), "word/document.xml")
    texts = [docx_format.run_text(r) for r in body.iter(f"{{{W}}}r")]
    assert texts == ["Der Preis stieg stark (siehe Summen)", "rose", "", "", "2", "", "totals", "", ""]


def test_the_target_language_marks_translated_runs_the_default_style_and_the_core_properties(
        tracked: Path, tmp_path: Path) -> None:
    document = docx.Document(str(tracked))
    document.core_properties.language = "en-US"
    document.save(str(tracked))
    styles = _xml(_parts(tracked), "word/styles.xml")
    default = styles.find(f"{{{W}}}docDefaults/{{{W}}}rPrDefault/{{{W}}}rPr/{{{W}}}lang")
    assert default is not None and default.get(f"{{{W}}}val") == "en-US"
    opened = docx_format.open_document(tracked)
    opened.target_language = "de"
    out = tmp_path / "out.docx"
    opened.save(out, fake_translate_all(opened.blocks))
    parts = _parts(out)
    body = _xml(parts, "word/document.xml")
    marked = {docx_format.run_text(r): r.find(f"{{{W}}}rPr/{{{W}}}lang") for r in body.iter(f"{{{W}}}r")}
    assert marked[MARK + "ROSE"].get(f"{{{W}}}val") == "de"
    deleted = next(body.iter(f"{{{W}}}del")).find(f"{{{W}}}r")
    assert deleted.find(f"{{{W}}}rPr") is None  # deleted text is not translated
    styles = _xml(parts, "word/styles.xml")
    assert styles.find(f"{{{W}}}docDefaults/{{{W}}}rPrDefault/{{{W}}}rPr/{{{W}}}lang").get(f"{{{W}}}val") == "de"
    assert docx.Document(str(out)).core_properties.language == "de"


def test_prose_set_in_a_proportional_font_in_a_preformatted_paragraph_is_translated(tmp_path: Path) -> None:
    """Word's 'HTML Preformatted' paragraphs of a pasted web page whose runs are set in Times New Roman
    (poi-drawing.docx): prose, not code; a run in the style's own font is still code."""
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    document.styles.add_style("HTML Preformatted", WD_STYLE_TYPE.PARAGRAPH)
    prose = document.add_paragraph(style="HTML Preformatted")
    prose.add_run("Media monitoring").font.name = "Times New Roman"
    document.add_paragraph("x = 1", style="HTML Preformatted")
    path = tmp_path / "pasted.docx"
    document.save(str(path))
    first, second = docx_format.open_document(path).blocks
    assert not first.verbatim and second.verbatim


def test_lines_and_tabs_are_translated_on_their_own_and_stay_where_they_were(tmp_path: Path, en_de) -> None:
    """A w:br inside a run handed to the model came back as one line: all the words went before the break and
    the second line was left empty; a tab between a label and its value vanished. Each line and each stretch
    between tabs is now a block, and a bold word after the break keeps its own run."""
    from nmt_desktop.core.documents.translate_document import save_translation, translate_document

    document = docx.Document()
    lines = document.add_paragraph()
    lines.add_run("Open the door.").add_break()
    lines.add_run("Close the window. ")
    lines.add_run("Now").bold = True
    labelled = document.add_paragraph()
    labelled.add_run("Name:\tThe house is big.")
    path = tmp_path / "lines.docx"
    document.save(str(path))
    opened = docx_format.open_document(path)
    assert [b.text for b in opened.blocks] == ["Open the door.", "Close the window. Now", "Name:", "The house is big."]
    out = save_translation(translate_document(en_de, opened), tmp_path / "out.docx")
    first, second = list(_xml(_parts(out), "word/document.xml").iter(f"{{{W}}}p"))[:2]

    def shape(paragraph):
        return [(c.tag.split("}")[1], c.text or "") for r in paragraph.iter(f"{{{W}}}r") for c in r
                if c.tag != f"{{{W}}}rPr"]

    kinds = [kind for kind, _ in shape(first)]
    assert kinds.count("br") == 1 and kinds.index("br") not in (0, len(kinds) - 1), shape(first)
    before = "".join(text for kind, text in shape(first)[:kinds.index("br")])
    after = "".join(text for kind, text in shape(first)[kinds.index("br") + 1:])
    assert before.strip() and after.strip() and "Open" not in before + after, (before, after)
    bold = [r for r in first.iter(f"{{{W}}}r") if r.find(f"{{{W}}}rPr/{{{W}}}b") is not None]
    assert len(bold) == 1 and bold[0].findtext(f"{{{W}}}t").strip()
    assert list(first).index(bold[0].getparent() if bold[0].getparent() is not first else bold[0]) > \
        [c.tag for c in first].index(f"{{{W}}}r")  # the bold word is after the break's line start
    parts = [text for kind, text in shape(second)]
    assert [kind for kind, _ in shape(second)] == ["t", "tab", "t"] and parts[0].strip() and parts[2].strip()
    assert "house" not in parts[2], parts


def _marked_paragraphs(path: Path) -> Path:
    """A footnote reference and a PAGE field, each between two runs of plain text, as Word writes them."""
    document = docx.Document()
    noted = document.add_paragraph("The old man opened the door")
    noted._p.append(parse_xml(f'<w:r {NS}><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                              '<w:footnoteReference w:id="1"/></w:r>'))
    noted.add_run(" and the dog ran into the garden.")
    fielded = document.add_paragraph("I like the red car")
    _complex_field(fielded)
    fielded.add_run(" but my brother likes the blue one.")
    document.save(str(path))
    return path


def _around(paragraph: etree._Element, tag: str) -> tuple[str, str]:
    """The text before and after the first `tag` in a paragraph, field results aside."""
    before, after, seen, depth = [], [], False, 0
    for run in paragraph.iter(f"{{{W}}}r"):
        chars = [c.get(f"{{{W}}}fldCharType") for c in run.iter(f"{{{W}}}fldChar")]
        seen = seen or run.find(f".//{{{W}}}{tag}") is not None
        if not depth and not chars:
            (after if seen else before).append("".join(t.text or "" for t in run.iter(f"{{{W}}}t")))
        depth += chars.count("begin") - chars.count("end")
    return "".join(before), "".join(after)


def test_a_marker_between_plain_runs_moves_with_the_text_it_followed(tmp_path: Path) -> None:
    """The text before a footnote reference or a field is a look of its own; when the translation puts it
    last, the marker goes with it (it was left in its place among the runs, after the other text)."""
    document = docx_format.open_document(_marked_paragraphs(tmp_path / "marked.docx"))
    assert [[r.style for r in b.runs] for b in document.blocks] == [[("before a marker", 0), None]] * 2
    german = [["Der alte Mann öffnete die Tür", " und der Hund lief in den Garten."],
              ["Ich mag den roten Wagen", ", aber mein Bruder mag den blauen."]]
    out = tmp_path / "out.docx"
    document.save(out, [[TranslatedRun(1, words[1]), TranslatedRun(0, words[0])] for words in german])
    noted, fielded = list(_xml(_parts(out), "word/document.xml").iter(f"{{{W}}}p"))[:2]
    assert _around(noted, "footnoteReference") == (german[0][1] + german[0][0], "")
    assert _around(fielded, "fldChar") == (german[1][1] + german[1][0], "")
    assert [t.text for t in fielded.iter(f"{{{W}}}instrText")] == [" DATE "]


def test_a_marker_lands_after_the_translation_of_the_word_it_followed(tmp_path: Path, en_de) -> None:
    """With the bundled model: a footnote reference after "door" and a field after "car" are after "Tür" and
    "Wagen", not at the end of the sentence (where the whole translation given to the first run left them)."""
    from nmt_desktop.core.documents.translate_document import save_translation, translate_document

    source = _marked_paragraphs(tmp_path / "marked.docx")
    out = save_translation(translate_document(en_de, docx_format.open_document(source)), tmp_path / "out.docx")
    noted, fielded = list(_xml(_parts(out), "word/document.xml").iter(f"{{{W}}}p"))[:2]
    before, after = _around(noted, "footnoteReference")
    assert before.endswith("Tür") and "Hund" in after, (before, after)
    before, after = _around(fielded, "fldChar")
    assert before.endswith("Wagen") and "Bruder" in after, (before, after)
