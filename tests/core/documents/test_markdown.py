"""Markdown adapter: a file with every feature round-tripped through the fake (run-reversing) translation
and through `untranslated` (which gives back the original bytes)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from markdown_it import MarkdownIt

from nmt_desktop.core.documents.blocks import Block, TranslatedRun, untranslated
from nmt_desktop.core.documents.formats import open_document
from tests.core.documents.fake_translation import MARK, fake_translate_all

FRONT = "---\ntitle: Front **matter**\n---\n"
FENCE = "```python\ndef f(x):\n    return x * 2  # **not** bold\n```\n"
SOURCE = FRONT + """
# Title with *emphasis* ##

Some **bold** word mid-sentence and _italic_ text with [a link](https://example.org/a "The title")
and `inline code`, ~~struck~~ words, <https://auto.example> and ``a ` tick``.
An image ![a red square](img/red.png 'Red') ends it.

Setext heading
==============

- item with __strong__
  continued on a second line
- second item with a [reference link][ref]
  1. nested numbered item

> A quoted *paragraph*
> over two lines.

| Fruit | Cost \\| each |
|-------|-------------|
| apple | `1.00`      |
|       | cheap       |

""" + FENCE + """
    indented code stays

<div class="note">an html block</div>

[ref]: https://example.org/ref "Ref title"
"""


def write(tmp_path: Path, text: str, name: str = "doc.md") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def kinds(block: Block) -> Counter:
    """The markup kinds of a block's runs (strong, em, s, link, code, image)."""
    return Counter(entry[0] for run in block.runs if isinstance(run.style, tuple) for entry in run.style)


def hrefs(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    return sorted(child.attrs.get("href") or child.attrs.get("src") for token in tokens
                  for child in token.children or [] if child.type in ("link_open", "image"))


def test_blocks(tmp_path):
    document = open_document(write(tmp_path, SOURCE))
    wheres = [re.sub(r"line \d+ ", "", block.where) for block in document.blocks]
    assert wheres == ["(heading)", "(paragraph)", "(paragraph), link title", "(paragraph), image title",
                      "(paragraph), image alt text", "(heading)", "(paragraph)", "(paragraph)",
                      "(paragraph), link title", "(paragraph)", "(paragraph)", "(table cell)", "(table cell)",
                      "(table cell)", "(table cell)", "(table cell)", "(fence)", "(code block)", "(html block)"]
    paragraph = document.blocks[1]
    assert [(run.text, run.verbatim) for run in paragraph.runs[:4]] == [
        ("Some ", False), ("bold", False), (" word mid-sentence and ", False), ("italic", False)]
    assert kinds(paragraph) == Counter(strong=1, em=1, link=1, code=2, s=1, image=1)
    assert document.blocks[4].text == "a red square"
    assert document.blocks[12].text == "Cost | each"
    assert document.blocks[16].verbatim and document.blocks[16].text == FENCE.split("\n", 1)[1][:-4]
    assert not any("matter" in block.text for block in document.blocks)


def test_fake_translation_round_trip(tmp_path):
    document = open_document(write(tmp_path, SOURCE))
    out = tmp_path / "out.md"
    document.save(out, fake_translate_all(document.blocks))
    text = out.read_text(encoding="utf-8")
    again = open_document(out)
    assert len(again.blocks) == len(document.blocks)
    # a host block's link titles and alt texts follow its links, which the translation reordered
    assert Counter(re.sub(r"line \d+ ", "", b.where) for b in again.blocks) == \
        Counter(re.sub(r"line \d+ ", "", b.where) for b in document.blocks)
    hosts = [(before, after) for before, after in zip(document.blocks, again.blocks) if "," not in before.where]
    assert len(hosts) == 15
    for before, after in hosts:
        assert kinds(before) == kinds(after), after.where
        if before.verbatim:
            assert after.text == before.text
            continue
        for run in after.runs:  # every text translated, inline code untouched
            assert run.verbatim or not run.text.strip() or run.text.strip().startswith(MARK.strip()), run
    assert text.startswith(FRONT) and FENCE in text and "    indented code stays\n" in text
    assert '<div class="note">an html block</div>\n' in text
    assert text.endswith('[ref]: https://example.org/ref "Ref title"\n')
    assert hrefs(text) == hrefs(SOURCE)
    assert "**ÜT BOLD**" in text and "`inline code`" in text and "``a ` tick``" in text
    assert '[ÜT A LINK](https://example.org/a "ÜT THE TITLE")' in text
    assert "![ÜT A RED SQUARE](img/red.png 'ÜT RED')" in text
    assert "| ÜT FRUIT | ÜT COST \\| EACH |" in text and "| ÜT APPLE | `1.00`      |" in text
    assert "# *ÜT EMPHASIS*ÜT TITLE WITH ##\n" in text
    assert "  1. ÜT NESTED NUMBERED ITEM\n" in text and "> ÜT " in text
    assert "ÜT SETEXT HEADING\n==============\n" in text


def test_same_markup_characters_in_order(tmp_path):
    document = open_document(write(tmp_path, "A __strong__ and _em_ and *star* word.\n"))
    out = tmp_path / "out.md"
    german = ["Ein ", "starkes", " und ", "em", " und ", "Stern", " Wort."]
    order = [0, 5, 2, 1, 4, 3, 6]  # "Ein *Stern* und __starkes__ und _em_ Wort."
    document.save(out, [[TranslatedRun(i, german[i]) for i in order]])
    assert out.read_text(encoding="utf-8") == "Ein *Stern* und __starkes__ und _em_ Wort.\n"
    document.save(out, [[TranslatedRun(i, german[i].strip()) for i in order]])  # `_` inside words: `*`
    assert out.read_text(encoding="utf-8") == "Ein*Stern*und**starkes**und*em*Wort.\n"


def test_untranslated_gives_the_original_bytes(tmp_path):
    for name, text in (("lf.md", SOURCE), ("crlf.md", SOURCE.replace("\n", "\r\n"))):
        document = open_document(write(tmp_path, text, name))
        out = tmp_path / f"out-{name}"
        document.save(out, [untranslated(block) for block in document.blocks])
        assert out.read_bytes() == text.encode("utf-8")


def test_multi_line_paragraph_is_joined_and_line_ends_kept(tmp_path):
    text = "Intro line one\nline two\r\n\r\nNext\r\n"
    document = open_document(write(tmp_path, text))
    out = tmp_path / "out.md"
    document.save(out, fake_translate_all(document.blocks))
    assert out.read_bytes() == "ÜT INTRO LINE ONE LINE TWO\r\n\r\nÜT NEXT\r\n".encode()


def test_translated_text_is_escaped(tmp_path):
    document = open_document(write(tmp_path, "- a *b* c\n"))
    out = tmp_path / "out.md"
    document.save(out, [[TranslatedRun(i, text) for i, text in enumerate(["1. x_y ", "[*]", " # <b>"])]])
    assert out.read_text(encoding="utf-8") == "- 1\\. x\\_y *\\[\\*\\]* # \\<b>\n"
    assert open_document(out).blocks[0].text == "1. x_y [*] # <b>"


def test_awkward_sources(tmp_path):
    """Lazy lines, nested containers, closing hashes, tables in quotes, link forms: located and rewritten."""
    cases = {
        "Lazy\ncontinuation\n> quote\nlazy line\n": "ÜT LAZY CONTINUATION\n> ÜT QUOTE LAZY LINE\n",
        "- a\n\n  > quote in item\n  > line2\n": "- ÜT A\n\n  > ÜT QUOTE IN ITEM LINE2\n",
        "## Closing ###   \n": "## ÜT CLOSING ###   \n",
        "> | a |\n> |---|\n> | b |\n": "> | ÜT A |\n> |---|\n> | ÜT B |\n",
        '[x](</my url> "t") [y](z (paren title))\n': '[ÜT Y](z (ÜT PAREN TITLE)) [ÜT X](</my url> "ÜT T")\n',
        "[![img](a.png)](http://b)\n": "[![ÜT IMG](a.png)](http://b)\n",
        "Title\n---\n": "ÜT TITLE\n---\n",
    }
    for number, (source, expected) in enumerate(cases.items()):
        document = open_document(write(tmp_path, source, f"case{number}.md"))
        assert not any(block.verbatim for block in document.blocks), source
        out = tmp_path / f"out{number}.md"
        document.save(out, fake_translate_all(document.blocks))
        assert out.read_text(encoding="utf-8") == expected


def test_inline_html_tags_enclose_their_words_wherever_the_translation_moves_them(tmp_path):
    """Raw inline HTML that opens and closes in one paragraph (<em>, <dfn title>, <abbr>) is a look, like
    **strong**: a reordered sentence keeps each element around its own words and inside the strong around it
    (fastapi's README lost a strong and an em when its tags moved as runs of their own); an unpaired tag
    (<br>, a lone <img>) is still a verbatim run."""
    source = ('A very easy **<dfn title="components, services">Dependency Injection</dfn>** system.\n\n'
              "Both paths take <em>operations</em> and a <abbr title=\"Command Line\">CLI</abbr> here.<br>\n")
    document = open_document(write(tmp_path, source))
    first, second = document.blocks
    assert [r.text for r in first.runs] == ["A very easy ", "Dependency Injection", " system."]
    assert [r.verbatim for r in second.runs] == [False, False, False, False, False, True]
    out = tmp_path / "out.md"
    document.save(out, fake_translate_all(document.blocks))
    text = out.read_text(encoding="utf-8")
    assert text == ('ÜT SYSTEM.**<dfn title="components, services">ÜT DEPENDENCY INJECTION</dfn>** ÜT A VERY EASY\n\n'
                    '<br>ÜT HERE.<abbr title="Command Line">ÜT CLI</abbr>ÜT AND A <em>ÜT OPERATIONS</em>'
                    "ÜT BOTH PATHS TAKE\n")
    assert [kinds(b) for b in open_document(out).blocks] == [kinds(b) for b in document.blocks]


def test_emphasis_the_translation_puts_against_a_word_still_reads_as_emphasis(tmp_path):
    """A delimiter between punctuation inside and a word outside is no emphasis in CommonMark
    (`*"In a hurry?"*word`): it gets a space outside; `_` against a word becomes `*`."""
    document = open_document(write(tmp_path, 'Check the _"In a hurry?"_ section and **(this)** part.\n'))
    out = tmp_path / "out.md"
    document.save(out, fake_translate_all(document.blocks))
    text = out.read_text(encoding="utf-8")
    assert text == 'ÜT PART.**ÜT (THIS)** ÜT SECTION AND *ÜT "IN A HURRY?"* ÜT CHECK THE\n'
    assert kinds(open_document(out).blocks[0]) == kinds(document.blocks[0]) == Counter({"em": 1, "strong": 1})


def test_written_back_in_the_source_encoding_with_its_bom(tmp_path):
    """A README saved by Notepad (UTF-8 with a BOM) or an old editor (windows-1252, UTF-16) comes back in
    the same encoding: the Markdown adapter wrote UTF-8 without a BOM whatever it read."""
    text = "# Café\n\nA **naïve** façade, 10 €.\n"
    for name, data in (("bom.md", b"\xef\xbb\xbf" + text.encode("utf-8")),
                       ("cp1252.md", text.encode("cp1252")),
                       ("utf16.md", b"\xff\xfe" + text.encode("utf-16-le"))):
        path = tmp_path / name
        path.write_bytes(data)
        document = open_document(path)
        assert document.blocks[0].text == "Café"
        out = tmp_path / f"out-{name}"
        document.save(out, [untranslated(block) for block in document.blocks])
        assert out.read_bytes() == data, name
        document.save(out, [[TranslatedRun(t.index, t.text.replace("A ", "Une ")) for t in untranslated(b)]
                            for b in document.blocks])
        assert out.read_bytes() == data.replace("A ".encode("utf-16-le") if "16" in name else b"A ",
                                                "Une ".encode("utf-16-le") if "16" in name else b"Une "), name


def test_two_emphases_the_translation_puts_side_by_side_stay_two(tmp_path):
    """"on par with **NodeJS** and **Go**": a translation that puts the two strong runs next to each other
    wrote one strong element around both (the README lost a strong); each is its own element now."""
    document = open_document(write(tmp_path, "On par with **NodeJS** and **Go** today.\n"))
    assert [r.text for r in document.blocks[0].runs] == ["On par with ", "NodeJS", " and ", "Go", " today."]
    out = tmp_path / "out.md"
    for runs, expected in (([(0, "Auf Augenhöhe mit "), (1, "NodeJS"), (3, "Go"), (2, ""), (4, " heute.")],
                            "Auf Augenhöhe mit **NodeJS** **Go** heute.\n"),
                           ([(0, "Wie "), (1, "NodeJS "), (3, "Go"), (2, " und"), (4, " heute.")],
                            "Wie **NodeJS** **Go** und heute.\n")):
        document.save(out, [[TranslatedRun(i, text) for i, text in runs]])
        assert out.read_text(encoding="utf-8") == expected
        assert kinds(open_document(out).blocks[0]) == Counter({"strong": 2})


def test_an_emphasis_the_translation_splits_is_written_once_around_both_parts(tmp_path):
    """The README's quotes, `"_I'm using **FastAPI** a ton these days._"`: the model's words for the plain quote
    marks landed between the emphasis' runs, which came back as three `_..._` (em 13 -> 19); an emphasis is now
    written once, around what lies between its parts."""
    document = open_document(write(tmp_path, "\"_I'm using **FastAPI** a ton._\"\n"))
    assert [r.text for r in document.blocks[0].runs] == ['"', "I'm using ", "FastAPI", " a ton.", '"']
    out = tmp_path / "out.md"
    german = {0: "„", 1: "Ich benutze ", 2: "FastAPI", 3: " sehr oft.", 4: "“ sagt er "}
    document.save(out, [[TranslatedRun(i, german[i]) for i in (0, 1, 4, 2, 3)]])
    text = out.read_text(encoding="utf-8")
    assert text == "„_Ich benutze “ sagt er **FastAPI** sehr oft._\n"
    assert kinds(open_document(out).blocks[0]) == Counter({"em": 3, "strong": 1})  # runs in the em, not ems
    tokens = MarkdownIt("commonmark").parse(text)[1].children
    assert [t.type for t in tokens].count("em_open") == 1
