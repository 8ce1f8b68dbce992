"""Markdown (.md), parsed with markdown-it-py (CommonMark with GFM tables and strikethrough).

Blocks: paragraphs, headings, list items' and blockquotes' paragraphs, table cells, then each image's
alt text and each link's title (after the block that holds them). Fenced and indented code and HTML
blocks are verbatim blocks; YAML front matter is not read at all. A block's runs follow its inline
markup: the style is the chain of open markup (strong, emphasis, strikethrough, a link with its
destination, and raw inline HTML that opens and closes in the paragraph: <em>, <dfn title="...">);
inline code, other inline HTML (<br>, a lone tag), images and autolinks are verbatim runs.

Saving rewrites only the source text of each translated block (markdown-it's line map, narrowed to the
text after the line's prefix: `#`, `- `, `1. `, `> `, indentation, a table cell between its pipes),
re-serialised in the translation's order with the markup characters the source used (`**` or `__`, `*`
or `_`, the same backticks, a link's destination and title quotes as written). Everything else stays
byte for byte, in the source's encoding (text_encoding.py, with its BOM), and so does a block that comes
back unchanged; `_` emphasis that a translation puts inside a word is written `*`, the only form
CommonMark reads there, a delimiter between punctuation and a word gets a space, and an emphasis whose
runs the translation puts apart is written once around what lies between them. Why joined: a translated paragraph
that spanned several source lines is written on one line (its soft and hard line breaks become
spaces), since the translation's words no longer fall on the source's line breaks. Reference links are
written back as inline links; a block whose source text cannot be located exactly is kept verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from nmt_desktop.core.documents.blocks import (
    Block,
    Run,
    TranslatedBlock,
    check_translated,
    untranslated,
)
from nmt_desktop.core.documents.formats.inline_tree import whole_elements
from nmt_desktop.core.documents.safety import read_decoded
from nmt_desktop.core.documents.text_encoding import TextEncoding

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_FRONT = re.compile(r"---[ \t]*$")
_FRONT_END = re.compile(r"(---|\.\.\.)[ \t]*$")
_PIPE = re.compile(r"(?<!\\)\|")
_ESCAPE = re.compile(r"([\\`*_\[\]~])|&(?=#?\w+;)|<(?=[A-Za-z/!?])")
_LEADER = re.compile(r"^(\d*)([#>+-]|(?<=\d)[.)])")  # what would start a heading, quote or list
_DESTINATION = re.compile(  # a link's "](destination "title")" as written
    r"\]\(\s*(<(?:[^<>\n\\]|\\.)*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)"
    r"(?:\s+(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?\s*\)", re.DOTALL)


@dataclass(frozen=True)
class Link:
    """A link or image as written: its destination, the block holding its title (or None) and the title's
    opening quote; `alt` is an image's alt-text block (None for a link or an empty alt)."""
    destination: str
    title: int | None
    quote: str = '"'
    alt: int | None = None


@dataclass
class Span:
    """Where a text block sits in the source (offsets into the text) and whether it is a table cell."""
    start: int
    end: int
    cell: bool = False


@dataclass
class MarkdownDocument:
    path: Path
    text: str
    blocks: list[Block] = field(default_factory=list)
    spans: dict[int, Span] = field(default_factory=dict)  # block index -> its source text
    links: list[Link] = field(default_factory=list)
    attached: dict[int, list[int]] = field(default_factory=dict)  # block -> its alt and title blocks
    encoding: TextEncoding = TextEncoding("utf-8")  # written back in it, with its BOM

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        if len(translated) != len(self.blocks):
            raise ValueError(f"{self.path.name}: {len(translated)} translated blocks for {len(self.blocks)} blocks")
        for block, runs in zip(self.blocks, translated):
            check_translated(block, runs)
        text = self.text
        for index, span in sorted(self.spans.items(), key=lambda item: -item[1].start):
            involved = [index, *self.attached.get(index, [])]
            if all(list(translated[i]) == untranslated(self.blocks[i]) for i in involved):
                continue
            new = _Writer(self, translated, span.cell).block(self.blocks[index], translated[index])
            text = text[:span.start] + new + text[span.end:]
        Path(path).write_bytes(self.encoding.encode(text))


class _Writer:
    """Re-serialises one block's translated runs as Markdown."""

    def __init__(self, document: MarkdownDocument, translated: Sequence[TranslatedBlock], cell: bool):
        self.document, self.translated, self.cell = document, translated, cell

    def plain(self, text: str) -> str:
        text = _ESCAPE.sub(lambda m: "\\" + m.group(1) if m.group(1) else "&amp;" if m.group() == "&" else "\\<",
                           " ".join(text.splitlines()))
        return text.replace("|", "\\|") if self.cell else text

    def block_text(self, index: int | None) -> str:
        return "".join(run.text for run in self.translated[index]) if index is not None else ""

    def opener(self, entry: tuple) -> str:
        return "[" if entry[0] == "link" else entry[1]

    def closer(self, entry: tuple) -> str:
        if entry[0] == "html":
            return entry[2]
        if entry[0] != "link":
            return entry[1]
        return f"]({self.link_tail(self.document.links[entry[1]])})"

    def link_tail(self, link: Link) -> str:
        title = self.block_text(link.title) if link.title is not None else ""
        if not title:
            return link.destination
        close = ")" if link.quote == "(" else link.quote
        title = re.sub(rf"([\\{re.escape(close)}])", r"\\\1", " ".join(title.splitlines()))
        return f"{link.destination} {link.quote}{title}{close}"

    def verbatim(self, run: Run) -> str:
        kind = run.style[-1] if isinstance(run.style, tuple) and run.style else None
        if kind and kind[0] == "code":
            content = run.text.replace("|", "\\|") if self.cell else run.text
            spaced = content[:1] == content[-1:] == " " and content.strip()
            pad = " " if spaced or content[:1] == "`" or content[-1:] == "`" else ""
            return f"{kind[1]}{pad}{content}{pad}{kind[1]}"
        if kind and kind[0] == "image":
            link = self.document.links[kind[1]]
            return f"![{self.plain(self.block_text(link.alt))}]({self.link_tail(link)})"
        return run.text  # inline HTML, an autolink as written

    def block(self, block: Block, runs: TranslatedBlock) -> str:
        out: list[str] = []
        open_: list[tuple] = []
        openers: list[int] = []  # where in `out` each entry of open_ was opened
        pairs: list[tuple[int, int]] = []  # (opener, closer) positions in `out`

        def close(entries: list[tuple]) -> None:
            for entry in reversed(entries):
                pairs.append((openers.pop(), len(out)))
                out.append(self.closer(entry))
        pending = ""
        written = [item for item in runs if (item.text if not block.runs[item.index].verbatim else "x").strip()]
        chains = dict(zip((id(item) for item in written), whole_elements(  # an emphasis split apart: written once
            [tuple(e for e in (block.runs[item.index].style or ()) if e[0] not in ("code", "image", "raw"))
             for item in written])))
        for item in runs:
            run = block.runs[item.index]
            chain = list(chains.get(id(item), ()))
            text = item.text if not run.verbatim else self.verbatim(run)
            core = text if run.verbatim else re.sub(r"\s+", " ", text.strip())
            if not core:
                pending += " " if text else ""
                continue
            common = 0
            while common < min(len(chain), len(open_)) and chain[common] == open_[common]:
                common += 1
            closing, opening = open_[common:], chain[common:]
            close(closing)
            lead = "" if run.verbatim else text[:len(text) - len(text.lstrip())]
            apart = (closing and opening and closing[0][0] in ("strong", "em", "s")  # "**a****b**": not two
                     and closing[0][:2] == opening[0][:2])
            out.append(" " if pending or lead or apart else "")
            for entry in chain[common:]:
                openers.append(len(out))
                out.append(self.opener(entry))
            out.append(core if run.verbatim else self.plain(core))
            pending = "" if run.verbatim else text[len(text.rstrip()):]
            open_ = chain
        close(open_)
        result = "".join(_inside_words(out, pairs)).strip()
        return result if self.cell else _LEADER.sub(lambda m: m.group(1) + "\\" + m.group(2), result)


def _inside_words(out: list[str], pairs: list[tuple[int, int]]) -> list[str]:
    """Delimiters CommonMark reads as emphasis where the translation put them: `_` against a word becomes
    `*` (CommonMark ignores `_` there), and a delimiter between punctuation inside and a word outside
    (`*"In a hurry?"*word`, `**<dfn>..</dfn>**word`, which CommonMark does not read as emphasis) gets a
    space on its outer side."""
    text = "".join(out)
    starts = [0]
    for piece in out:
        starts.append(starts[-1] + len(piece))
    for opener, closer in pairs:
        if not out[opener] or set(out[opener]) - set("*_~"):
            continue  # a link or an inline HTML element: no flanking rules
        before, first = text[starts[opener] - 1:starts[opener]], text[starts[opener + 1]:][:1]
        last, after = text[:starts[closer]][-1:], text[starts[closer + 1]:][:1]
        if set(out[opener]) == {"_"} and (before.isalnum() or after.isalnum()):
            out[opener], out[closer] = "*" * len(out[opener]), "*" * len(out[closer])
        if _punctuation(first) and before and not (before.isspace() or _punctuation(before)):
            out[opener] = " " + out[opener]
        if _punctuation(last) and after and not (after.isspace() or _punctuation(after)):
            out[closer] += " "
    return out


def _punctuation(ch: str) -> bool:
    return bool(ch) and not ch.isalnum() and not ch.isspace()


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def open_document(path: Path) -> MarkdownDocument:
    path = Path(path)
    decoded = read_decoded(path)
    text = decoded.text
    lines = _LINE.findall(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    bodies = [line.rstrip("\r\n") for line in lines]
    parsed = list(bodies)
    if bodies and _FRONT.match(bodies[0]):  # YAML front matter: hidden from the parser, kept as it is
        end = next((i for i in range(1, len(bodies)) if _FRONT_END.match(bodies[i])), None)
        if end is not None:
            parsed[:end + 1] = [""] * (end + 1)
    document = MarkdownDocument(path, text, encoding=decoded.encoding)
    _Reader(document, bodies, starts).read(_parser().parse("\n".join(parsed)))
    return document


class _Reader:
    """Turns markdown-it's tokens into blocks, spans and links."""

    def __init__(self, document: MarkdownDocument, bodies: list[str], starts: list[int]):
        self.document, self.bodies, self.starts = document, bodies, starts

    def read(self, tokens: list[Token]) -> None:
        heading: Token | None = None
        row: list[Token] = []
        for position, token in enumerate(tokens):
            if token.type in ("fence", "code_block", "html_block"):
                self.document.blocks.append(Block([Run(token.content, verbatim=True)], verbatim=True,
                                                  where=f"line {token.map[0] + 1} ({token.type.replace('_', ' ')})"))
            elif token.type == "heading_open":
                heading = token
            elif token.type == "heading_close":
                heading = None
            elif token.type == "tr_open":
                row = []
            elif token.type == "tr_close":
                self.cells(row)
            elif token.type == "inline" and token.map and token.content.strip():
                if position and tokens[position - 1].type in ("th_open", "td_open"):
                    row.append(token)
                else:
                    self.text_block(token, self.span(token, heading), "heading" if heading else "paragraph")

    def span(self, token: Token, heading: Token | None) -> Span | None:
        """The source offsets of an inline token's text, or None where they cannot be found exactly."""
        first, last = token.map[0], token.map[1] - 1
        content = token.content.split("\n")
        if heading is not None and heading.markup.startswith("#"):
            body = self.bodies[first]
            marker = re.search(r"#{1,6}", body)
            start = body.find(token.content, marker.end()) if marker else -1
            if start < 0:
                return None
            return Span(self.starts[first] + start, self.starts[first] + start + len(token.content))
        head, tail = self.bodies[first].rstrip(), self.bodies[last].rstrip()
        if not head.endswith(content[0].rstrip()) or not tail.endswith(content[-1].strip()):
            return None
        start = self.starts[first] + len(head) - len(content[0].rstrip())
        return Span(start, self.starts[last] + len(tail))

    def cells(self, row: list[Token]) -> None:
        """A table row's cells, located between the row line's unescaped pipes."""
        if not row:
            return
        line = row[0].map[0]
        body = self.bodies[line]
        edges = [-1] + [m.start() for m in _PIPE.finditer(body)] + [len(body)]
        pieces = [(a + 1, b) for a, b in pairwise(edges)]
        if pieces and not body[pieces[0][0]:pieces[0][1]].strip(" \t>"):
            pieces = pieces[1:]
        if pieces and not body[pieces[-1][0]:pieces[-1][1]].strip():
            pieces = pieces[:-1]
        located = []
        for a, b in pieces:
            cell = body[a:b]
            a += len(cell) - len(cell.lstrip())
            located.append((a, a + len(cell.strip()), cell.strip()))
        contents = [(a, b) for a, b, cell in located if cell]
        for token, where in zip(row, contents if len(contents) == len(row) else [None] * len(row)):
            if where and body[where[0]:where[1]].replace("\\|", "|") == token.content:
                span = Span(self.starts[line] + where[0], self.starts[line] + where[1], cell=True)
            else:
                span = None
            self.text_block(token, span, "table cell")

    def text_block(self, token: Token, span: Span | None, kind: str) -> None:
        """The block of an inline token (verbatim where its source cannot be located), then its links'
        title and image alt blocks."""
        document = self.document
        index = len(document.blocks)
        where = f"line {token.map[0] + 1} ({kind})"
        document.blocks.append(Block([], where=where))
        if span is None:
            document.blocks[index] = Block([Run(token.content, verbatim=True)], where=where, verbatim=True)
            return
        document.spans[index] = span
        source = document.text[span.start:span.end]
        document.blocks[index].runs = self.runs(token.children or [], source, index)

    def attach(self, host: int, text: str, kind: str) -> int | None:
        if not text.strip():
            return None
        block = len(self.document.blocks)
        self.document.blocks.append(Block([Run(text)], where=f"{self.document.blocks[host].where}, {kind}"))
        self.document.attached.setdefault(host, []).append(block)
        return block

    def runs(self, children: list[Token], source: str, host: int) -> list[Run]:
        written = list(_DESTINATION.finditer(source))
        closing = [c for c in children if c.type == "image" or c.type == "link_close" and c.info != "auto"]
        raw = {id(c): m for c, m in zip(closing, written)} if len(written) == len(closing) else {}
        close_of: dict[int, Token] = {}
        stack: list[Token] = []
        for child in children:
            if child.type == "link_open":
                stack.append(child)
            elif child.type == "link_close" and stack:
                close_of[id(stack.pop())] = child

        runs: list[Run] = []
        chain: list[tuple] = []

        def add(text: str, style: Hashable = None, verbatim: bool = False) -> None:
            style = style if style is not None else (tuple(chain) or None)
            if not verbatim and runs and not runs[-1].verbatim and runs[-1].style == style:
                runs[-1] = Run(runs[-1].text + text, style)
            elif text or verbatim:
                runs.append(Run(text, style, verbatim))

        def link(token: Token, closer: Token | None) -> int:
            match = raw.get(id(closer)) if closer is not None else None
            title = token.attrs.get("title") or ""
            href = str(token.attrs.get("href") or token.attrs.get("src") or "")
            destination = match.group(1) if match else _destination(href)
            quote = match.group(2)[0] if match and match.group(2) else '"'
            title_block = self.attach(host, str(title), "link title" if token.type == "link_open" else "image title")
            alt_text = "".join(c.content if c.type in ("text", "code_inline") else " " if "break" in c.type else ""
                               for c in token.children or [])
            alt = self.attach(host, alt_text, "image alt text") if token.type == "image" else None
            self.document.links.append(Link(destination, title_block, quote, alt))
            return len(self.document.links) - 1

        paired = _paired_html(children)
        for position, child in enumerate(children):
            kind = child.type
            if id(child) in paired:  # an inline HTML element that opens and closes here: a look
                if paired[id(child)] is not None:
                    chain.append(("html", child.content, paired[id(child)], position))
                else:
                    _remove_last(chain, "html")
            elif kind == "text":
                add(child.content)
            elif kind in ("softbreak", "hardbreak"):
                add(" ")
            elif kind in ("strong_open", "em_open", "s_open"):  # with its place: two elements stay two
                chain.append((kind[:-5], child.markup, position))
            elif kind in ("strong_close", "em_close", "s_close"):
                _remove_last(chain, kind[:-6])
            elif kind == "link_close":
                _remove_last(chain, "link", "auto")
            elif kind == "link_open" and child.info == "auto":
                chain.append(("auto",))
            elif kind == "link_open":
                chain.append(("link", link(child, close_of.get(id(child)))))
            elif kind == "code_inline":
                add(child.content, tuple(chain) + (("code", child.markup),), True)
            elif kind == "image":
                number = link(child, child)
                add(f"![{child.content}]({self.document.links[number].destination})",
                    tuple(chain) + (("image", number),), True)
            elif kind == "html_inline":
                add(child.content, tuple(chain) + (("raw",),), True)
        # an autolink's text is its destination: a verbatim "<...>" run
        return [Run(f"<{r.text}>", tuple(e for e in r.style if e != ("auto",)) or None, True)
                if isinstance(r.style, tuple) and ("auto",) in r.style else r for r in runs]


_OPEN_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)(?:\s[^>]*)?>", re.DOTALL)
_CLOSE_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>")
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
_HAS_RUN = ("text", "code_inline", "image")


def _paired_html(children: list[Token]) -> dict[int, str | None]:
    """Inline HTML tags that open and close an element with words or code inside in one paragraph
    (<em>x</em>, <dfn title="...">x</dfn>): id of the opening tag -> its closing tag, id of the closing tag
    -> None. The rest (<br>, a lone tag, a comment) stays verbatim runs."""
    paired: dict[int, str | None] = {}
    open_: list[tuple[str, int, int]] = []  # (name, position of the opening tag, its id)
    for position, child in enumerate(children):
        if child.type != "html_inline":
            continue
        opening, closing = _OPEN_TAG.fullmatch(child.content), _CLOSE_TAG.fullmatch(child.content)
        if opening and opening.group(1).lower() not in _VOID and not child.content.endswith("/>"):
            open_.append((opening.group(1).lower(), position, id(child)))
        elif closing:
            name = closing.group(1).lower()
            at = next((k for k in range(len(open_) - 1, -1, -1) if open_[k][0] == name), None)
            if at is None:
                continue
            _name, start, opener = open_[at]
            del open_[at:]
            if any(c.type in _HAS_RUN and (c.content.strip() or c.type != "text")
                   for c in children[start + 1:position]):
                paired[opener], paired[id(child)] = child.content, None
    return paired


def _remove_last(chain: list[tuple], *kinds: str) -> None:
    """Close the innermost open markup of one of `kinds` (HTML and Markdown may close out of order)."""
    for k in range(len(chain) - 1, -1, -1):
        if chain[k][0] in kinds:
            del chain[k]
            return


def _destination(href: str) -> str:
    """A normalised destination written so that it parses back (used where the source's is not found)."""
    return f"<{href}>" if re.search(r"[\s()<>]", href) else href
