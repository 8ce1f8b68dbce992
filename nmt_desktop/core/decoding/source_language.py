"""Is the text in the language the model reads? An offline language identifier and the one-sentence warning
the Translate tab and the CLI give when it is not.

Why: a model given another language translates nonsense ("Dotototot…" from Chinese on the bundled en-de)
with nothing to say the input was the cause. The identifier is py3langid (the maintained fork of langid.py:
a naive Bayes model over byte n-grams, 140 languages, its model inside the 4.6 MB wheel, nothing downloaded).

A warning needs all three: enough text to judge (`MIN_WORDS`: a name, a number or two words never are), the
model's language nearly ruled out (`MAX_SOURCE_PROBABILITY`) and another language clearly ahead
(`MIN_OTHER_PROBABILITY`). The thresholds were chosen on dev data (benchmarks/source_language.py;
benchmarks/RESULTS.md, "Sentence policy and language identification"). A model whose source language the
identifier does not know (a group such as "mul" or "roa") gets no judgement.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from typing import Any

from nmt_desktop.core.hub.catalogue import codes_for, language_label

MIN_WORDS = 3  # words with a letter; a character of a script written without spaces (Chinese, Japanese, Thai) is half
MAX_SOURCE_PROBABILITY = 0.01
MIN_OTHER_PROBABILITY = 0.5

# languages the identifier tells apart but a model reads alike: their probabilities count as one
SAME_LANGUAGE = {"zh": ("zh", "yue", "wuu"), "sr": ("sr", "hr", "bs"), "no": ("no", "nn", "nb"),
                 "ms": ("ms", "id"), "ar": ("ar", "ary", "arz")}
_GROUP = {member: head for head, members in SAME_LANGUAGE.items() for member in members}
# model language codes the identifier spells otherwise
MODEL_CODES = {"cmn": "zh", "nb": "no", "nob": "no", "sh": "sr", "hbs": "sr"}
_LANGUAGE_TOKEN = re.compile(r"^\s*>>[\w-]+<<")  # a multilingual model's target token before the text
# scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana, CJK ideographs
_NO_SPACES = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_lock = threading.Lock()


@dataclass(frozen=True)
class LanguageGuess:
    """What the identifier makes of a text, for a model reading `source`."""

    source: str  # the model's source language as the identifier names it ("en"; "zh" for its group)
    source_probability: float
    best: str  # the most probable other language ("zh" for Chinese, Cantonese and Wu together)
    best_probability: float
    words: float  # the amount of text: words with a letter, plus half a word per character of a script without spaces


def text_words(text: str) -> float:
    """How much text there is to judge (see `LanguageGuess.words`)."""
    spaced = [w for w in _NO_SPACES.sub(" ", text).split() if any(c.isalpha() for c in w)]
    return len(spaced) + len(_NO_SPACES.findall(text)) / 2


@functools.lru_cache(maxsize=1)
def _identifier_unlocked() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identifier() -> Any:
    """py3langid's identifier with probabilities, loaded once (about 0.4 s: `warm_up` it off the GUI thread)."""
    with _lock:
        return _identifier_unlocked()


def warm_up() -> None:
    """Load the identifier now, so that the first check costs a millisecond, not the load."""
    identifier()


def identifier_code(language: str) -> str | None:
    """The identifier's code for a model's source language ("en", "eng", "en-US" -> "en"); None when it does
    not know the language (a group such as "mul", or an empty code)."""
    base = language.replace("_", "-").split("-")[0].strip().lower()
    base = MODEL_CODES.get(base, base)
    labels = set(identifier().labels)
    known = sorted(c for c in codes_for(base) if c in labels) if base else []
    return _GROUP.get(known[0], known[0]) if known else None


def guess_language(text: str, source_language: str) -> LanguageGuess | None:
    """The identifier's reading of `text` for a model reading `source_language`; None when that language is
    unknown to it."""
    source = identifier_code(source_language)
    if source is None:
        return None
    text = _LANGUAGE_TOKEN.sub("", text)
    merged: dict[str, float] = {}
    for code, probability in identifier().rank(text):
        group = _GROUP.get(code, code)
        merged[group] = merged.get(group, 0.0) + probability
    others = [(p, c) for c, p in merged.items() if c != source and c != "zxx"]  # zxx: "no linguistic content"
    best_probability, best = max(others, default=(0.0, ""))
    return LanguageGuess(source, merged.get(source, 0.0), best, best_probability, text_words(text))


def language_warning(text: str, source_language: str) -> str | None:
    """One sentence when `text` is clearly not in the model's `source_language`, else None."""
    if text_words(text) < MIN_WORDS:  # too little to judge, and no need to load the identifier
        return None
    guess = guess_language(text, source_language)
    if not is_other_language(guess):
        return None
    source = language_label(guess.source)
    return (f"This looks like {language_label(guess.best)}, not {source}: the model only reads "
            f"{source.split(' (')[0]}, so its translation will be nonsense.")


def is_other_language(guess: LanguageGuess | None, min_words: float = MIN_WORDS,
                      max_source: float = MAX_SOURCE_PROBABILITY, min_other: float = MIN_OTHER_PROBABILITY) -> bool:
    """The warning's rule (its thresholds are parameters for the benchmark that chose them)."""
    return (guess is not None and guess.words >= min_words and guess.source_probability < max_source
            and guess.best_probability >= min_other)
