"""The .pptx adapter: a presentation using every feature, round-tripped through the fake translation."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pptx
import pytest
from lxml import etree
from PIL import Image
from pptx.oxml import parse_xml
from pptx.util import Inches

from nmt_desktop.core.documents.blocks import DocumentError, TranslatedRun, untranslated
from nmt_desktop.core.documents.formats import pptx as pptx_format
from tests.core.documents.fake_translation import MARK, fake_translate_all

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
URL = "https://example.com/results"
VERBATIM = {"x = 1", "2"}  # inline code and a slide number field's text


def a(tag: str) -> str:
    return f"{{{A}}}{tag}"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (30, 200, 30)).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    prs = pptx.Presentation()
    prs.core_properties.title = "Quarterly review"
    prs.core_properties.subject = "Sales"
    first = prs.slides.add_slide(prs.slide_layouts[0])
    first.shapes.title.text = "Welcome"
    body = first.placeholders[1].text_frame.paragraphs[0]
    body.add_run().text = "Results "
    bold = body.add_run()
    bold.text = "grew"
    bold.font.bold = True
    body.add_run().text = " fast, "
    link = body.add_run()
    link.text = "see the site"
    link.hyperlink.address = URL
    body.add_line_break()
    code = body.add_run()
    code.text = "x = 1"
    code.font.name = "Consolas"
    body._p.append(parse_xml(f'<a:fld xmlns:a="{A}" id="{{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}}" '
                             'type="slidenum"><a:t>2</a:t></a:fld>'))
    second = prs.slides.add_slide(prs.slide_layouts[5])
    second.shapes.title.text = "Details"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "Region", (0, 1): "Total", (1, 0): "North", (1, 1): "12"}.items():
        table.cell(row, col).text = text
    group = second.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(4), Inches(2), Inches(1)).text_frame.text = "Grouped one"
    group.shapes.add_textbox(Inches(3), Inches(4), Inches(2), Inches(1)).text_frame.text = "Grouped two"
    picture = second.shapes.add_picture(io.BytesIO(_png()), Inches(6), Inches(4))
    picture._element.nvPicPr.cNvPr.set("descr", "A green square")
    second.notes_slide.notes_text_frame.text = "Speaker notes here"
    path = tmp_path / "deck.pptx"
    prs.save(str(path))
    return path


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _translatable(parts: dict[str, bytes]) -> list[str]:
    return [n for n in parts if n.startswith(("ppt/slides/slide", "ppt/notesSlides/")) and n.endswith(".xml")]


def _counts(parts: dict[str, bytes]) -> dict[str, dict[str, int]]:
    tags = [a(t) for t in ("p", "r", "br", "fld", "tbl", "tc", "b", "hlinkClick")] + [
        f"{{http://schemas.openxmlformats.org/presentationml/2006/main}}{t}" for t in ("sp", "grpSp", "pic")]
    return {name: {tag: sum(1 for _ in etree.fromstring(parts[name]).iter(tag)) for tag in tags}
            for name in _translatable(parts)}


def test_blocks_cover_every_piece_of_text(source: Path) -> None:
    blocks = pptx_format.open_document(source).blocks
    texts = [block.text for block in blocks]
    for expected in ("Quarterly review", "Sales", "Welcome", "Details", "Region", "12", "Grouped two",
                     "A green square", "Speaker notes here"):
        assert expected in texts
    body = next(b for b in blocks if b.text.startswith("Results"))
    assert body.text == "Results grew fast, see the site" and body.where == "slide 1, paragraph 2, line 1"
    after_break = blocks[blocks.index(body) + 1]  # a line break is never text: each line is a block
    assert after_break.where == "slide 1, paragraph 2, line 2"
    assert [(r.text, r.verbatim) for r in after_break.runs] == [("x = 1", True)]  # the field is left out
    assert next(r for r in body.runs if r.text == "see the site").style[:2] == ("link", URL)


def test_round_trip_translates_every_text_and_keeps_the_rest(source: Path, tmp_path: Path) -> None:
    before = source.read_bytes()
    out = tmp_path / "out.pptx"
    document = pptx_format.open_document(source)
    document.save(out, fake_translate_all(document.blocks))
    assert source.read_bytes() == before
    old, new = _parts(source), _parts(out)
    assert sorted(old) == sorted(new)
    assert _counts(old) == _counts(new)
    for name in old:
        if name.startswith("ppt/media/") or name.endswith(".rels") or "slideLayout" in name or "Master" in name:
            assert old[name] == new[name], name
    for name in _translatable(new):
        for node in etree.fromstring(new[name]).iter(a("t")):
            text = node.text or ""
            assert not text.strip() or text.startswith(MARK) or text in VERBATIM, (name, text)
    reopened = pptx.Presentation(str(out))
    assert len(reopened.slides) == 2
    assert reopened.core_properties.title == MARK + "QUARTERLY REVIEW"
    body = reopened.slides[0].placeholders[1].text_frame.paragraphs[0]
    assert [r.text for r in body.runs] == [MARK + "SEE THE SITE", MARK + " FAST, ", MARK + "GREW",
                                           MARK + "RESULTS ", "x = 1"]
    runs = {r.text: r for r in body.runs}
    assert runs[MARK + "GREW"].font.bold is True and runs[MARK + "RESULTS "].font.bold is None
    assert runs[MARK + "SEE THE SITE"].hyperlink.address == URL
    assert runs["x = 1"].font.name == "Consolas"
    children = [c.tag.split("}")[1] for c in body._p if c.tag != a("pPr")]
    assert children == ["r", "r", "r", "r", "br", "r", "fld"]  # each line's runs moved, the break and field stayed
    second = reopened.slides[1]
    table = next(s for s in second.shapes if s.has_table).table
    assert table.cell(1, 1).text == MARK + "12"
    group = next(s for s in second.shapes if s.shape_type == pptx.enum.shapes.MSO_SHAPE_TYPE.GROUP)
    assert [s.text_frame.text for s in group.shapes] == [MARK + "GROUPED ONE", MARK + "GROUPED TWO"]
    picture = next(s for s in second.shapes if s.shape_type == pptx.enum.shapes.MSO_SHAPE_TYPE.PICTURE)
    assert picture._element.nvPicPr.cNvPr.get("descr") == MARK + "A GREEN SQUARE"
    assert second.notes_slide.notes_text_frame.text == MARK + "SPEAKER NOTES HERE"


def test_untranslated_save_gives_the_source_texts(source: Path, tmp_path: Path) -> None:
    document = pptx_format.open_document(source)
    out = tmp_path / "same.pptx"
    document.save(out, [untranslated(block) for block in document.blocks])
    old, new = _parts(source), _parts(out)
    for name in _translatable(old):
        assert old[name] == new[name], name


def test_a_zip_that_is_not_a_presentation_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.pptx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a presentation")
    with pytest.raises(DocumentError, match="broken.pptx cannot be read as a PowerPoint presentation"):
        pptx_format.open_document(path)


def _rewritten(path: Path, out: Path, edits: dict[str, bytes]) -> Path:
    """A copy of a package with some members replaced (as PowerPoint writes what python-pptx cannot)."""
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info, edits.get(info.filename, zin.read(info)))
    return out


R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
HYPERLINK = f"{R}/hyperlink"


@pytest.fixture
def footnoted(tmp_path: Path) -> Path:
    """A slide as PowerPoint writes one pasted from Word: a superscript footnote marker linked to an
    internal target ('#_ftn1'), the relationship python-pptx dropped on save."""
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Findings"
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text_frame.paragraphs[0]
    box.add_run().text = "Sales grew in the north"
    box.add_run().text = "1"
    prs.save(str(tmp_path / "plain.pptx"))
    parts = _parts(tmp_path / "plain.pptx")
    slide_xml = parts["ppt/slides/slide1.xml"].replace(
        b"<a:r><a:t>1</a:t>",
        f'<a:r><a:rPr lang="en-US" baseline="30000" dirty="0"><a:hlinkClick xmlns:r="{R}" r:id="rId9"/>'
        f'</a:rPr><a:t>1</a:t>'.encode())
    assert slide_xml != parts["ppt/slides/slide1.xml"]
    rels = parts["ppt/slides/_rels/slide1.xml.rels"].replace(
        b"</Relationships>", f'<Relationship Id="rId9" Type="{HYPERLINK}" Target="#_ftn1"/></Relationships>'.encode())
    return _rewritten(tmp_path / "plain.pptx", tmp_path / "footnoted.pptx",
                      {"ppt/slides/slide1.xml": slide_xml, "ppt/slides/_rels/slide1.xml.rels": rels})


def test_an_internal_hyperlink_keeps_its_relationship_and_every_other_member(footnoted: Path, tmp_path: Path) -> None:
    document = pptx_format.open_document(footnoted)
    out = tmp_path / "out.pptx"
    document.save(out, fake_translate_all(document.blocks))
    old, new = _parts(footnoted), _parts(out)
    with zipfile.ZipFile(footnoted) as zin, zipfile.ZipFile(out) as zout:
        assert [(i.filename, i.compress_type) for i in zin.infolist()] == \
               [(i.filename, i.compress_type) for i in zout.infolist()]
    changed = {name for name in old if old[name] != new[name]}
    assert changed == {"ppt/slides/slide1.xml"}
    rels = etree.fromstring(new["ppt/slides/_rels/slide1.xml.rels"])
    ids = {rel.get("Id") for rel in rels}
    clicks = [c.get(f"{{{R}}}id") for c in etree.fromstring(new["ppt/slides/slide1.xml"]).iter(a("hlinkClick"))]
    assert clicks == ["rId9"] and set(clicks) <= ids


def test_an_untranslated_save_is_the_source_member_for_member(footnoted: Path, tmp_path: Path) -> None:
    document = pptx_format.open_document(footnoted)
    out = tmp_path / "same.pptx"
    document.save(out, [untranslated(block) for block in document.blocks])
    assert _parts(out) == _parts(footnoted)


def test_a_superscript_link_the_alignment_left_empty_keeps_its_marker(footnoted: Path, tmp_path: Path) -> None:
    document = pptx_format.open_document(footnoted)
    block = next(b for b in document.blocks if b.text.startswith("Sales"))
    marker = next(i for i, r in enumerate(block.runs) if r.text == "1")
    assert block.runs[marker].style[:2] == ("link", "#_ftn1")
    translated = [untranslated(b) if b is not block else
                  [TranslatedRun(0, "Der Umsatz wuchs im Norden"), TranslatedRun(marker, "")]
                  for b in document.blocks]
    out = tmp_path / "out.pptx"
    document.save(out, translated)
    runs = list(etree.fromstring(_parts(out)["ppt/slides/slide1.xml"]).iter(a("r")))
    marked = [r for r in runs if r.find(f"{a('rPr')}/{a('hlinkClick')}") is not None]
    assert [r.findtext(a("t")) for r in marked] == ["1"]


def test_the_target_language_marks_the_translated_runs(footnoted: Path, tmp_path: Path) -> None:
    document = pptx_format.open_document(footnoted)
    document.target_language = "de"
    out = tmp_path / "out.pptx"
    document.save(out, fake_translate_all(document.blocks))
    runs = list(etree.fromstring(_parts(out)["ppt/slides/slide1.xml"]).iter(a("r")))
    assert {r.findtext(a("t")): r.find(a("rPr")).get("lang") for r in runs} == {
        MARK + "FINDINGS": "de", MARK + "SALES GREW IN THE NORTH": "de", MARK + "1": "de"}


def test_translating_with_the_model_marks_its_target_language(footnoted: Path, tmp_path: Path, en_de) -> None:
    from nmt_desktop.core.documents.translate_document import save_translation, translate_document

    result = translate_document(en_de, pptx_format.open_document(footnoted))
    out = save_translation(result, tmp_path / "out.pptx")
    runs = list(etree.fromstring(_parts(out)["ppt/slides/slide1.xml"]).iter(a("r")))
    languages = {r.find(a("rPr")).get("lang") for r in runs if r.findtext(a("t")) not in ("Findings", "1")}
    assert languages == {"de"}
    marker = next(r for r in runs if r.find(f"{a('rPr')}/{a('hlinkClick')}") is not None)
    assert marker.findtext(a("t")) == "1"  # the footnote marker and its link stay, whatever the alignment gave it


def test_a_line_break_is_never_handed_to_the_translator(tmp_path: Path, en_de) -> None:
    """The bundled model put every word before an a:br handed to it as a verbatim run ("Mach die Tür auf.
    Schließ das Fenster." then the break): each line is translated on its own now."""
    from nmt_desktop.core.documents.translate_document import save_translation, translate_document

    prs = pptx.Presentation()
    title = prs.slides.add_slide(prs.slide_layouts[5]).shapes.title.text_frame.paragraphs[0]
    title.add_run().text = "Open the door."
    title.add_line_break()
    title.add_run().text = "Close the window."
    path = tmp_path / "lines.pptx"
    prs.save(str(path))
    out = save_translation(translate_document(en_de, pptx_format.open_document(path)), tmp_path / "out.pptx")
    paragraph = next(etree.fromstring(_parts(out)["ppt/slides/slide1.xml"]).iter(a("p")))
    lines = [c.findtext(a("t")) if c.tag == a("r") else "|" for c in paragraph if c.tag in (a("r"), a("br"))]
    assert lines[1] == "|" and lines[0].strip() and lines[2].strip(), lines


P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
MC_NS = "http://schemas.openxmlformats.org/markup-compatibility/2006"


def _text_box(name: str, text: str, shape_id: int) -> str:
    return (f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{name}"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
            f'<p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US"/><a:t>{text}</a:t></a:r></a:p>'
            '</p:txBody></p:sp>')


@pytest.fixture
def templated(tmp_path: Path) -> Path:
    """A deck as PowerPoint writes one: a slide shape in mc:AlternateContent (a newer shape in mc:Choice, its
    copy for older readers in mc:Fallback), and a layout and a master that hold, besides their placeholders'
    prompt text, a text box shown on every slide that uses them."""
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Findings"
    prs.save(str(tmp_path / "plain.pptx"))
    parts = _parts(tmp_path / "plain.pptx")
    ns = f'xmlns:p="{P_NS}" xmlns:a="{A}" xmlns:mc="{MC_NS}"'
    alternate = (f'<mc:AlternateContent {ns}><mc:Choice xmlns:p14="http://schemas.microsoft.com/office/powerpoint/'
                 f'2010/main" Requires="p14">{_text_box("Box", "The market is growing", 20)}</mc:Choice>'
                 f'<mc:Fallback>{_text_box("Box", "The market is growing", 20)}</mc:Fallback></mc:AlternateContent>')
    slide_xml = parts["ppt/slides/slide1.xml"].replace(b"</p:spTree>", alternate.encode() + b"</p:spTree>")
    layout_rel = etree.fromstring(parts["ppt/slides/_rels/slide1.xml.rels"])
    layout = "ppt/slideLayouts/" + next(r.get("Target") for r in layout_rel if "slideLayout" in r.get("Type"))\
        .rsplit("/", 1)[1]
    edits = {"ppt/slides/slide1.xml": slide_xml}
    for name, text in ((layout, "Company confidential"), ("ppt/slideMasters/slideMaster1.xml", "Our logo caption")):
        edits[name] = parts[name].replace(b"</p:spTree>", _text_box("Note", text, 99).replace(
            "<p:sp>", f'<p:sp {ns}>', 1).encode() + b"</p:spTree>", 1)
    return _rewritten(tmp_path / "plain.pptx", tmp_path / "templated.pptx", edits)


def test_a_fallback_carries_its_choices_translation(templated: Path, tmp_path: Path) -> None:
    document = pptx_format.open_document(templated)
    assert [b.text for b in document.blocks].count("The market is growing") == 1  # read once, in mc:Choice
    out = tmp_path / "out.pptx"
    document.save(out, fake_translate_all(document.blocks))
    slide = etree.fromstring(_parts(out)["ppt/slides/slide1.xml"])
    choice, fallback = (slide.find(f".//{{{MC_NS}}}{kind}") for kind in ("Choice", "Fallback"))
    assert [t.text for t in choice.iter(a("t"))] == [t.text for t in fallback.iter(a("t"))] == [
        MARK + "THE MARKET IS GROWING"]


def test_text_shown_from_a_layout_or_master_is_translated_and_prompts_are_left(templated: Path,
                                                                                tmp_path: Path) -> None:
    document = pptx_format.open_document(templated)
    where = {b.text: b.where for b in document.blocks}
    assert where["Company confidential"].startswith("layout") and where["Our logo caption"].startswith("master")
    assert not any(text.startswith("Click to edit") for text in where)  # placeholders' prompts are no text
    out = tmp_path / "out.pptx"
    document.save(out, fake_translate_all(document.blocks))
    old, new = _parts(templated), _parts(out)
    texts = {name: [t.text for t in etree.fromstring(new[name]).iter(a("t"))] for name in new
             if name.startswith(("ppt/slideLayouts/slideLayout", "ppt/slideMasters/slideMaster"))
             and name.endswith(".xml")}
    assert sum(MARK + "COMPANY CONFIDENTIAL" in t for t in texts.values()) == 1
    assert MARK + "OUR LOGO CAPTION" in texts["ppt/slideMasters/slideMaster1.xml"]
    assert "Click to edit Master title style" in texts["ppt/slideMasters/slideMaster1.xml"]
    changed = {name for name in old if old[name] != new[name]}
    assert {n for n in changed if "slideLayouts/" in n or "slideMasters/" in n} == {
        "ppt/slideMasters/slideMaster1.xml", next(n for n, t in texts.items() if MARK + "COMPANY CONFIDENTIAL" in t)}
