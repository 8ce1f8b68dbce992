"""Determiners a forced glossary noun may need instead of the one the model wrote for its own word.

The model writes "das Krankenhaus"; the glossary says "Klinik", which is feminine: "das Klinik" is wrong,
"die Klinik" right. `alternatives(word, language, term)` gives, for a German or French determiner (an
article, a possessive, a demonstrative, a preposition fused with an article such as "im" or "au"), the
forms of the same case for every gender and number ("das" -> der, die, das, den; "im" -> im, in der, in den),
so that the caller (placement.py) can let the model choose the one that fits the term, without changing
the case the sentence asked for. Any other word has no alternatives: nothing is re-decided.
"""

from __future__ import annotations

from typing import Sequence

GENDERS = ("m", "f", "n", "pl")
CASES = ("nom", "acc", "dat", "gen")
# German der-words and ein-words: (case, gender) -> ending; the definite article is its own table
_DEFINITE = {"nom": ("der", "die", "das", "die"), "acc": ("den", "die", "das", "die"),
             "dat": ("dem", "der", "dem", "den"), "gen": ("des", "der", "des", "der")}
_DER_ENDINGS = {"nom": ("er", "e", "es", "e"), "acc": ("en", "e", "es", "e"),
                "dat": ("em", "er", "em", "en"), "gen": ("es", "er", "es", "er")}
_EIN_ENDINGS = {"nom": ("", "e", "", "e"), "acc": ("en", "e", "", "e"),
                "dat": ("em", "er", "em", "en"), "gen": ("es", "er", "es", "er")}
_DER_STEMS = ("dies", "jen", "jed", "welch")
_EIN_STEMS = ("ein", "kein", "mein", "dein", "sein", "ihr", "unser", "eur", "euer")
# a preposition fused with a definite article, and back
_FUSED = {"im": ("in", "dem"), "ins": ("in", "das"), "am": ("an", "dem"), "ans": ("an", "das"),
          "zum": ("zu", "dem"), "zur": ("zu", "der"), "vom": ("von", "dem"), "beim": ("bei", "dem")}
_FUSE = {parts: word for word, parts in _FUSED.items()}
_FUSED_CASE = {"in": ("dat", "acc"), "an": ("dat", "acc"), "zu": ("dat",), "von": ("dat",), "bei": ("dat",)}
# the cases a German preposition governs: the determiner after it keeps one of them
_GOVERNS = {**{p: ("dat", "acc") for p in ("in", "an", "auf", "über", "unter", "vor", "hinter", "neben", "zwischen")},
            **{p: ("dat",) for p in ("mit", "nach", "bei", "seit", "von", "zu", "aus", "gegenüber", "außer")},
            **{p: ("acc",) for p in ("für", "durch", "gegen", "ohne", "um", "bis")},
            **{p: ("gen", "dat") for p in ("wegen", "während", "trotz", "statt", "innerhalb", "außerhalb")}}

_FRENCH_GROUPS = (("le", "la", "l'", "les"), ("un", "une"), ("du", "de la", "de l'", "des"),
                  ("au", "à la", "à l'", "aux"), ("ce", "cet", "cette", "ces"), ("mon", "ma", "mes"),
                  ("ton", "ta", "tes"), ("son", "sa", "ses"), ("notre", "nos"), ("votre", "vos"),
                  ("leur", "leurs"))
_ELIDED = {"l'", "de l'", "à l'"}
_BEFORE_CONSONANT_ONLY = {"le", "la", "de la", "à la", "ce", "ma", "ta", "sa"}


def _german_forms(word: str, genders: Sequence[str], before: str = "") -> set[str]:
    """The same-case forms of a German determiner for `genders` (empty: not a determiner); the cases a
    preposition `before` it governs when it is one."""
    lower = word.lower()
    governed = _GOVERNS.get(before.lower(), CASES)
    pick = [GENDERS.index(g) for g in genders]
    if lower in _FUSED:
        prep, article = _FUSED[lower]
        cases = [c for c in _FUSED_CASE[prep] if article in _DEFINITE[c]]
        forms = set()
        for case in cases:
            for form in (_DEFINITE[case][g] for g in pick):
                forms.add(_FUSE.get((prep, form), f"{prep} {form}"))
        return forms
    cases = [c for c in CASES if lower in _DEFINITE[c] and c in governed]
    if cases:
        return {_DEFINITE[c][g] for c in cases for g in pick}
    for stems, endings in ((_DER_STEMS, _DER_ENDINGS), (_EIN_STEMS, _EIN_ENDINGS)):
        for stem in stems:
            if lower.startswith(stem):
                cases = [c for c in CASES if lower[len(stem):] in endings[c] and c in governed]
                plural_ok = stem != "ein"  # "ein" has no plural
                return {stem + endings[c][g] for c in cases for g in pick if plural_ok or GENDERS[g] != "pl"}
    return set()


def _french_forms(word: str, term: str, plural: bool | None) -> set[str]:
    lower = word.lower().replace("’", "'")
    if plural is not None:  # the plural forms are the group's last ("les", "des", "aux", "ces", "mes", ...)
        return {f for f in _french_forms(word, term, None) if _french_plural(f) == plural}
    vowel = term[:1].lower() in "aeiouyhàâéèêëîïôûü"
    for group in _FRENCH_GROUPS:
        if lower in group:
            if vowel:
                return {f for f in group if f not in _BEFORE_CONSONANT_ONLY}
            return {f for f in group if f not in _ELIDED and f != "cet"}
    return set()


def _french_plural(form: str) -> bool:
    return form in {"les", "des", "aux", "ces", "mes", "tes", "ses", "nos", "vos", "leurs"}


def alternatives(word: str, language: str, term: str, plural: bool | None = None, before: str = "") -> list[str]:
    """The forms `word` (a determiner, possibly two words such as "de la") could take before `term`,
    itself first, capitalised as it is; [] when it is not a determiner of `language` ("de" or "fr").
    `plural` (the term's number when known) keeps only the forms of that number; `before`, the word
    before it (a preposition keeps the cases it governs)."""
    genders = GENDERS if plural is None else ("pl",) if plural else GENDERS[:3]
    forms = (_german_forms(word, genders, before) if language == "de" else _french_forms(word, term, plural)
             if language == "fr" else set())
    if not forms:
        return []
    same = word.replace("’", "'")
    out = [word] + sorted(f for f in forms if f != same.lower())
    if word[:1].isupper():
        out = [word] + [f[:1].upper() + f[1:] for f in out[1:]]
    return out


def unfused(form: str, language: str) -> str:
    """A German preposition fused with its article written apart ("ins" -> "in das", "Zum" -> "Zu dem"),
    so that the fused form and the ones written apart ("in die") are scored on the same preposition; any
    other form as it is."""
    parts = _FUSED.get(form.lower()) if language == "de" else None
    if parts is None:
        return form
    prep = parts[0][:1].upper() + parts[0][1:] if form[:1].isupper() else parts[0]
    return f"{prep} {parts[1]}"


def joined(determiner: str, term: str) -> str:
    """The determiner and the term as text: "l'hôpital", "die Klinik"."""
    return f"{determiner}{term}" if determiner.endswith(("'", "’")) else f"{determiner} {term}"
