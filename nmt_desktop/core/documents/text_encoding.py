"""The one place that decides which character encoding a text file or an HTML page is in.

As browsers and editors read files: a byte-order mark first; for an HTML page, then its declaration
(`<meta charset>` or an `http-equiv` Content-Type) wherever it stands in the head, not only within the
HTML5 prescan's first 1024 bytes; then UTF-8 if the bytes decode as UTF-8; then a detector. A declaration
the bytes contradict (a declared UTF-8 that does not decode, any declared charset that fails to decode)
is re-detected rather than decoded to U+FFFD. The detector is charset-normalizer, with one editor's rule
in front of it: Latin text that windows-1252 reads cleanly (accented letters inside ordinary words,
typographic quotes and dashes) is windows-1252, the default of browsers and Windows editors in the West,
because on short texts charset-normalizer often names a sibling code page (cp1257, cp1006) that reads
"Naïve" or "café" wrongly. Text is written back in the encoding it was read in, with its BOM. The module
sits beside formats/ (as format_table.py does) because safety.py, which formats/ imports, uses it too.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

from charset_normalizer import from_bytes

from nmt_desktop.core.documents.blocks import DocumentError

# longest first: UTF-32-LE's mark starts with UTF-16-LE's
BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_HEAD_END = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
_COMMENT = re.compile(rb"<!--(?:.*?-->|.*)", re.DOTALL)  # an unclosed comment runs to the end: linear time
_META = re.compile(rb"<meta\b[^>]*(?:>|\Z)", re.IGNORECASE)  # an unclosed tag runs to the end: linear
_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9_.:+-]+)""", re.IGNORECASE)
_HTTP_EQUIV = re.compile(rb"""http-equiv\s*=\s*["']?\s*content-type""", re.IGNORECASE)
_CHARSET_ATTR = re.compile(rb"""\bcharset\s*=""", re.IGNORECASE)
# what windows-1252 text holds besides letters: typographic punctuation, currency, marks of Western text
_WESTERN_MARKS = frozenset("‘’‚“”„–—…•·€£¥¢©®™°§¶«»‹›¡¿×÷±µ†‡‰ªº¹²³¼½¾ ")
_UNDEFINED_1252 = (b"\x81", b"\x8d", b"\x8f", b"\x90", b"\x9d")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ACCENTS_ONLY_WORD = re.compile(r"(?<![^\W\d_])[^\W\d_\x00-\x7f]{2,}(?![^\W\d_])")
_MARK_IN_WORD = re.compile(r"(?<=[^\W\d_])[¿¹²³¼½¾×÷±µ](?=[^\W\d_])")


@dataclass(frozen=True)
class TextEncoding:
    """How a file's bytes become text and back: `codec` (a Python codec name, without BOM handling),
    the `bom` it starts with (written back as it was) and `how` it was found (for messages and tests)."""
    codec: str
    bom: bytes = b""
    how: str = "UTF-8"

    def encode(self, text: str) -> bytes:
        """`text` in this encoding, after the BOM. A character the encoding cannot hold (a translation may
        bring one: "≥" into windows-1252) is written as the nearest it holds (its compatibility
        decomposition without accents), else "?": the file stays in the encoding its readers expect."""
        try:
            return self.bom + text.encode(self.codec)
        except UnicodeEncodeError:
            nearest: dict[str, str] = {}
            for char in set(text):
                try:
                    char.encode(self.codec)
                except UnicodeEncodeError:
                    nearest[char] = self._nearest(char)
            return self.bom + "".join(nearest.get(char, char) for char in text).encode(self.codec)

    def _nearest(self, char: str) -> str:
        plain = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
        try:
            plain.encode(self.codec)
        except UnicodeEncodeError:
            return "?"
        return plain or "?"


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: TextEncoding


def decode_text(data: bytes, name: str) -> DecodedText:
    """A text file's text and encoding: BOM, else UTF-8, else detected; DocumentError (one sentence naming
    the file) for binary data or bytes that no encoding reads."""
    found = _by_bom(data)
    if found is None:
        if b"\0" in data:
            raise DocumentError(f"{name} is not a text file (it holds binary data)")
        found = _utf8_or_detected(data, name)
    return DecodedText(_decode(data, found, name), found)


def decode_html(data: bytes, name: str) -> TextEncoding:
    """An HTML page's encoding: BOM, else its declaration anywhere in the head (re-detected when the bytes
    contradict it), else UTF-8, else detected."""
    found = _by_bom(data)
    if found is not None:
        return found
    declared = declared_charset(data)
    if declared is not None:
        try:
            codec = codecs.lookup(declared.decode("ascii")).name
        except (LookupError, UnicodeDecodeError):
            codec = None
        if codec is not None:
            codec = _as_browsers_read(codec, data)
            try:
                data.decode(codec)
            except UnicodeDecodeError:
                pass  # the declaration lies: detect instead
            else:
                if codec != "utf-8" and _is_utf8_text(data):
                    return TextEncoding("utf-8", how=f"UTF-8 (the page declares {declared.decode()})")
                return TextEncoding(codec, how="declared")
    return _utf8_or_detected(data, name)


def declared_charset(data: bytes) -> bytes | None:
    """The charset an HTML page's head declares in a <meta> (charset or http-equiv Content-Type), wherever
    it stands before the body; comments skipped."""
    end = _HEAD_END.search(data)
    head = _COMMENT.sub(b"", data[:end.start()] if end else data)
    for meta in _META.finditer(head):
        tag = meta.group()
        match = _CHARSET.search(tag)
        if match is None:
            continue
        if _CHARSET_ATTR.search(tag.split(b"content", 1)[0]) or _HTTP_EQUIV.search(tag):
            return match.group(1)
    return None


def _by_bom(data: bytes) -> TextEncoding | None:
    for bom, codec in BOMS:
        if data.startswith(bom):
            return TextEncoding(codec, bom, how="byte-order mark")
    return None


def _as_browsers_read(codec: str, data: bytes) -> str:
    """Browsers read a page labelled ISO-8859-1 or ASCII as windows-1252 (WHATWG Encoding; it matters
    only for the bytes 0x80-0x9F, so only then is the label overruled), and a <meta> naming UTF-16 or
    UTF-32 in a page whose bytes it could be read from (so not UTF-16) as UTF-8."""
    if codec in ("latin-1", "iso8859-1", "ascii") and re.search(rb"[\x80-\x9f]", data):
        return "cp1252"
    if codec.startswith(("utf-16", "utf-32")):
        return "utf-8"
    return codec


def _is_utf8_text(data: bytes) -> bool:
    """Whether non-ASCII bytes decode as UTF-8 (a legacy code page's text practically never does)."""
    if data.isascii():
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _utf8_or_detected(data: bytes, name: str) -> TextEncoding:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return TextEncoding("utf-8")
    if _reads_as_western(data):
        return TextEncoding("cp1252", how="detected")
    # a text dense in accents reads as "chaos" to charset-normalizer's default threshold: ask again, any mess
    best = from_bytes(data).best() or from_bytes(data, threshold=1.0).best()
    if best is None:
        raise DocumentError(f"{name} is not text in any character set the app recognises")
    return TextEncoding(codecs.lookup(best.encoding).name, how="detected")


def _reads_as_western(data: bytes) -> bool:
    """Whether windows-1252 reads the bytes as Western text: every byte defined, every non-ASCII character
    a Latin letter or a Western mark, no word of two or more accented letters only (Cyrillic, Greek or
    Arabic read as windows-1252 gives such words: "Ïðèâåò"), and no mark inside a word (Polish "żółć" read
    so gives "¿ó³æ"). Regular expressions only, so 10 MB take a fraction of a second."""
    if any(byte in data for byte in _UNDEFINED_1252):
        return False
    text = data.decode("cp1252")
    for char in set(_NON_ASCII.findall(text)):
        if char not in _WESTERN_MARKS and not (char.isalpha() and "LATIN" in unicodedata.name(char, "")):
            return False
    return _ACCENTS_ONLY_WORD.search(text) is None and _MARK_IN_WORD.search(text) is None


def _decode(data: bytes, encoding: TextEncoding, name: str) -> str:
    try:
        return data[len(encoding.bom):].decode(encoding.codec)
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{name} is not readable {encoding.codec} text (byte {exc.start + len(encoding.bom)} "
                            f"does not decode)") from None
