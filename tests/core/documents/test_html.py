"""HTML adapter: a page with every feature, round-tripped through the fake (run-reversing) translation."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from lxml import etree

from nmt_desktop.core.documents.blocks import DocumentError, untranslated
from nmt_desktop.core.documents.formats.html import open_document
from tests.core.documents.fake_translation import MARK, fake_translate_all

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>The test page</title>
<meta name="description" content="A page about testing">
<style>p { color: red }</style><script>var s = "<p>not text</p>";</script></head>
<body>
<h1 title="main heading">Welcome home</h1>
<p>Start with a <b>bold word</b> and <i>an italic phrase</i> mid-sentence, see <a href="https://example.org/a">the
link</a>, run <code>make all</code> now.<br>Second line <img src="x.png" alt="a red square"> done.</p>
<pre><code>def f():
    return 1</code></pre>
<div>Loose div text <p>a nested paragraph</p> more loose text</div>
<ul><li>first item <ul><li>nested item</li></ul></li><li>second <strong>strong</strong> item</li></ul>
<table><caption>Prices</caption><tr><th>Fruit</th><th>Cost</th></tr>
<tr><td>apple <em>green</em></td><td>cheap</td></tr></table>
<dl><dt>term</dt><dd>definition of <abbr title="HyperText Markup Language">HTML</abbr></dd></dl>
<figure><img src="y.png" alt="a chart"><figcaption>A chart caption</figcaption></figure>
<blockquote>A quoted text</blockquote>
<form><label>Your name</label><input placeholder="type here"><button>Send it</button>
<select><option>Option one</option></select></form>
<details><summary>More info</summary><p>hidden text</p></details>
<p>Press <kbd>Ctrl</kbd> to <a href="/b"><b>go</b> there</a>.</p>
</body></html>
"""

SKIP = {"script", "style", "pre", "code", "kbd", "samp", "var"}


def text_nodes(root: etree._Element) -> list[tuple[etree._Element, str]]:
    """(owning element, text) for every text node outside script/style/code."""
    out = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        if el.text and not any(a.tag in SKIP for a in (el, *el.iterancestors())):
            out.append((el, el.text))
        parent = el.getparent()
        if el.tail and parent is not None and not any(a.tag in SKIP for a in (parent, *parent.iterancestors())):
            out.append((parent, el.tail))
    return out


def load(path: Path) -> etree._Element:
    return lxml.html.fromstring(path.read_bytes())


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "page.html"
    path.write_bytes(PAGE.encode("utf-8"))
    return path


def test_round_trip_translates_every_text_and_keeps_structure(page: Path, tmp_path: Path) -> None:
    doc = open_document(page)
    out = tmp_path / "out.html"
    doc.save(out, fake_translate_all(doc.blocks))
    assert page.read_bytes() == PAGE.encode("utf-8")  # the input is never touched
    src, dst = load(page), load(out)
    for tag in ("p", "li", "td", "th", "tr", "table", "h1", "ul", "img", "br", "a", "b", "i", "code", "pre",
                "option", "dd", "dt", "figcaption", "caption", "label", "button", "summary", "div"):
        assert len(src.findall(f".//{tag}")) == len(dst.findall(f".//{tag}")), tag
    nodes = [(el.tag, t) for el, t in text_nodes(dst) if t.strip()]
    assert nodes and all(t.startswith(MARK) for _, t in nodes), [n for n in nodes if not n[1].startswith(MARK)]
    # runs move (the fake reverses them) but stay in their formatting
    assert dst.find(".//b").text == MARK + "BOLD WORD"
    assert dst.find(".//i").text == MARK + "AN ITALIC PHRASE"
    first_p = dst.find(".//p")  # reversed on each side of its <br>, which stays between the two lines
    assert first_p.text.startswith(MARK + " NOW.") and first_p.find("br").tail == MARK + " DONE." + MARK + "SECOND LINE "
    assert [c.tag for c in first_p] == ["code", "a", "i", "b", "br", "img"]
    assert [a.get("href") for a in dst.iter("a")] == [a.get("href") for a in src.iter("a")]
    nested = dst.findall(".//a")[1]
    assert nested.text == MARK + " THERE" and nested.find("b").text == MARK + "GO"  # one link around both
    # verbatim: code block, inline code, kbd; never read: script, style
    for tag in ("pre", "code", "kbd", "script", "style"):
        assert [etree.tostring(e, with_tail=False) for e in src.iter(tag)] == [
            etree.tostring(e, with_tail=False) for e in dst.iter(tag)]
    # attribute texts
    assert [i.get("alt") for i in dst.iter("img")] == [MARK + "A RED SQUARE", MARK + "A CHART"]
    assert [i.get("src") for i in dst.iter("img")] == ["x.png", "y.png"]
    assert dst.find(".//h1").get("title") == MARK + "MAIN HEADING"
    assert dst.find(".//abbr").get("title") == MARK + "HYPERTEXT MARKUP LANGUAGE"  # on a re-created element
    assert dst.find(".//input").get("placeholder") == MARK + "TYPE HERE"
    assert dst.find(".//meta[@name='description']").get("content") == MARK + "A PAGE ABOUT TESTING"
    assert dst.find(".//title").text == MARK + "THE TEST PAGE"
    # the div's direct text is translated around its nested paragraph, which stays in place
    div = dst.find(".//div")
    assert div.text == MARK + "LOOSE DIV TEXT " and div[0].tag == "p" and div[0].tail == MARK + " MORE LOOSE TEXT"
    raw = out.read_bytes()
    assert raw.startswith(b"<!DOCTYPE html>") and b'<meta charset="utf-8">' in raw


def test_blocks_cover_the_page(page: Path) -> None:
    doc = open_document(page)
    texts = [b.text for b in doc.blocks]
    for expected in ("The test page", "A page about testing", "main heading", "Welcome home", "Loose div text ",
                     "nested item", "Prices", "Option one", "Your name", "Send it", "More info", "a red square"):
        assert expected in texts, expected
    assert not any("not text" in t or "color" in t for t in texts)
    code = [b for b in doc.blocks if b.verbatim]
    assert [b.text for b in code] == ["def f():\n    return 1"]
    first = next(b for b in doc.blocks if b.text.startswith("Start"))
    assert [r.style for r in first.runs if r.text == "bold word"] == [(("b", ()),)]
    assert [r.verbatim for r in first.runs if r.text == "make all"] == [True]


def test_untranslated_round_trip_keeps_the_text(page: Path, tmp_path: Path) -> None:
    doc = open_document(page)
    out = tmp_path / "same.html"
    doc.save(out, [untranslated(b) for b in doc.blocks])
    again = open_document(out)
    assert [b.text for b in again.blocks] == [b.text for b in doc.blocks]
    assert load(out).text_content() == load(page).text_content()
    doc.save(tmp_path / "twice.html", fake_translate_all(doc.blocks))  # a document saves more than once
    assert (tmp_path / "twice.html").read_bytes() != out.read_bytes()


def test_declared_charset_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "latin.htm"
    path.write_bytes('<html><head><meta charset="iso-8859-1"></head><body><p>café <b>crème</b></p></body></html>'
                     .encode("iso-8859-1"))
    doc = open_document(path)
    assert [b.text for b in doc.blocks] == ["café crème"]
    doc.save(tmp_path / "out.htm", fake_translate_all(doc.blocks))
    raw = (tmp_path / "out.htm").read_bytes()
    assert "ÜT CRÈME".encode("iso-8859-1") in raw and b'charset="iso-8859-1"' in raw


def test_utf8_bom_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "bom.html"
    path.write_bytes(b"\xef\xbb\xbf<!DOCTYPE html><html><body><p>caf\xc3\xa9</p></body></html>")
    doc = open_document(path)
    assert [b.text for b in doc.blocks] == ["café"]
    doc.save(tmp_path / "out.html", fake_translate_all(doc.blocks))
    assert (tmp_path / "out.html").read_bytes().startswith(b"\xef\xbb\xbf<!DOCTYPE html>")
    assert "ÜT CAFÉ".encode() in (tmp_path / "out.html").read_bytes()


def test_undeclared_non_utf8_is_read_as_windows_1252(tmp_path: Path) -> None:
    path = tmp_path / "latin.html"  # what a browser does with an undeclared Western page (issue 42)
    path.write_bytes("<p>café “crème”</p>".encode("cp1252"))
    assert [b.text for b in open_document(path).blocks] == ["café “crème”"]


def test_wrong_translation_shape_is_refused(page: Path, tmp_path: Path) -> None:
    doc = open_document(page)
    bad = fake_translate_all(doc.blocks)
    bad[3] = bad[3][1:]
    with pytest.raises(DocumentError, match="runs once"):
        doc.save(tmp_path / "x.html", bad)
    assert not (tmp_path / "x.html").exists()


def test_opened_through_the_registry(page: Path) -> None:
    from nmt_desktop.core.documents import formats

    doc = formats.open_document(page)  # the safety checks pass a well-formed file through to this module
    assert [b.text for b in doc.blocks] == [b.text for b in open_document(page).blocks]


WORD_PAGE = """<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><meta charset="utf-8"></head><body>
<p class=MsoNormal><span style='font-size:12.0pt'>Dear <b>reader</b>, welcome<o:p>&nbsp;</o:p></span></p>
<p class=MsoNormal><o:p>&nbsp;</o:p></p></body></html>"""


def test_a_word_exported_page_with_office_tags_translates(tmp_path: Path) -> None:
    """Word's <o:p> (read by the HTML parser as a tag named "o:p", which lxml will not create by name)
    crashed both the reading and the rebuilding of its paragraph (issue 42)."""
    source = tmp_path / "word.html"
    source.write_text(WORD_PAGE, encoding="utf-8")
    doc = open_document(source)
    assert [b.text.strip() for b in doc.blocks] == ["Dear reader, welcome"]
    out = tmp_path / "out.html"
    doc.save(out, fake_translate_all(doc.blocks))
    page = out.read_text(encoding="utf-8")
    assert page.count("<o:p>") == 2 and MARK + "READER" in page


def test_a_span_that_starts_and_ends_with_line_breaks_stays_one_span(tmp_path: Path) -> None:
    """tika's resume.html: a <span> opening with <br><br> after white space of its cell; the breaks went with
    that white space's run, so reordered runs split the span in two. They now lead the span's first words."""
    path = tmp_path / "mail.html"
    path.write_text('<html><head><meta charset="utf-8"></head><body><table><tr><td>\n  '
                    '<span class="n"><br><br>If you have ideas, please '
                    '<a href="/write">write to us</a>.<br><br></span>\n  <table><tr><td>x</td></tr></table>'
                    '</td></tr></table></body></html>', encoding="utf-8")
    document = open_document(path)
    out = tmp_path / "out.html"
    document.save(out, fake_translate_all(document.blocks))
    spans = load(out).findall(".//span")
    assert len(spans) == 1 and len(spans[0].findall("br")) == 4 and spans[0].find("a").get("href") == "/write"
    assert spans[0].text == MARK + "." and "".join(spans[0].itertext()).endswith(MARK + "IF YOU HAVE IDEAS, PLEASE ")


def test_the_lines_of_a_cell_are_blocks_of_their_own_and_never_glued(tmp_path: Path) -> None:
    """A <br> with no space around it ("Name<br>Address") gave the model "NameAddress"; each line is a block
    now and the <br> stays between them. A <br> inside a bold span does not cut it (the span would come back
    twice): it moves with its line's text, after a space, so "on" and "Sundays" are not glued either."""
    path = tmp_path / "cells.html"
    path.write_text('<html><head><meta charset="utf-8"></head><body><table><tr><td>John Smith<br>12 High Street'
                    '<br>London</td><td><b>Closed on<br>Sundays</b> today</td></tr></table></body></html>',
                    encoding="utf-8")
    document = open_document(path)
    assert [b.text for b in document.blocks] == ["John Smith", "12 High Street", "London", "Closed on Sundays today"]
    out = tmp_path / "out.html"
    document.save(out, fake_translate_all(document.blocks))
    first, second = load(out).iter("td")
    assert lxml.html.tostring(first, encoding=str) == (
        f"<td>{MARK}JOHN SMITH<br>{MARK}12 HIGH STREET<br>{MARK}LONDON</td>")
    assert len(second.findall("b")) == 1 and len(second.findall(".//br")) == 1


def test_an_element_whose_runs_the_translation_puts_apart_is_written_once(tmp_path: Path) -> None:
    """MDN's quotations page with the bundled model: "<strong>HTML <code>…</code> Element</strong>" came back as
    two <strong>s around the words on either side of "ist"; a second <time datetime> or a link with a second
    id is worse. The element now spans what lies between its parts."""
    from nmt_desktop.core.documents.blocks import TranslatedRun

    path = tmp_path / "quote.html"
    path.write_text('<html><head><meta charset="utf-8"></head><body><p>The <strong>HTML <code>&lt;q&gt;</code> '
                    'Element</strong> marks a quotation.</p></body></html>', encoding="utf-8")
    document = open_document(path)
    assert [r.text for r in document.blocks[0].runs] == ["The ", "HTML ", "<q>", " Element", " marks a quotation."]
    german = {0: "Das ", 1: "HTML", 4: " ist ein Zitat, sagt das ", 2: "<q>", 3: "-Element."}
    document.save(tmp_path / "out.html", [[TranslatedRun(i, german[i]) for i in (0, 1, 4, 2, 3)]])
    paragraph = load(tmp_path / "out.html").find(".//p")
    assert len(paragraph.findall(".//strong")) == 1 and len(paragraph.findall(".//code")) == 1
    assert "".join(paragraph.itertext()) == "Das HTML ist ein Zitat, sagt das <q>-Element."
    assert "".join(paragraph.find("strong").itertext()) == "HTML ist ein Zitat, sagt das <q>-Element."


def test_two_elements_the_translation_interleaves_are_each_written_once(tmp_path: Path) -> None:
    """MDN's dates with the bundled model: the runs of two <time>s interleaved (first, second, first, second)
    gave three <time>s; the first now holds the second whole."""
    from nmt_desktop.core.documents.blocks import TranslatedRun

    path = tmp_path / "dates.html"
    path.write_text('<html><head><meta charset="utf-8"></head><body><p><time datetime="2019-12-25">December 25'
                    '<sup>th</sup> 2019</time> and <time datetime="2019-11-02">November 2<sup>nd</sup> 2019</time>'
                    '</p></body></html>', encoding="utf-8")
    document = open_document(path)
    runs = document.blocks[0].runs
    assert [r.text for r in runs] == ["December 25", "th", " 2019", " and ", "November 2", "nd", " 2019"]
    order = [0, 4, 1, 5, 2, 3, 6]
    document.save(tmp_path / "out.html", [[TranslatedRun(i, runs[i].text) for i in order]])
    paragraph = load(tmp_path / "out.html").find(".//p")
    assert len(paragraph.findall(".//time")) == 2 and len(paragraph.findall(".//sup")) == 2
    assert [t.get("datetime") for t in paragraph.iter("time")] == ["2019-12-25", "2019-11-02"]
