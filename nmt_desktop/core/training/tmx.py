"""TMX 1.4 reading: translation units streamed as (source, target) segment texts.

Languages are picked by `src_lang`/`tgt_lang` (case-insensitive, "en" matches "en-US"; by default
the header's srclang, or the first language of a unit, and the other one); inline codes (<bpt> <ept>
<ph> <it> <ut>) are dropped, the text of <hi> and <sub> kept. A file declaring a DTD or entities is
refused before parsing (they can expand entities or load external files).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from nmt_desktop.core.training.corpus_formats import CorpusError, Pair, normalize_space

_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_CODES = frozenset({"bpt", "ept", "ph", "it", "ut"})  # TMX inline codes: native markup, dropped
_DTD_WORDS = ("<!DOCTYPE", "<!ENTITY")
_DTD_PATTERNS = tuple((word, word.encode(enc)) for word in _DTD_WORDS
                      for enc in ("utf-8", "utf-16-le", "utf-16-be"))
# `<!DOCTYPE tmx SYSTEM "tmx14.dtd">` with no internal subset: expat never fetches external DTDs.
_EXTERNAL_DOCTYPE = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*'
    rb'(<!DOCTYPE\s+[\w:.-]+\s+(?:SYSTEM\s+"[^"<>\[]*"|PUBLIC\s+"[^"<>\[]*"\s+"[^"<>\[]*")\s*>)', re.S)


def _local(tag: str) -> str:
    """Element name without its namespace."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _lang_matches(code: str, want: str) -> bool:
    """Case-insensitive match of a language code against a wanted code or prefix ("en" ~ "en-US")."""
    code, want = code.lower().replace("_", "-"), want.lower().replace("_", "-")
    return code == want or code.startswith(want + "-")


def _seg_text(seg: ET.Element) -> str:
    """Plain text of a TMX <seg>: inline codes dropped, <hi>/<sub> text kept, whitespace normalised."""
    parts: list[str] = []
    _collect_text(seg, parts, keep=True)
    return normalize_space("".join(parts))


def _collect_text(elem: ET.Element, parts: list[str], keep: bool) -> None:
    """Append the kept text under `elem`; inside a code only the text of nested <sub> survives."""
    if keep and elem.text:
        parts.append(elem.text)
    for child in elem:
        tag = _local(child.tag)
        if tag == "sub":  # a sub-flow inside a code is kept, set apart from its neighbours by spaces
            parts.append(" ")
            _collect_text(child, parts, keep=True)
            parts.append(" ")
        else:
            _collect_text(child, parts, keep=keep and tag not in _CODES)
        if keep and child.tail:
            parts.append(child.tail)


def _refuse_dtd(path: Path, chunk_size: int = 1 << 20) -> None:
    """CorpusError (naming the line) if the file contains <!DOCTYPE or <!ENTITY (UTF-8 or UTF-16)."""
    keep = max(len(p) for _, p in _DTD_PATTERNS) - 1
    carry, lines_before, first = b"", 0, True
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            if first:  # a plain external declaration (OmegaT writes one) neither expands nor loads anything
                m = _EXTERNAL_DOCTYPE.match(chunk)
                if m:
                    chunk = chunk[: m.start(1)] + b" " * (m.end(1) - m.start(1)) + chunk[m.end(1):]
                first = False
            data = carry + chunk
            hits = [(pos, word) for word, p in _DTD_PATTERNS if (pos := data.find(p)) >= 0]
            if hits:
                pos, word = min(hits)
                line = lines_before + data.count(b"\n", 0, pos) + 1
                raise CorpusError(f"{path}, line {line}: {word} declarations are not allowed in TMX files "
                                  f"(they can expand entities or load external files); remove it and try again.")
            cut = max(0, len(data) - keep)
            lines_before += data.count(b"\n", 0, cut)
            carry = data[cut:]


class TmxReader:
    """Streams (source, target) segment texts from a TMX file with iterparse."""

    def __init__(self, path: Path, src_lang: str | None, tgt_lang: str | None):
        self.path = path
        self.src, self.tgt = src_lang, tgt_lang  # resolved from the data when None
        self.header_src: str | None = None
        self.languages: set[str] = set()  # codes seen (for error messages), at most 50
        self.matched = 0  # units with both languages

    def pairs(self) -> Iterator[Pair]:
        try:
            _refuse_dtd(self.path)
            with open(self.path, "rb") as f:
                yield from self._parse(f)
        except ET.ParseError as exc:
            line, column = exc.position
            reason = str(exc).split(":")[0]
            raise CorpusError(f"{self.path}, line {line}: malformed XML ({reason}, column {column + 1}).") from None
        except CorpusError:
            raise
        except (LookupError, ValueError) as exc:  # an encoding declaration Python or expat cannot read
            raise CorpusError(f"{self.path}: cannot read the XML encoding ({exc}); save the file as UTF-8.") from None
        except OSError as exc:
            raise CorpusError(f"{self.path}: cannot read file ({exc.strerror or exc}).") from None

    def _parse(self, source: BinaryIO) -> Iterator[Pair]:
        stack: list[ET.Element] = []
        for event, elem in ET.iterparse(source, events=("start", "end")):
            tag = _local(elem.tag)
            if event == "start":
                if not stack and tag != "tmx":
                    raise CorpusError(f"{self.path}: not a TMX file (the root element is <{tag}>, expected <tmx>).")
                if tag == "header":
                    self.header_src = elem.get("srclang")
                stack.append(elem)
                continue
            stack.pop()
            if tag == "tu":
                yield self._pair(self._segments(elem))
                elem.clear()  # stream: forget finished units
                if stack:
                    stack[-1].remove(elem)

    def _segments(self, tu: ET.Element) -> list[tuple[str, str]]:
        """(language, text) of each <tuv> with a language and a <seg>."""
        found = []
        for tuv in tu:
            if _local(tuv.tag) != "tuv":
                continue
            lang = tuv.get(_XML_LANG) or tuv.get("lang")
            seg = next((c for c in tuv if _local(c.tag) == "seg"), None)
            if lang and seg is not None:
                found.append((lang, _seg_text(seg)))
                if len(self.languages) < 50:
                    self.languages.add(lang)
        return found

    def _pair(self, segs: list[tuple[str, str]]) -> Pair:
        """The unit's source and target text ("" for a missing side)."""
        self._resolve_langs(segs)
        src_i = next((i for i, (lang, _) in enumerate(segs) if self.src and _lang_matches(lang, self.src)), None)
        tgt_i = next((i for i, (lang, _) in enumerate(segs)
                      if i != src_i and self.tgt and _lang_matches(lang, self.tgt)), None)
        if src_i is None or tgt_i is None:
            return "", ""  # counted as a pair with an empty side
        self.matched += 1
        return segs[src_i][1], segs[tgt_i][1]

    def _resolve_langs(self, segs: list[tuple[str, str]]) -> None:
        """Fix missing languages from the first unit that has two: source = header srclang or the
        unit's first language, target = the unit's first other language."""
        if self.src and self.tgt or len({lang.lower() for lang, _ in segs}) < 2:
            return
        if not self.src:
            header = self.header_src if self.header_src and self.header_src != "*all*" else None
            matching = header and any(_lang_matches(lang, header) for lang, _ in segs)
            self.src = header if matching else segs[0][0]
        if not self.tgt:
            self.tgt = next((lang for lang, _ in segs if not _lang_matches(lang, self.src)), None)
