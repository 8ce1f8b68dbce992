"""Does a forced glossary term wreck its sentence? Terms placed, terms glued into other words, sentences made
much worse, and article agreement, with and without the glossary (issue 41).

Two kinds of set, read in place from ../shared/data (nothing copied):

- `chosen`: a hand-made glossary per language pair (below) of terms the bundled models mostly do *not*
  use (synonyms: hospital -> Klinik where the model says Krankenhaus), nouns of each German gender and
  both French ones, plural terms, multi-word terms; every dev/val/test sentence whose source holds a term
  (an inflected form too, as in the app), at most PER_TERM per term. Terms land at sentence start, middle
  and end as the sentences have them.
- `mined`: the glossaries of glossary_recipe.py (benchmarks/glossary/*.tsv) on the dev sentences whose
  reference uses the term (the recipe's set).

Per set: term uses placed (the target as its own word, an inflection allowed), glued (the target inside
another word: at a word start with letters after it that are no inflection, or after letters; a word that is
another term of the sentence is that term, not glue: "Kind" in "Kinderwagen"), sentences
more than 20 chrF worse than without the glossary (sentence chrF against the reference), the lowest chrF
of a forced sentence's rest against the unforced translation (term and replaced words out), article
agreement (the determiner right before the target agrees with its gender) with the determiner re-decided
and without (placement.MARGIN set to infinity), and corpus chrF against the references.

    python benchmarks/glossary_fit.py                   # the RESULTS.md table
    python benchmarks/glossary_fit.py --code /tmp/old   # the same on another tree's nmt_desktop (the old forcing)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT.parent / "shared" / "data"
PER_TERM = 6

# (source, target, gender: m f n pl)
CHOSEN = {
    "de": [("hospital", "Klinik", "f"), ("car", "Wagen", "m"), ("street", "Gasse", "f"), ("room", "Raum", "m"),
           ("picture", "Foto", "n"), ("shop", "Laden", "m"), ("store", "Laden", "m"), ("shirt", "Oberteil", "n"),
           ("jacket", "Sakko", "n"), ("bicycle", "Rad", "n"), ("man", "Herr", "m"), ("woman", "Dame", "f"),
           ("movie", "Streifen", "m"), ("phone", "Handy", "n"), ("computer", "Rechner", "m"),
           ("friend", "Kumpel", "m"), ("job", "Stelle", "f"), ("city", "Großstadt", "f"), ("meal", "Mahlzeit", "f"),
           ("boat", "Kahn", "m"), ("road", "Fahrbahn", "f"), ("girl", "Mädel", "n"), ("doctor", "Mediziner", "m"),
           ("teacher", "Lehrkraft", "f"), ("money", "Kohle", "f"), ("house", "Gebäude", "n"), ("town", "Ortschaft", "f"),
           ("people", "Leute", "pl"), ("clothes", "Klamotten", "pl"), ("children", "Sprösslinge", "pl"),
           ("parents", "Erziehungsberechtigten", "pl"), ("train station", "Hauptbahnhof", "m"),
           ("ice cream", "Speiseeis", "n"), ("living room", "Wohnstube", "f"), ("tea", "schwarzer Tee", "m"),
           ("subway", "U-Bahn", "f"), ("crowd", "Menschenmenge", "f"), ("dog", "Vierbeiner", "m")],
    "fr": [("hospital", "clinique", "f"), ("car", "bagnole", "f"), ("house", "demeure", "f"), ("book", "ouvrage", "m"),
           ("job", "boulot", "m"), ("room", "salle", "f"), ("friend", "copain", "m"), ("movie", "long métrage", "m"),
           ("city", "métropole", "f"), ("shop", "boutique", "f"), ("store", "boutique", "f"), ("boat", "navire", "m"),
           ("girl", "jeune fille", "f"), ("woman", "dame", "f"), ("street", "ruelle", "f"), ("phone", "portable", "m"),
           ("picture", "photo", "f"), ("trip", "périple", "m"), ("children", "gamins", "pl"), ("people", "gens", "pl"),
           ("dog", "toutou", "m"), ("money", "fric", "m"), ("doctor", "toubib", "m"), ("bicycle", "vélo", "m")],
}
DEV = {"de": ["tatoeba/en-de/dev.tsv", "multi30k/val", "multi30k/test_2016_flickr"],
       "fr": ["tatoeba/en-fr/dev.tsv", "multi30k/val", "multi30k/test_2016_flickr"]}
MINED = {"tatoeba-en-de.tsv": "tatoeba/en-de/dev.tsv", "multi30k-en-de.tsv": "multi30k/val"}


def read_pairs(name: str, lang: str) -> list[tuple[str, str]]:
    if name.endswith(".tsv"):
        lines = (DATA / name).read_text(encoding="utf-8").splitlines()
        return [tuple(line.split("\t")[:2]) for line in lines if "\t" in line]  # type: ignore[misc]
    en = (DATA / f"{name}.en").read_text(encoding="utf-8").splitlines()
    tgt = (DATA / f"{name}.{lang}").read_text(encoding="utf-8").splitlines()
    return list(zip(en, tgt))


def gender_forms(lang: str) -> dict[str, set[str]]:
    """Every determiner form (lower case) that can stand before a noun of each gender (any case)."""
    from nmt_desktop.core.documents import determiners as d

    forms: dict[str, set[str]] = {g: set() for g in d.GENDERS}
    if lang == "de":
        for g, gender in enumerate(d.GENDERS):
            for case in d.CASES:
                forms[gender].add(d._DEFINITE[case][g])
                forms[gender] |= {s + d._DER_ENDINGS[case][g] for s in d._DER_STEMS}
                forms[gender] |= {s + d._EIN_ENDINGS[case][g] for s in d._EIN_STEMS if not (s == "ein" and gender == "pl")}
            forms[gender] |= {w for w, (_p, art) in d._FUSED.items() if art in forms[gender]}
    else:
        forms["m"] = {"le", "l'", "un", "du", "de l'", "au", "à l'", "ce", "cet", "mon", "ton", "son", "notre", "votre", "leur"}
        forms["f"] = {"la", "l'", "une", "de la", "de l'", "à la", "à l'", "cette", "ma", "ta", "sa", "mon", "ton", "son",
                      "notre", "votre", "leur"}
        forms["pl"] = {"les", "des", "aux", "ces", "mes", "tes", "ses", "nos", "vos", "leurs"}
    return forms


def determiner_before(text: str, target: str, lang: str, all_forms: set[str]) -> str | None:
    """The determiner right before the target in `text` (lower case), None when there is none."""
    found = re.search(rf"(?<!\w){re.escape(target)}", text, flags=re.IGNORECASE)
    if not found:
        return None
    before = text[:found.start()].replace("’", "'")
    words = before.split()
    if before.endswith("'"):
        words = before.rsplit(" ", 1)[-1:] if " " in before else [before]
        last = words[-1].lower()
        two = " ".join(before.split()[-2:]).lower()
        return two if two in all_forms else last if last in all_forms else None
    if not words:
        return None
    two = " ".join(words[-2:]).lower()
    return two if lang == "fr" and two in all_forms else words[-1].lower() if words[-1].lower() in all_forms else None


def glued(text: str, target: str, others: list | None = None) -> int:
    """How many times the target stands inside another word of `text`: after letters, or at a word start
    with letters after it that are no inflection. A word that is another term of the sentence (`others`),
    inflected or not, is that term ("Kind" in "Kinderwagen" where the sentence asks for both)."""
    from nmt_desktop.core.documents.glossary import Term, target_as_word

    term, count = Term("", target), 0
    for found in re.finditer(rf"(?<!\w){re.escape(target)}\w*|\w+{re.escape(target)}\w*", text, flags=re.IGNORECASE):
        word = found.group(0)
        count += (word.lower() != target.lower() and not target_as_word(word, term)
                  and not any(o.target.lower() != target.lower() and target_as_word(word, o) for o in others or []))
    return count


def outside(forced: str, plain: str, terms: list) -> float:
    """chrF of the glossary output against the unforced output outside the terms: each term forced in (a word
    of `forced`, not of `plain`) is taken out of `forced` (with the word before it or not), and the one or two
    neighbouring words of `plain` it most likely replaced (or none) out of `plain`, whichever scores best."""
    from sacrebleu.metrics import CHRF

    from nmt_desktop.core.documents.glossary import target_as_word

    chrf = CHRF()
    a, b = forced.split(), plain.split()
    for t in terms:
        found = re.search(rf"(?<!\w){re.escape(t.target)}", " ".join(a), flags=re.IGNORECASE)
        if found is None or target_as_word(" ".join(b), t):
            continue
        first = len(" ".join(a)[:found.start()].split())
        last = first + len(t.target.split())
        cuts_a = [a[:first] + a[last:]] + ([a[:first - 1] + a[last:]] if first else [])
        cuts_b = [b] + [b[:i] + b[i + n:] for n in (1, 2) for i in range(len(b) - n + 1)]
        a, b = max(((x, y) for x in cuts_a for y in cuts_b),
                   key=lambda xy: chrf.sentence_score(" ".join(xy[0]), [" ".join(xy[1])]).score)
    if not a and not b:
        return 100.0
    return chrf.sentence_score(" ".join(a), [" ".join(b)]).score


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--code", help="another tree whose nmt_desktop to measure (the old forcing)")
    p.add_argument("--sets", default="chosen-de,chosen-fr,mined-de")
    p.add_argument("--mined-lines", type=int, default=200, help="sentences per mined set")
    p.add_argument("--mined-skip", type=int, default=0, help="mined sentences skipped first per set (another sample)")
    p.add_argument("--show", action="store_true", help="print each sentence more than 20 chrF worse, and each term "
                   "use the forcing glued")
    args = p.parse_args()
    sys.path.insert(0, args.code or str(ROOT))

    import torch
    from sacrebleu.metrics import CHRF

    torch.set_num_threads(1)
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.glossary import Glossary, Term, find_terms, target_as_word
    from nmt_desktop.core.documents.translate_document import DocumentOptions, translate_lines

    try:
        from nmt_desktop.core.documents import placement
    except ImportError:
        placement = None
    chrf = CHRF()
    print("| set | sentences | term uses | used without | placed with | not placed | glued without / with | "
          "> 20 chrF worse vs ref | changed sentences | outside the term vs unforced: mean / lowest / < 80 | "
          "articles agree: re-decided / not | chrF without | chrF with |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.sets.split(","):
        kind, lang = name.split("-")
        translator = Translator.load(ROOT / "models" / f"en-{lang}")
        genders: dict[str, str] = {}
        groups: list[tuple[Glossary, list[tuple[str, str, list[Term]]]]] = []  # each mined file with its own glossary
        if kind == "chosen":
            glossary = Glossary([Term(s, t) for s, t, _g in CHOSEN[lang]])
            genders = {t: g for _s, t, g in CHOSEN[lang]}
            count: dict[str, int] = {}
            chosen = []
            for spec in DEV[lang]:
                for en, ref in read_pairs(spec, lang):
                    found = [m.term for m in find_terms(en, glossary.terms)]
                    if found and all(count.get(t.target, 0) < PER_TERM for t in found):
                        for t in found:
                            count[t.target] = count.get(t.target, 0) + 1
                        chosen.append((en, ref, found))
            groups.append((glossary, chosen))
        else:
            for file, spec in MINED.items():
                mined = Glossary.read(HERE / "glossary" / file)
                picked = []
                for en, ref in read_pairs(spec, lang):
                    found = [m.term for m in find_terms(en, mined.terms)]
                    if found and all(target_as_word(ref, t) for t in found):
                        picked.append((en, ref, found))
                groups.append((mined, picked[args.mined_skip: args.mined_skip + args.mined_lines]))
        dev = [d for _g, part in groups for d in part]
        refs = [r for _e, r, _t in dev]
        cfg = DecodeConfig()

        def run(with_glossary: bool) -> list[str]:
            out = []
            for glossary, part in groups:
                options = DocumentOptions(glossary=glossary if with_glossary else None, automatic_dnt=False)
                out += [b.target for b in translate_lines(translator, [en for en, _r, _t in part], cfg, options).blocks]
            return out
        plain = run(False)
        forced = run(True)
        if placement is not None and genders:
            margin, placement.MARGIN = placement.MARGIN, float("inf")
            fixed = run(True)
            placement.MARGIN = margin
        else:
            fixed = forced
        if args.show:
            for (en, r, ts), f, u in zip(dev, forced, plain):
                if chrf.sentence_score(f, [r]).score < chrf.sentence_score(u, [r]).score - 20 or outside(f, u, ts) < 80:
                    print(f"  {en}\n    terms {[t.target for t in ts]}\n    ref    {r}\n    plain  {u}\n    forced {f}\n"
                          f"    outside the term {outside(f, u, ts):.1f}", file=sys.stderr)
            for (en, r, ts), f, u in zip(dev, forced, plain):
                for t in ts:
                    if glued(f, t.target, ts) > glued(u, t.target, ts):
                        print(f"  glued {t.source} -> {t.target}: {en}\n    terms {[x.target for x in ts]}\n"
                              f"    plain  {u}\n    forced {f}", file=sys.stderr)
        uses = [(i, t) for i, (_e, _r, ts) in enumerate(dev) for t in ts]
        used = sum(target_as_word(plain[i], t) for i, t in uses)
        placed = sum(target_as_word(forced[i], t) for i, t in uses)
        glued_plain = sum(glued(plain[i], t.target, dev[i][2]) > 0 for i, t in uses)
        glued_with = sum(glued(forced[i], t.target, dev[i][2]) > glued(plain[i], t.target, dev[i][2])
                         for i, t in uses)  # by the forcing
        worse = sum(chrf.sentence_score(f, [r]).score < chrf.sentence_score(u, [r]).score - 20
                    for f, u, r in zip(forced, plain, refs))
        changed = [outside(forced[i], plain[i], ts) for i, (_e, _r, ts) in enumerate(dev) if forced[i] != plain[i]]
        agree = "n/a"
        if genders:
            forms = gender_forms(lang)
            every = set().union(*forms.values())

            def share(texts: list[str]) -> str:
                ok = n = 0
                for i, t in uses:
                    det = determiner_before(texts[i], t.target, lang, every) if target_as_word(texts[i], t) else None
                    if det is not None:
                        n += 1
                        ok += det in forms[genders[t.target]]
                return f"{ok}/{n}"
            agree = f"{share(forced)} / {share(fixed)}"
        print(f"| {name} | {len(dev)} | {len(uses)} | {used} | {placed} | {len(uses) - placed} | {glued_plain} / "
              f"{glued_with} | {worse} | {len(changed)} | {sum(changed) / max(1, len(changed)):.1f} / "
              f"{min(changed, default=100.0):.0f} / {sum(c < 80 for c in changed)} | {agree} | "
              f"{chrf.corpus_score(plain, [refs]).score:.1f} | {chrf.corpus_score(forced, [refs]).score:.1f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
