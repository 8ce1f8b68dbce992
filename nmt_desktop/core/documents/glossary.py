"""Glossaries: source terms and the target terms a translation must use for them.

A glossary is read from a TSV (`source<TAB>target[<TAB>note]`, `#` comments, an optional header line
`source<TAB>target...`) or a TBX file (TBX-Basic / TBX v2 `termEntry/langSet/tig/term` and TBX v3
`conceptEntry/langSec/termSec/term`, read with lxml without entities or network), and written back to
both. A bad line is one sentence naming the file and line.

`find_terms` finds the glossary's source terms in a sentence as whole words, case-insensitively, in
inflected forms too: each word of the term may carry one of the common English, German and French
endings ("server" matches "servers", "policy" matches "policies", "Haus" matches "Hauses"). Longer terms
win over shorter ones they overlap ("power supply" before "power"), and an entry written as the sentence
has it over one that needs an ending ("books" before "book"). Forcing the target term into the
translation is constraints.py's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from nmt_desktop.core.documents.blocks import DocumentError

MAX_TERMS = 100_000
# endings an inflected form may add to a term's word (the longest first); "y" -> "ies" is handled apart
_ENDINGS = ("'s", "’s", "es", "s", "ed", "ing", "er", "en", "e", "n", "x")
_WORD = re.compile(r"\w[\w'’-]*", re.UNICODE)


@dataclass(frozen=True)
class Term:
    """One glossary entry: `source` is translated as `target`; `note` is the translator's own remark."""
    source: str
    target: str
    note: str = ""


@dataclass(frozen=True)
class TermMatch:
    """A term found in a sentence: characters [start, end) of it, and the entry."""
    start: int
    end: int
    term: Term


@dataclass
class Glossary:
    terms: list[Term]

    @classmethod
    def read(cls, path: str | Path) -> "Glossary":
        """A glossary from a .tsv (or .txt/.csv with tabs) or .tbx file."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DocumentError(f"cannot read the glossary {path.name}: {exc.strerror or exc}") from None
        if path.suffix.lower() in (".tbx", ".xml"):
            return cls(_read_tbx(data, path.name))
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise DocumentError(f"the glossary {path.name} is not UTF-8 text: save it as UTF-8") from None
        return cls.from_tsv(text, path.name)

    @classmethod
    def from_tsv(cls, text: str, name: str = "glossary") -> "Glossary":
        terms = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if number == 1 and [f.strip().lower() for f in fields[:2]] == ["source", "target"]:
                continue  # a header line
            if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
                raise DocumentError(f"{name}, line {number}: a glossary line needs a source term and a target "
                                    f"term separated by a tab, got {_short(line)!r}")
            if len(fields) > 3:
                raise DocumentError(f"{name}, line {number}: a glossary line has at most 3 tab-separated fields "
                                    f"(source, target, note), got {len(fields)}")
            terms.append(Term(fields[0].strip(), fields[1].strip(), fields[2].strip() if len(fields) == 3 else ""))
            if len(terms) > MAX_TERMS:
                raise DocumentError(f"{name} has more than {MAX_TERMS} terms")
        return cls(terms)

    def to_tsv(self) -> str:
        lines = ["source\ttarget\tnote"]
        lines += [f"{_clean(t.source)}\t{_clean(t.target)}\t{_clean(t.note)}" for t in self.terms]
        return "\n".join(lines) + "\n"

    def to_tbx(self, source_lang: str = "en", target_lang: str = "de") -> bytes:
        """TBX-Basic (TBX v2 `martif`), the form most CAT tools import."""
        from lxml import etree

        xml_lang = "{http://www.w3.org/XML/1998/namespace}lang"
        root = etree.Element("martif", type="TBX-Basic")
        root.set(xml_lang, source_lang)
        body = etree.SubElement(etree.SubElement(root, "text"), "body")
        for n, term in enumerate(self.terms, 1):
            entry = etree.SubElement(body, "termEntry", id=f"t{n}")
            if term.note:
                etree.SubElement(entry, "note").text = term.note
            for lang, text in ((source_lang, term.source), (target_lang, term.target)):
                lang_set = etree.SubElement(entry, "langSet")
                lang_set.set(xml_lang, lang)
                etree.SubElement(etree.SubElement(lang_set, "tig"), "term").text = text
        return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)

    def write(self, path: str | Path, source_lang: str = "en", target_lang: str = "de") -> None:
        """Save as TBX when the name ends in .tbx, else as TSV."""
        path = Path(path)
        if path.suffix.lower() == ".tbx":
            path.write_bytes(self.to_tbx(source_lang, target_lang))
        else:
            path.write_text(self.to_tsv(), encoding="utf-8")


def _clean(text: str) -> str:
    return " ".join(text.split())  # no tabs or line ends inside a field


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _read_tbx(data: bytes, name: str) -> list[Term]:
    """Terms of a TBX file: the first language of each entry is the source, the second the target."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise DocumentError(f"the glossary {name} is not valid TBX: {exc}") from None
    if any(True for _ in root.iter(etree.Entity)):
        raise DocumentError(f"the glossary {name} uses XML entities, which the app does not expand")
    terms = []
    for entry in root.iter("{*}termEntry", "{*}conceptEntry"):
        note = " ".join(" ".join("".join(n.itertext()).split()) for n in entry.iterchildren("{*}note", "{*}descrip"))
        languages = []
        for lang_set in entry.iterchildren("{*}langSet", "{*}langSec"):
            found = next(lang_set.iter("{*}term"), None)
            if found is not None and "".join(found.itertext()).strip():
                languages.append(" ".join("".join(found.itertext()).split()))
        if len(languages) < 2:
            line = entry.sourceline or "?"
            raise DocumentError(f"{name}, line {line}: a term entry needs a term in two languages, found "
                                f"{len(languages)}")
        terms.append(Term(languages[0], languages[1], note))
        if len(terms) > MAX_TERMS:
            raise DocumentError(f"{name} has more than {MAX_TERMS} terms")
    return terms


# --- finding terms -----------------------------------------------------------------------------------


def _word_matches(term_word: str, word: str) -> bool:
    """Whether `word` is `term_word` or an inflected form of it (case-insensitive)."""
    t, w = term_word.casefold(), word.casefold()
    if t == w:
        return True
    if len(t) >= 3 and t.endswith("y") and w == t[:-1] + "ies":
        return True
    if len(t) < 3 or not w.startswith(t):
        return False
    return w[len(t):] in _ENDINGS


def find_terms(sentence: str, terms: Sequence[Term]) -> list[TermMatch]:
    """The glossary terms in a sentence, longest first where they overlap, in sentence order."""
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(sentence)]
    candidates = []
    for term in terms:
        parts = _WORD.findall(term.source)
        if not parts:
            continue
        for i in range(len(words) - len(parts) + 1):
            if all(_word_matches(p, words[i + k][2]) for k, p in enumerate(parts)):
                exact = all(p.casefold() == words[i + k][2].casefold() for k, p in enumerate(parts))
                candidates.append((not exact, TermMatch(words[i][0], words[i + len(parts) - 1][1], term)))
    # longest first; of equal spans, the term written as in the sentence ("books" over "book" + ending)
    candidates.sort(key=lambda c: (-(c[1].end - c[1].start), c[0], c[1].start))
    chosen: list[TermMatch] = []
    for _inexact, match in candidates:
        if all(match.end <= c.start or match.start >= c.end for c in chosen):
            chosen.append(match)
    return sorted(chosen, key=lambda m: m.start)


def target_present(translation: str, term: Term) -> bool:
    """Whether a translation uses the target term: at a word start, case-insensitive on its first letter
    (which a sentence start capitalises), in an inflected form too ("Gebäudes" for "Gebäude")."""
    return re.search(rf"(?<!\w){_term_pattern(term)}", translation) is not None


# endings a target word may carry and still be the term ("Gebäudes", "Kliniken", "hôpitaux"), not a compound
_TARGET_ENDINGS = ("", "e", "n", "en", "s", "es", "er", "ern", "x", "nen")


def _term_pattern(term: Term) -> str:
    """The target term as a regex, case-insensitive on its first letter (which a sentence start capitalises)."""
    pattern = re.escape(term.target)
    if term.target[:1].isalpha():
        first = term.target[0]
        pattern = f"[{re.escape(first.lower())}{re.escape(first.upper())}]" + re.escape(term.target[1:])
    return pattern


def target_as_word(translation: str, term: Term, inflected: bool = True) -> bool:
    """Whether the translation has the target term as a word of its own: not glued into another word
    ("Kliniktahre", "Klinikum" do not count); with `inflected`, an inflected form counts ("Kliniken")."""
    endings = "|".join(re.escape(e) for e in (_TARGET_ENDINGS if inflected else ("",)))
    end = r"(?!\w)" if term.target[-1:].isalnum() or term.target[-1:] == "_" else ""
    return re.search(rf"(?<!\w){_term_pattern(term)}(?:{endings}){end}", translation) is not None


def glued_uses(text: str, term: Term, others: Sequence[Term] = ()) -> int:
    """How many times the target term stands inside another word of `text` (case-insensitive): after
    letters, or at a word start with letters after it that are no inflection ("Kliniktahre", "Klinikum").
    A word that is itself one of `others`' targets, inflected or not, is that term and not a glued one
    ("Kind" in "Kinderwagen" where the sentence asks for both)."""
    count = 0
    for found in re.finditer(rf"(?<!\w){re.escape(term.target)}\w*|\w+{re.escape(term.target)}\w*", text,
                             flags=re.IGNORECASE):
        word = found.group(0)
        if word.lower() == term.target.lower() or target_as_word(word, term):
            continue
        count += not any(o.target.lower() != term.target.lower() and _is_target(word, o) for o in others)
    return count


def _is_target(words: str, term: Term) -> bool:
    """Whether `words` is exactly the term's target, inflected or not."""
    endings = "|".join(re.escape(e) for e in _TARGET_ENDINGS)
    return re.fullmatch(rf"{_term_pattern(term)}(?:{endings})", words, flags=re.IGNORECASE) is not None


def merged(glossaries: Iterable[Glossary]) -> Glossary:
    """Several glossaries as one (a document's after the model's: a later entry for a source term wins)."""
    by_source: dict[str, Term] = {}
    for glossary in glossaries:
        for term in glossary.terms:
            by_source[term.source.casefold()] = term
    return Glossary(list(by_source.values()))
