"""EPUB adapter: a book written by hand (container, OPF, nav, NCX, two chapters, an image), round-tripped
through the fake (run-reversing) translation."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree
from PIL import Image

from nmt_desktop.core.documents.blocks import DocumentError, untranslated
from nmt_desktop.core.documents.formats.epub import open_document
from tests.core.documents.fake_translation import MARK, fake_translate_all

X = "{http://www.w3.org/1999/xhtml}"
NS = {"x": X[1:-1], "opf": "http://www.idpf.org/2007/opf", "dc": "http://purl.org/dc/elements/1.1/",
      "ncx": "http://www.daisy.org/z3986/2005/ncx/"}

CONTAINER = b"""<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""

OPF = b"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:1</dc:identifier>
<dc:title>The book title</dc:title><dc:language>en</dc:language></metadata>
<manifest>
<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
<item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
<item id="c2" href="text/ch%202.xhtml" media-type="application/xhtml+xml"/>
<item id="img" href="images/x.png" media-type="image/png"/>
<item id="css" href="style.css" media-type="text/css"/>
</manifest>
<spine toc="ncx"><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>"""

NAV = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title>
</head><body><nav epub:type="toc"><h1>Table of contents</h1><ol>
<li><a href="text/ch1.xhtml">The first chapter</a></li><li><a href="text/ch%202.xhtml">The second chapter</a></li>
</ol></nav></body></html>"""

NCX = b"""<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head/><docTitle><text>The book title</text>
</docTitle><navMap><navPoint id="p1" playOrder="1"><navLabel><text>The first chapter</text></navLabel>
<content src="text/ch1.xhtml"/></navPoint></navMap></ncx>"""

CH1 = b"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en">
<head><title>Chapter one</title><link rel="stylesheet" href="../style.css"/></head>
<body>
<h1>The first chapter</h1>
<p>It was a <b>dark night</b> and <i>a quiet street</i>, said <a href="ch%202.xhtml#n1">the note</a>,\
 typing <code>ls -l</code> again.<a epub:type="noteref" href="#fn1">1</a></p>
<pre>x = 1
y = 2</pre>
<figure><img src="../images/x.png" alt="A red square"/><figcaption>The red square</figcaption></figure>
<table><tr><th>Name</th><td>Value <em>here</em></td></tr></table>
<ul><li>one item</li><li>two <strong>items</strong></li></ul>
<aside epub:type="footnote" id="fn1"><p>The footnote text</p></aside>
</body></html>"""

CH2 = b"""<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter two</title></head>
<body><h1 id="n1">The second chapter</h1><p>Last words<br/>of the book.</p></body></html>"""


def png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (4, 3), (255, 0, 0)).save(buf, "PNG")
    return buf.getvalue()


def write_epub(path: Path, skip: str = "") -> Path:
    members = {"mimetype": b"application/epub+zip", "META-INF/container.xml": CONTAINER, "OEBPS/content.opf": OPF,
               "OEBPS/nav.xhtml": NAV, "OEBPS/toc.ncx": NCX, "OEBPS/text/ch1.xhtml": CH1,
               "OEBPS/text/ch 2.xhtml": CH2, "OEBPS/images/x.png": png(), "OEBPS/style.css": b"p { margin: 0 }"}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            if name != skip:
                z.writestr(name, data, zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED)
    return path


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"
SKIP = {X + "pre", X + "code", X + "script", X + "style"}


def text_nodes(root: etree._Element) -> list[str]:
    """Every non-blank text node in the body outside code and note references."""
    def skipped(el: etree._Element) -> bool:
        return any(a.tag in SKIP or a.get(EPUB_TYPE) == "noteref" for a in (el, *el.iterancestors()))

    out = []
    for el in root.find(f"{X}body").iter():
        if el.text and el.text.strip() and not skipped(el):
            out.append(el.text)
        if el.tail and el.tail.strip() and el.getparent().tag != X + "html" and not skipped(el.getparent()):
            out.append(el.tail)
    return out


@pytest.fixture
def epub(tmp_path: Path) -> Path:
    return write_epub(tmp_path / "book.epub")


def test_round_trip_translates_the_book_and_keeps_the_package(epub: Path, tmp_path: Path) -> None:
    before = epub.read_bytes()
    doc = open_document(epub)
    out = tmp_path / "out.epub"
    doc.save(out, fake_translate_all(doc.blocks))
    assert epub.read_bytes() == before
    src, dst = parts(epub), parts(out)
    with zipfile.ZipFile(out) as z:
        first = z.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
    changed = {"OEBPS/content.opf", "OEBPS/nav.xhtml", "OEBPS/toc.ncx", "OEBPS/text/ch1.xhtml",
               "OEBPS/text/ch 2.xhtml"}
    assert set(src) == set(dst)
    for name in set(src) - changed:
        assert src[name] == dst[name], name  # image, CSS, container: byte-identical
    for name in ("OEBPS/text/ch1.xhtml", "OEBPS/text/ch 2.xhtml", "OEBPS/nav.xhtml"):
        old, new = etree.fromstring(src[name]), etree.fromstring(dst[name])
        for tag in ("p", "li", "td", "th", "table", "h1", "img", "a", "b", "i", "br", "code", "pre", "figcaption"):
            assert len(old.findall(f".//{X}{tag}")) == len(new.findall(f".//{X}{tag}")), (name, tag)
        assert sorted((a.get("href"), a.text.startswith(MARK)) for a in new.iter(X + "a")) == sorted(
            (a.get("href"), a.text != "1") for a in old.iter(X + "a"))  # links moved, their targets kept
        texts = text_nodes(new)
        assert texts and all(t.startswith(MARK) for t in texts), [t for t in texts if not t.startswith(MARK)]
        assert new.find(f".//{X}title").text.startswith(MARK)
        assert dst[name].split(b"<html")[0] == src[name].split(b"<html")[0]  # declaration and doctype as they were
    ch1 = etree.fromstring(dst["OEBPS/text/ch1.xhtml"])
    assert ch1.find(f".//{X}b").text == MARK + "DARK NIGHT" and ch1.find(f".//{X}i").text == MARK + "A QUIET STREET"
    p = ch1.find(f".//{X}p")
    assert [etree.QName(c).localname for c in p] == ["a", "code", "a", "i", "b"]  # reversed, each in its element
    assert p[0].text == "1" and p[1].text == "ls -l"  # the note reference and inline code are verbatim
    assert ch1.find(f".//{X}pre").text == "x = 1\ny = 2"
    assert ch1.find(f".//{X}img").get("alt") == MARK + "A RED SQUARE"
    assert ch1.find(f".//{X}img").get("src") == "../images/x.png"
    assert b'xmlns="http://www.w3.org/1999/xhtml"' in dst["OEBPS/text/ch1.xhtml"] and b"<html:" not in dst[
        "OEBPS/text/ch1.xhtml"]
    opf = etree.fromstring(dst["OEBPS/content.opf"])
    assert opf.find(".//dc:title", NS).text == MARK + "THE BOOK TITLE"
    assert dst["OEBPS/content.opf"].replace("ÜT THE BOOK TITLE".encode(), b"The book title") == OPF
    ncx = etree.fromstring(dst["OEBPS/toc.ncx"])
    assert [t.text for t in ncx.iter(f"{{{NS['ncx']}}}text")] == [MARK + "THE BOOK TITLE", MARK + "THE FIRST CHAPTER"]
    nav = etree.fromstring(dst["OEBPS/nav.xhtml"])
    assert [a.text for a in nav.iter(X + "a")] == [MARK + "THE FIRST CHAPTER", MARK + "THE SECOND CHAPTER"]


def test_blocks_follow_the_spine(epub: Path) -> None:
    doc = open_document(epub)
    texts = [b.text for b in doc.blocks]
    assert texts[0] == "The book title"
    assert texts.index("Chapter one") < texts.index("Chapter two") < texts.index("Table of contents")
    assert [b.text for b in doc.blocks if b.verbatim] == ["x = 1\ny = 2"]
    assert any(b.where.startswith("OEBPS/text/ch 2.xhtml") for b in doc.blocks)


def test_untranslated_round_trip_keeps_the_text(epub: Path, tmp_path: Path) -> None:
    doc = open_document(epub)
    doc.save(tmp_path / "same.epub", [untranslated(b) for b in doc.blocks])
    again = open_document(tmp_path / "same.epub")
    assert [b.runs for b in again.blocks] == [b.runs for b in doc.blocks]
    assert parts(tmp_path / "same.epub")["OEBPS/content.opf"] == OPF


def test_broken_book_is_refused_in_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"book\.epub is not a valid EPUB: it has no OEBPS/text/ch1\.xhtml"):
        open_document(write_epub(tmp_path / "book.epub", skip="OEBPS/text/ch1.xhtml"))
    with pytest.raises(DocumentError, match=r"nocontainer\.epub is not a valid EPUB: it has no META-INF"):
        open_document(write_epub(tmp_path / "nocontainer.epub", skip="META-INF/container.xml"))


def test_opened_through_the_registry(epub: Path) -> None:
    from nmt_desktop.core.documents import formats

    doc = formats.open_document(epub)  # the safety checks pass a well-formed file through to this module
    assert [b.text for b in doc.blocks] == [b.text for b in open_document(epub).blocks]
