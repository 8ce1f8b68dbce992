"""Restoring capitals to lower-cased, tokenized text before a cased model reads it.

Gold alignment sets (and many research corpora) are lower-cased; the bundled models were trained on
cased text, so "die kommission" or "frau präsidentin" is text they rarely saw, and they align it worse
(benchmarks/RESULTS.md, "Alignments (issue 23)": English-German AER 19.0% lower-cased, 16.6% truecased).
`truecase` gives each all-lower-case word the capitalised form when the model's own vocabulary knows that
form better (it splits into fewer pieces: the tokenizer learnt it from more examples), and capitalises the
first word. A line that already starts with a capital is taken as cased and left alone. Only the case changes, never a word's length, so word indices (alignments) stay the same.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from nmt_desktop.core.tokenizer import Tokenizer

__all__ = ["truecaser"]


def truecaser(tokenizer: Tokenizer) -> Callable[[str], str]:
    """A function that truecases one whitespace-tokenized line for `tokenizer`'s model."""

    @lru_cache(maxsize=65536)
    def pieces(word: str) -> int:
        return len(tokenizer.encode(" " + word))

    def truecase(line: str) -> str:
        first = next((c for c in line if c.isalpha()), "")
        if first != first.lower():
            return line  # starts with a capital: cased text
        out = []
        for k, word in enumerate(line.split(" ")):
            capital = word[:1].upper() + word[1:]
            if word != word.lower() or capital == word or len(capital) != len(word):
                out.append(word)  # already cased, no letter to raise, or a letter whose capital is longer (ß)
            elif k == 0 or pieces(capital) < pieces(word):
                out.append(capital)
            else:
                out.append(word)
        return " ".join(out)

    return truecase
