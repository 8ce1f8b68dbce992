"""The words a language writes a small number with (0-99), so that a translation that spells a number out
("2 months" -> "zwei Monaten") counts as keeping it, and one that turns it into another number ("18 apples" ->
"dix pommes", "54" -> "fünfundzwanzig") does not.

Numbers of 3+ digits, decimals and numbers with units are always kept as digits (placeholders.NUMBER_PATTERN);
a bare one- or two-digit number is kept only in a target language listed here: for another language the
model's rendering stands, as before, because its spelled-out form cannot be told from a wrong number.
"""

from __future__ import annotations

import re

_EN_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
            "seventeen eighteen nineteen".split()
_EN_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_DE_UNITS = "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn " \
            "sechzehn siebzehn achtzehn neunzehn".split()
_DE_TENS = "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig".split()
_FR_UNITS = "zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize " \
            "dix-sept dix-huit dix-neuf".split()
_FR_TENS = "vingt trente quarante cinquante soixante".split()


def _english(n: int) -> set[str]:
    if n < 20:
        return {_EN_UNITS[n]} | ({"a", "an"} if n == 1 else set())
    tens, unit = divmod(n, 10)
    word = _EN_TENS[tens - 2]
    return {word} if unit == 0 else {f"{word}-{_EN_UNITS[unit]}", f"{word} {_EN_UNITS[unit]}"}


def _german(n: int) -> set[str]:
    if n == 1:  # the numeral and the article are one word: any of its forms counts
        return {"eins", "ein", "eine", "einen", "einem", "einer", "eines"}
    if n < 20:
        return {_DE_UNITS[n]}
    tens, unit = divmod(n, 10)
    word = _DE_TENS[tens - 2]
    return {word} if unit == 0 else {f"{'ein' if unit == 1 else _DE_UNITS[unit]}und{word}"}


def _french(n: int) -> set[str]:
    if n == 1:
        return {"un", "une"}
    if n < 20:
        return {_FR_UNITS[n]}
    if n >= 80:  # quatre-vingts, quatre-vingt-un ... quatre-vingt-dix-neuf
        rest = n - 80
        return {"quatre-vingts", "quatre-vingt"} if rest == 0 else {f"quatre-vingt-{w}" for w in _french(rest)}
    if n >= 60:  # soixante ... soixante-dix-neuf
        tens, rest = "soixante", n - 60
    else:
        tens, rest = _FR_TENS[n // 10 - 2], n % 10
    if rest == 0:
        return {tens}
    if rest in (1, 11):  # vingt et un, soixante et onze (and the 1990 spelling vingt-et-un)
        unit = _FR_UNITS[rest]
        return {f"{tens} et {unit}", f"{tens}-et-{unit}"}
    return {f"{tens}-{w}" for w in _french(rest)}


_LANGUAGES = {"en": _english, "de": _german, "fr": _french}
_ALIASES = {"eng": "en", "deu": "de", "ger": "de", "fra": "fr", "fre": "fr"}  # multilingual models' >>fra<< codes


def number_words(value: int, language: str) -> tuple[str, ...] | None:
    """The words `language` may write `value` (0-99) with, longest first; None for a language not listed here
    (or a value out of range): then a translation cannot be checked for the number, and none is kept."""
    code = language.split("_")[0].split("-")[0].lower()
    spell = _LANGUAGES.get(_ALIASES.get(code, code))
    if spell is None or not 0 <= value <= 99:
        return None
    return tuple(sorted(spell(value), key=len, reverse=True))


def says_number(text: str, words: tuple[str, ...]) -> bool:
    """Whether `text` holds one of `words` as a word of its own, in any case ("Zwei", "zwei")."""
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text, re.IGNORECASE) for w in words)
