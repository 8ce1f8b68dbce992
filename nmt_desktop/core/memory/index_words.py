"""The words a source is indexed and looked up by: lower-cased runs of letters and digits; in scripts written
without spaces (Chinese, Japanese, Thai...) overlapping character pairs, so that a fuzzy lookup there finds
candidates too. The FTS5 index gets them joined by spaces (its unicode61 tokenizer keeps each one whole)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+")
# Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar: no spaces between words
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def index_words(text: str) -> list[str]:
    """The text's words in order (repeats kept), as described in the module docstring."""
    words: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        if not _UNSPACED.search(word):
            words.append(word)
            continue
        cursor = 0
        for run in _UNSPACED.finditer(word):
            if run.start() > cursor:
                words.append(word[cursor: run.start()])
            chars = run.group()
            words += [chars] if len(chars) == 1 else [chars[i: i + 2] for i in range(len(chars) - 1)]
            cursor = run.end()
        if cursor < len(word):
            words.append(word[cursor:])
    return words


def fts_query(words: list[str]) -> str:
    """An FTS5 MATCH expression finding rows with any of `words`."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
