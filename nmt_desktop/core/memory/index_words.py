"""The terms a source is indexed and looked up by: its words (lower-cased runs of letters and digits; in scripts
written without spaces, such as Chinese, Japanese or Thai, overlapping character pairs) and each two neighbouring
words joined by "_" (a sentence of common words still has rare word pairs: "am_here" is far rarer than "am" or
"here", and two similar sentences share most of them). The FTS5 index gets them joined by spaces; its unicode61
tokenizer keeps "_" inside a term (TOKENIZER)."""

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


TOKENIZER = "unicode61 tokenchars '_'"


def index_terms(text: str) -> list[str]:
    """The text's words and neighbouring word pairs (see the module docstring)."""
    words = index_words(text)
    return words + [f"{a}_{b}" for a, b in zip(words, words[1:])]


def fts_query(words: list[str]) -> str:
    """An FTS5 MATCH expression finding rows with any of `words`."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
