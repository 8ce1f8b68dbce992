"""ODT adapter: a package written by hand with every feature, round-tripped through the fake translation."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree
from PIL import Image

from nmt_desktop.core.documents.blocks import DocumentError, untranslated
from nmt_desktop.core.documents.formats.odt import open_document
from tests.core.documents.fake_translation import MARK, fake_translate_all

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
    "dc": "http://purl.org/dc/elements/1.1/",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}
DECL = " ".join(f'xmlns:{k}="{v}"' for k, v in NS.items() if k != "manifest")
T = f"{{{NS['text']}}}"
XLINK_HREF = f"{{{NS['xlink']}}}href"

CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {DECL} office:version="1.3">
<office:automatic-styles>
<style:style style:name="T1" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>
<style:style style:name="T2" style:family="text"><style:text-properties fo:font-style="italic"/></style:style>
<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Preformatted_20_Text"/>
</office:automatic-styles>
<office:body><office:text>
<text:h text:outline-level="1">The first chapter</text:h>
<text:p text:style-name="Standard">A <text:span text:style-name="T1">bold word</text:span> and \
<text:span text:style-name="T2">an italic phrase</text:span> in the middle,\
<text:s text:c="2"/>a <text:a xlink:type="simple" xlink:href="https://example.org/">link here</text:a>, \
run <text:span text:style-name="Source_20_Text">make all</text:span><text:bookmark text:name="bm"/> now\
<text:note text:id="n1" text:note-class="footnote"><text:note-citation>1</text:note-citation>\
<text:note-body><text:p text:style-name="Footnote">The footnote <text:span text:style-name="T1">text</text:span>\
</text:p></text:note-body></text:note>.<text:line-break/>After<text:tab/>tab.</text:p>
<text:p text:style-name="P1">def f(): return 1</text:p>
<text:p>Anchor <draw:frame draw:name="Box" text:anchor-type="as-char" svg:width="2cm">\
<draw:text-box><text:p>Text box words</text:p></draw:text-box></draw:frame> of a box.</text:p>
<text:p><draw:frame draw:name="Pic" text:anchor-type="paragraph"><draw:image xlink:href="Pictures/x.png" \
xlink:type="simple"/><svg:title>A red square</svg:title><svg:desc>Its long description</svg:desc></draw:frame>\
Caption of the picture</text:p>
<table:table table:name="T"><table:table-column table:number-columns-repeated="2"/>
<table:table-row><table:table-cell><text:p>Fruit</text:p></table:table-cell>\
<table:table-cell><text:p>Cost</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>apple <text:span text:style-name="T2">green</text:span></text:p>\
</table:table-cell><table:table-cell><text:p>cheap</text:p></table:table-cell></table:table-row>
</table:table>
<text:list><text:list-item><text:p>first item</text:p></text:list-item>\
<text:list-item><text:p>second <text:span text:style-name="T1">strong</text:span> item</text:p></text:list-item>\
</text:list>
</office:text></office:body></office:document-content>
"""

STYLES = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles {DECL} office:version="1.3">
<office:styles><style:style style:name="Source_20_Text" style:display-name="Source Text" style:family="text"/>
</office:styles>
<office:master-styles><style:master-page style:name="Standard">
<style:header><text:p>The running <text:span text:style-name="T1">header</text:span></text:p></style:header>
<style:footer><text:p>Page <text:page-number text:select-page="current">1</text:page-number> of the \
book</text:p></style:footer>
</style:master-page></office:master-styles></office:document-styles>
"""

META = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta {DECL} office:version="1.3"><office:meta><dc:title>The document title</dc:title>\
<meta:generator xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0">hand</meta:generator>\
</office:meta></office:document-meta>
"""

MANIFEST = f"""<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="{NS['manifest']}" manifest:version="1.3">
<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>
<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
<manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/>
<manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>
<manifest:file-entry manifest:full-path="Pictures/x.png" manifest:media-type="image/png"/>
</manifest:manifest>
"""


def png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (4, 3), (255, 0, 0)).save(buf, "PNG")
    return buf.getvalue()


def write_odt(path: Path, skip: str = "") -> Path:
    members = {"mimetype": b"application/vnd.oasis.opendocument.text", "content.xml": CONTENT.encode(),
               "styles.xml": STYLES.encode(), "meta.xml": META.encode(), "Pictures/x.png": png(),
               "META-INF/manifest.xml": MANIFEST.encode(), "settings.xml": b"<?xml version='1.0'?><x/>"}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            if name != skip:
                z.writestr(name, data, zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED)
    return path


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def xml(path: Path, name: str) -> etree._Element:
    return etree.fromstring(parts(path)[name])


VERBATIM = {T + "page-number", T + "note-citation"}


def paragraph_texts(root: etree._Element) -> list[str]:
    """Every text node of every paragraph except fields, note citations and code (Source Text, P1)."""
    out = []
    inline = (T + "p", T + "h", T + "span", T + "a")
    for p in root.iter(T + "p", T + "h"):
        if p.get(T + "style-name") == "P1":
            continue
        for el in p.iter():
            if el.tag in VERBATIM or el.get(T + "style-name") == "Source_20_Text":
                continue
            if el.text and el.tag in inline:
                out.append(el.text)
            if el is not p and el.tail and el.getparent().tag in inline:
                out.append(el.tail)
    return [t for t in out if t.strip()]


@pytest.fixture
def odt(tmp_path: Path) -> Path:
    return write_odt(tmp_path / "doc.odt")


def test_round_trip_translates_every_text_and_keeps_the_package(odt: Path, tmp_path: Path) -> None:
    before = odt.read_bytes()
    doc = open_document(odt)
    out = tmp_path / "out.odt"
    doc.save(out, fake_translate_all(doc.blocks))
    assert odt.read_bytes() == before
    src, dst = parts(odt), parts(out)
    with zipfile.ZipFile(out) as z:
        first = z.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
    assert set(src) == set(dst)
    for name in set(src) - {"content.xml", "styles.xml", "meta.xml"}:
        assert src[name] == dst[name], name  # the image, manifest, settings: byte-identical
    content, styles, meta = xml(out, "content.xml"), xml(out, "styles.xml"), xml(out, "meta.xml")
    old = xml(odt, "content.xml")
    for tag in ("text:p", "text:h", "table:table-cell", "table:table-row", "text:list-item", "text:note",
                "draw:frame", "draw:text-box", "text:bookmark", "text:line-break", "text:tab", "text:a"):
        assert len(old.findall(f".//{tag}", NS)) == len(content.findall(f".//{tag}", NS)), tag
    # every text node translated (the fake upper-cases), every run starting with the mark
    texts = paragraph_texts(content) + paragraph_texts(styles)
    assert len(texts) > 20 and all(t == t.upper() for t in texts), [t for t in texts if t != t.upper()]
    runs = [r.text for b in open_document(out).blocks if not b.verbatim for r in b.runs
            if not r.verbatim and r.text.strip()]
    assert len(runs) > 20 and all(r.startswith(MARK) for r in runs), [r for r in runs if not r.startswith(MARK)]
    bold = content.findall(".//text:span[@text:style-name='T1']", NS)
    assert sorted(b.text for b in bold) == [MARK + "BOLD WORD", MARK + "STRONG", MARK + "TEXT"]
    assert content.find(".//text:span[@text:style-name='T2']", NS).text == MARK + "AN ITALIC PHRASE"
    body_p = content.findall(".//office:text/text:p", NS)[0]
    # the runs were reversed within each segment; the line break and the tab stay between the segments
    line_break = body_p.find("text:line-break", NS)
    assert line_break.tail == MARK + "AFTER" and line_break.getnext().tag == T + "tab"
    assert line_break.getnext().tail == MARK + "TAB." and line_break.getnext().getnext() is None
    assert body_p.text.startswith(MARK + ".")
    link = content.find(".//text:a", NS)
    assert link.get(XLINK_HREF) == "https://example.org/" and link.text == MARK + "LINK HERE"
    code = content.find(".//text:span[@text:style-name='Source_20_Text']", NS)
    assert code.text == "make all"
    assert content.find(".//text:p[@text:style-name='P1']", NS).text == "def f(): return 1"
    note = content.find(".//text:note", NS)
    assert note.find("text:note-citation", NS).text == "1"
    assert "".join(note.find(".//text:note-body/text:p", NS).itertext()) == MARK + "TEXT" + MARK + "THE FOOTNOTE "
    assert content.find(".//draw:text-box/text:p", NS).text == MARK + "TEXT BOX WORDS"
    assert content.find(".//svg:title", NS).text == MARK + "A RED SQUARE"
    assert content.find(".//svg:desc", NS).text == MARK + "ITS LONG DESCRIPTION"
    image = content.find(".//draw:image", NS)
    assert image.get(XLINK_HREF) == "Pictures/x.png"
    assert content.find(".//text:s", NS) is not None  # two spaces still written the ODF way
    assert styles.find(".//style:header/text:p/text:span", NS).text == MARK + "HEADER"
    footer = styles.find(".//style:footer/text:p", NS)
    assert footer.find("text:page-number", NS).text == "1" and footer.find("text:s", NS) is not None
    assert "".join(footer.itertext()) == MARK + "OF THE BOOK" + "1" + MARK + "PAGE "  # text:s holds the space
    assert meta.find(".//dc:title", NS).text == MARK + "THE DOCUMENT TITLE"
    for name in ("content.xml", "styles.xml", "meta.xml"):  # the XML declaration as it was
        assert dst[name].startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<office:'), name


def test_blocks_are_listed_in_reading_order(odt: Path) -> None:
    doc = open_document(odt)
    where = {b.text: b.where for b in doc.blocks}
    assert where["The document title"] == "document title"
    assert "header" in where["The running header"] and "footer" in where["Page 1 of the book"]
    assert where["The footnote text"].startswith("footnote")
    assert where["Text box words"].startswith("text box") and where["Fruit"].startswith("table cell")
    assert [b.text for b in doc.blocks if b.verbatim] == ["def f(): return 1"]
    first = next(b for b in doc.blocks if b.text.startswith("A bold"))
    assert first.text == "A bold word and an italic phrase in the middle,  a link here, run make all now."
    after = [b for b in doc.blocks if b.where.startswith(first.where.rsplit(",", 1)[0])]
    assert [(b.text, b.where.rsplit(", ", 1)[1]) for b in after] == [(first.text, "part 1"), ("After", "part 2"),
                                                                     ("tab.", "part 3")]
    assert not any("\t" in b.text for b in doc.blocks)  # a tab is never handed to the translator
    assert "1" not in first.text  # the note citation is not text to translate
    assert [r.verbatim for r in first.runs if r.text == "make all"] == [True]


def test_untranslated_round_trip_keeps_the_text(odt: Path, tmp_path: Path) -> None:
    doc = open_document(odt)
    doc.save(tmp_path / "same.odt", [untranslated(b) for b in doc.blocks])
    again = open_document(tmp_path / "same.odt")
    assert [b.text for b in again.blocks] == [b.text for b in doc.blocks]
    assert [b.runs for b in again.blocks] == [b.runs for b in doc.blocks]


@pytest.mark.parametrize("missing", ["content.xml"])
def test_broken_package_is_refused_in_one_sentence(tmp_path: Path, missing: str) -> None:
    path = write_odt(tmp_path / "broken.odt", skip=missing)
    with pytest.raises(DocumentError, match=r"broken\.odt is not a valid OpenDocument text: it has no content\.xml"):
        open_document(path)
    (tmp_path / "junk.odt").write_bytes(b"not a zip at all")
    with pytest.raises(DocumentError, match="junk.odt is not a readable"):
        open_document(tmp_path / "junk.odt")


def test_opened_through_the_registry(odt: Path) -> None:
    from nmt_desktop.core.documents import formats

    doc = formats.open_document(odt)  # the safety checks pass a well-formed file through to this module
    assert [b.text for b in doc.blocks] == [b.text for b in open_document(odt).blocks]
