"""Do-not-translate spans: URLs, e-mail addresses, emoji, inline code and whatever the user's regular
expression marks pass through the model as placeholders and come back unchanged; numbers (with units) stay in
the text and are kept by forcing (`number_spans`, constraints.py), since a placeholder hides what the
sentence is built around ("It costs 250 euros" came out as "250 kostet Euro").

The bundled models know none of these (a URL or an emoji becomes byte pieces that derail them: "I love you
😀" came out as "Ich liebe dich mit einer lebhaften Verpflichtung"), and a number is not reliably copied
("4721" came out as "472"). What they copy reliably is a name: "Tom", the Tatoeba corpus's own, was kept
in 7 of 7 test frames by both bundled models (Ken, Bob, Dan next). So each span is replaced by a name that
the sentence does not already hold, the name is a constraint the translation must keep (constraints.py
forces it in where the model dropped it), and `restore` puts the span back in the name's place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

# names the bundled models copy unchanged, most reliable first (benchmarks/RESULTS.md, "Documents")
NAMES = ("Tom", "Ken", "Bob", "Dan", "Kate", "Paul", "Max", "Bill", "Anna", "Carl", "Rick", "Mark")
_URL = r"(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)\]}]"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_UNITS = (r"%|‰|°C|°F|°|km/h|mph|km|cm|mm|µm|nm|m²|m³|m|kg|mg|µg|g|t|lb|oz|ml|l|L|h|min|ms|µs|ns|s|Hz|kHz|MHz|"
          r"GHz|W|kW|MW|kWh|V|mV|A|mA|Ω|B|KB|kB|MB|GB|TB|KiB|MiB|GiB|TiB|px|pt|dpi|€|\$|£|¥|EUR|USD|GBP")
# a number with a unit ("5 kg", "3.5%", "$20"), or a number the model might change (3+ digits, decimals, 1,000)
_NUMBER = (r"\+?\d+(?:[-/]\d+)+|"  # phone numbers, dates, ranges: 555-1234, 12/05/2024
           rf"(?:[$€£¥]\s?)?\d+(?:[.,]\d+)*(?:\s?(?:{_UNITS})(?![\w]))|(?:[$€£¥]\s?)\d+(?:[.,]\d+)*|"
           r"\d{1,3}(?:[,.]\d{3})+(?:\.\d+)?|\d+[.,]\d+|\d{3,}")
_EMOJI = (r"(?:[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\U0001F1E6-\U0001F1FF]"
          r"[\uFE0F\u200D\U0001F3FB-\U0001F3FF\U0001F000-\U0001FAFF\u2600-\u27BF]*)+")
DEFAULT_PATTERN = re.compile("|".join(f"(?:{p})" for p in (_URL, _EMAIL, _EMOJI)))
# numbers are not hidden from the model (it needs them to word the sentence: "It costs 250 euros" came out as
# "250 kostet Euro" with a placeholder), only kept: a number the model changed is forced back in
NUMBER_PATTERN = re.compile(_NUMBER)
# a bare one- or two-digit number ("18 apples", "Article 9"), not part of a time, date, decimal or range ("2:30",
# "5/9", "3.5"): kept where the target language's words for it can be checked (number_words.py)
SMALL_NUMBER_PATTERN = re.compile(r"(?<![\w.,:/+-])\d{1,2}(?![\w:]|[.,/-]\d)")


@dataclass(frozen=True)
class Placeholder:
    """`name` stands for `original` in the text given to the model, at characters [start, end) of it."""
    name: str
    original: str
    start: int
    end: int


@dataclass(frozen=True)
class Protected:
    """A text with its do-not-translate spans replaced by placeholders."""
    text: str
    placeholders: list[Placeholder]


def compile_dnt(pattern: str | None) -> re.Pattern[str] | None:
    """The user's do-not-translate regular expression, or ValueError in one sentence."""
    if not pattern:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"--dnt {pattern!r} is not a valid regular expression: {exc}") from None
    if compiled.match(""):
        raise ValueError(f"--dnt {pattern!r} matches the empty string: it would mark nothing sensible")
    return compiled


def dnt_spans(text: str, extra: re.Pattern[str] | None = None, automatic: bool = True) -> list[tuple[int, int]]:
    """Character spans of `text` to hide behind placeholders: the user's pattern's matches first, then the
    automatic ones (URLs, e-mail addresses, emoji) that do not overlap them."""
    spans: list[tuple[int, int]] = []
    for pattern in [p for p in (extra, DEFAULT_PATTERN if automatic else None) if p is not None]:
        for m in pattern.finditer(text):
            if m.end() > m.start() and all(m.end() <= s or m.start() >= e for s, e in spans):
                spans.append((m.start(), m.end()))
    return sorted(spans)


def protect(text: str, spans: Sequence[tuple[int, int]]) -> Protected:
    """`text` with each span (sorted, not overlapping) replaced by a name the text does not hold."""
    free = [n for n in NAMES if not re.search(rf"(?<!\w){n}", text)]
    free += [f"{NAMES[0]}{k}" for k in range(2, 2 + len(spans))]  # more spans than names: numbered ones
    out, placeholders, last = [], [], 0
    for (start, end), name in zip(spans, free):
        out.append(text[last:start])
        position = sum(len(part) for part in out)
        placeholders.append(Placeholder(name, text[start:end], position, position + len(name)))
        out.append(name)
        last = end
    out.append(text[last:])
    return Protected("".join(out), placeholders)


def restore(translation: str, placeholders: Sequence[Placeholder]) -> str:
    """The translation with each placeholder's name replaced by its original span; a name the translation
    lost (constraints.py forces it in, so only when forcing was off) is appended, so nothing is lost. A
    name the model inflected or glued an ending to ("Kenen", "Toms") is still the name."""
    for placeholder in placeholders:
        pattern = re.compile(rf"(?<!\w){re.escape(placeholder.name)}\w*")
        translation, count = pattern.subn(lambda _m: placeholder.original, translation, count=1)
        if not count:
            translation = f"{translation} {placeholder.original}".strip()
    return translation


def number_spans(text: str, taken: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Numbers the translation must keep as they are ("5 kg", "3.5 GHz", "1,000", "555-1234"), outside
    the spans already taken by placeholders."""
    return [(m.start(), m.end()) for m in NUMBER_PATTERN.finditer(text)
            if all(m.end() <= s or m.start() >= e for s, e in taken)]


def small_number_spans(text: str, taken: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Bare one- or two-digit numbers ("18", "9"), outside `taken` and outside number_spans' numbers: kept as
    the number, in digits or in the target language's words (number_words.py)."""
    taken = [*taken, *number_spans(text, taken)]
    return [(m.start(), m.end()) for m in SMALL_NUMBER_PATTERN.finditer(text)
            if all(m.end() <= s or m.start() >= e for s, e in taken)]
