"""Issue 42: every inline element of a source (sub/sup, links, emphasis, abbreviations, times, code spans,
footnote references) is still there, with text, after a translation by the bundled en-de model, and the
translated document says it is German. Small files shaped like the real ones of the issue."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import lxml.html
from lxml import etree

from nmt_desktop.core.documents.formats import open_document
from nmt_desktop.core.documents.translate_document import save_translation, translate_document

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Water</title></head><body>
<p>Water is H<sub>2</sub>O and a mole has about 6 x 10<sup>23</sup> particles.</p>
<p>The <abbr title="World Health Organization">WHO</abbr> met on <time datetime="2020-03-11">11 March 2020</time> \
in <i>Geneva</i>.</p>
<p>This is <em>really</em> important, see <a href="https://example.org/a">the report</a> for details.</p>
<p>Read the <a href="https://example.org/guide">installation guide</a> before you start.</p>
</body></html>
"""

INLINE = ("sub", "sup", "abbr", "time", "i", "em", "a")


def translated(translator, source: Path) -> Path:
    document = open_document(source)
    out = source.with_name(source.stem + ".de" + source.suffix)
    return save_translation(translate_document(translator, document), out)


def elements(root: etree._Element, local: str) -> list[etree._Element]:
    return [el for el in root.iter() if isinstance(el.tag, str) and etree.QName(el).localname == local]


def test_html_keeps_every_inline_element_with_text_and_says_it_is_german(en_de, tmp_path: Path) -> None:
    source = tmp_path / "page.html"
    source.write_text(PAGE, encoding="utf-8")
    out = lxml.html.fromstring(translated(en_de, source).read_bytes())
    before = lxml.html.fromstring(PAGE.encode())
    for tag in INLINE:
        kept = elements(out, tag)
        assert len(kept) == len(elements(before, tag)), tag
        assert all("".join(el.itertext()).strip() for el in kept), tag
    assert out.find(".//sub").text == "2" and out.find(".//sup").text == "23"
    assert [a.get("href") for a in out.iter("a")] == ["https://example.org/a", "https://example.org/guide"]
    assert out.get("lang") == "de"


from tests.core.documents.test_epub import CONTAINER  # noqa: E402 - the same container.xml

OPF = b"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:1</dc:identifier>
<dc:title>The book</dc:title><dc:language>en</dc:language></metadata>
<manifest><item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/></manifest>
<spine><itemref idref="c1"/></spine>
</package>"""

CHAPTER = b"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">
<head><title>Chapter one</title></head>
<body>
<p>The project lives at <a href="https://example.org/project">https://example.org/project</a> since 2010.</p>
<p>Light travels at 3 x 10<sup>8</sup> metres per second.<sup><a epub:type="noteref" href="#fn1" id="r1">1</a></sup></p>
<p>Read <a href="ch1.xhtml#fn1">the notes</a> at the end of the book.</p>
<aside epub:type="footnote" id="fn1"><p>The speed of light in a vacuum.</p></aside>
</body></html>"""


def test_epub_keeps_links_superscripts_and_note_references(en_de, tmp_path: Path) -> None:
    source = tmp_path / "book.epub"
    with zipfile.ZipFile(source, "w") as z:
        z.writestr("mimetype", b"application/epub+zip", zipfile.ZIP_STORED)
        for name, data in (("META-INF/container.xml", CONTAINER), ("OEBPS/content.opf", OPF),
                           ("OEBPS/ch1.xhtml", CHAPTER)):
            z.writestr(name, data, zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(translated(en_de, source)) as z:
        chapter = etree.fromstring(z.read("OEBPS/ch1.xhtml"))
        opf = etree.fromstring(z.read("OEBPS/content.opf"))
    links = elements(chapter, "a")
    assert [a.get("href") for a in links] == ["https://example.org/project", "#fn1", "ch1.xhtml#fn1"]
    assert links[0].text == "https://example.org/project"
    assert all("".join(a.itertext()).strip() for a in links)
    sups = elements(chapter, "sup")
    assert "".join(sups[0].itertext()) == "8" and "".join(sups[1].itertext()) == "1"
    assert chapter.get("lang") == "de" and chapter.get("{http://www.w3.org/XML/1998/namespace}lang") == "de"
    assert [el.text for el in elements(opf, "language")] == ["de"]


ODF = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
    "dc": "http://purl.org/dc/elements/1.1/",
    "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
}
DECL = " ".join(f'xmlns:{k}="{v}"' for k, v in ODF.items())


def link(url: str, text: str) -> str:
    return f'<text:a xlink:type="simple" xlink:href="{url}" text:style-name="Internet_20_link">{text}</text:a>'


def note(n: int, text: str) -> str:
    return (f'<text:note text:id="ftn{n}" text:note-class="footnote"><text:note-citation>{n}</text:note-citation>'
            f'<text:note-body><text:p text:style-name="Footnote">{text}</text:p></text:note-body></text:note>')


CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {DECL} office:version="1.3">
<office:automatic-styles><style:style style:name="P1" style:family="paragraph">\
<style:text-properties fo:language="en" fo:country="US"/></style:style>\
<style:style style:name="T1" style:family="text"><style:text-properties style:text-position="super 58%"/>\
</style:style><style:style style:name="T2" style:family="text"><style:text-properties fo:language="zxx" \
fo:country="none"/></style:style></office:automatic-styles>
<office:body><office:text>
<text:p text:style-name="P1">See {link("https://example.org/a", "the first report")} and \
{link("https://example.org/b", "the second one")} for details.{note(1, "Both are online.")}</text:p>
<text:p>The results are in {link("https://example.org/c", "our paper")}, which cites \
{link("https://example.org/d", "an older study")}.</text:p>
<text:p>Visit {link("https://example.org/e", "the website")} or write to \
{link("mailto:team@example.org", "the team")}.{note(2, "Answers take a week.")}</text:p>
<text:p>A mole has 6 x 10<text:span text:style-name="T1">23</text:span> particles, says \
{link("https://example.org/f", "the textbook")}.</text:p>
<text:p>Run <text:span text:style-name="T2">make</text:span> in {link("https://example.org/g", "the folder")}.</text:p>
</office:text></office:body></office:document-content>"""

STYLES = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles {DECL} office:version="1.3"><office:styles><style:default-style style:family="paragraph">\
<style:text-properties fo:language="en" fo:country="US"/></style:default-style></office:styles>\
</office:document-styles>"""

META = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta {DECL} office:version="1.3"><office:meta><dc:language>en-US</dc:language>\
</office:meta></office:document-meta>"""


def test_odt_keeps_every_link_and_footnote_and_says_it_is_german(en_de, tmp_path: Path) -> None:
    source = tmp_path / "report.odt"
    with zipfile.ZipFile(source, "w") as z:
        z.writestr("mimetype", b"application/vnd.oasis.opendocument.text", zipfile.ZIP_STORED)
        for name, data in (("content.xml", CONTENT), ("styles.xml", STYLES), ("meta.xml", META)):
            z.writestr(name, data.encode(), zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(translated(en_de, source)) as z:
        content, styles, meta = (etree.fromstring(z.read(n)) for n in ("content.xml", "styles.xml", "meta.xml"))
    links = elements(content, "a")
    assert [a.get(f"{{{ODF['xlink']}}}href") for a in links] == re.findall(r'xlink:href="([^"]+)"', CONTENT)
    assert all("".join(a.itertext()).strip() for a in links)
    assert [c.text for c in elements(content, "note-citation")] == ["1", "2"]
    spans = {s.get(f"{{{ODF['text']}}}style-name"): "".join(s.itertext()) for s in elements(content, "span")}
    assert spans["T1"] == "23" and spans["T2"].strip()
    fo = f"{{{ODF['fo']}}}"
    languages = [(p.get(fo + "language"), p.get(fo + "country")) for root in (content, styles)
                 for p in elements(root, "text-properties") if p.get(fo + "language")]
    assert sorted(languages) == [("de", "DE"), ("de", "DE"), ("zxx", "none")]
    assert [el.text for el in elements(meta, "language")] == ["de"]


README = """# Setup

Install it with `apt`, `yum` or `dnf` on Linux, then run `make`, `make test` and `make install`.

See [the guide](https://example.org/guide) and the [FAQ][faq] or visit <https://example.org>.

Questions go to [the forum](https://example.org/forum), bugs to [the tracker](https://example.org/bugs).

[faq]: https://example.org/faq
"""


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_markdown_keeps_code_spans_apart_and_every_link(en_de, tmp_path: Path) -> None:
    source = tmp_path / "README.md"
    source.write_text(README, encoding="utf-8")
    out = translated(en_de, source).read_text(encoding="utf-8")
    assert "``" not in out
    assert sorted(code_spans(out)) == sorted(code_spans(README))
    for url in ("https://example.org/guide", "https://example.org/faq", "<https://example.org>",
                "https://example.org/forum", "https://example.org/bugs"):
        assert url in out
    assert len(re.findall(r"\[[^\]]+\]\(https://", out)) == 4  # every link has words


MARKED_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Door</title></head><body>
<p>The old man opened the door<img src="door.png" alt=""> and the dog ran into the garden.</p>
<p>I like the <b>red</b> car<a id="cars"></a> but my brother likes the blue one.</p>
</body></html>
"""


def test_a_marker_without_text_lands_after_the_translation_of_its_word(en_de, tmp_path: Path) -> None:
    """An inline image, an empty anchor or an ODF footnote after a word, with more text after it: the marker
    went with the plain text before it, which got the whole translation (one look), so it ended the sentence
    (or, beside a bold word, started it). That text is a look of its own now, aligned like a bold word."""
    source = tmp_path / "door.html"
    source.write_text(MARKED_PAGE, encoding="utf-8")
    first, second = lxml.html.fromstring(translated(en_de, source).read_bytes()).iter("p")
    first, second = (lxml.html.tostring(p, encoding=str) for p in (first, second))
    assert re.search(r"Tür<img [^>]*>[^<]*Hund", first), first
    assert re.search(r"Wagen<a id=\"cars\"></a>[^<]*Bruder", second), second
    odt = tmp_path / "door.odt"
    body = (f'<text:p>The old man opened the door{note(1, "It was old.")} and the dog ran into the garden.</text:p>')
    with zipfile.ZipFile(odt, "w") as z:
        z.writestr("mimetype", b"application/vnd.oasis.opendocument.text", zipfile.ZIP_STORED)
        z.writestr("content.xml", CONTENT.split("<office:body>")[0] + f"<office:body><office:text>{body}"
                   "</office:text></office:body></office:document-content>")
    with zipfile.ZipFile(translated(en_de, odt)) as z:
        paragraph = elements(etree.fromstring(z.read("content.xml")), "p")[0]
    footnote = next(el for el in paragraph if etree.QName(el).localname == "note")
    assert (paragraph.text or "").rstrip().endswith("Tür") and "Hund" in (footnote.tail or ""), \
        etree.tostring(paragraph, encoding=str)
