"""Word alignments (core/analysis/alignment.py, masking.py): readings, decisions, gold links and AER."""

from __future__ import annotations

import numpy as np
import pytest

from nmt_desktop.core.analysis import alignment as al
from nmt_desktop.core.decoding.results import Hypothesis, Translation

PAIRS = [("red cat runs", "rot katze rennt"), ("big dog eats small bird", "gross hund isst klein vogel"),
         ("green bird sleeps", "gruen vogel schlaeft")]


def fake(attn: np.ndarray, src: list[str], tgt: list[str], finished: bool = True) -> Translation:
    """A translation with the given pieces and attention (L, H, T, S)."""
    hyp = Hypothesis(list(range(len(tgt))), [0.0] * len(tgt), 0.0, [[] for _ in tgt], attn, finished=finished,
                     text=" ".join(tgt), tokens=tgt)
    return Translation(" ".join(src), list(range(len(src))), src, [hyp])


def test_aer_precision_recall_follow_och_and_ney():
    gold = al.parse_gold("0-0 1?1 2-2", "g line 1")
    assert gold.sure == {(0, 0), (2, 2)} and gold.possible == {(0, 0), (1, 1), (2, 2)}
    perfect = al.alignment_error([[(0, 0), (2, 2)]], [gold])
    assert (perfect.aer, perfect.precision, perfect.recall) == (0.0, 1.0, 1.0)
    r = al.alignment_error([[(0, 0), (1, 1), (0, 2)]], [gold])  # A=3, A∩S=1, A∩P=2, S=2
    assert r.aer == pytest.approx(1 - (1 + 2) / (3 + 2))
    assert r.precision == pytest.approx(2 / 3) and r.recall == pytest.approx(1 / 2)
    with pytest.raises(ValueError, match=r"g line 4: '1:2' is not a link"):
        al.parse_gold("0-0 1:2", "g line 4")


def test_pieces_land_in_the_given_words():
    pieces = ["ch", "acun", "▁en", "▁lui", "▁", "-", "▁même", ".", "</s>"]
    words = "chacun en lui - même .".split()
    assert al.piece_word_ids(pieces, words) == [0, 0, 1, 2, 3, 3, 4, 5, None]
    # a byte-level vocabulary shows the bytes of a split character as hex: they count as bytes of their word
    assert al.piece_word_ids(["▁said", "▁", "<E2 80>", "<9C>", "▁he", "llo", "▁", "<F0>", "<9F>", "<98>", "<80>"],
                             ["said", "“", "hello", "😀"]) == [0, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3]
    from nmt_desktop.core.analysis.words import piece_bytes
    assert b"".join(map(piece_bytes, ["▁", "<E2 80>", "<9C>", "▁he", "llo"])).decode() == " “ hello"
    # bytes that cannot match (an <unk>, a normalised ligature): the pieces' own words, when as many
    assert al.piece_word_ids(["▁fi", "sh", "▁x"], ["ﬁsh", "x"]) == [0, 0, 1]
    with pytest.raises(ValueError, match="do not match the words"):
        al.piece_word_ids(["▁a", "▁b"], ["a", "bc", "d"])


def test_unicode_spaces_separate_words_as_str_split_does():
    """A no-break space is a piece of its own in the bundled vocabularies and str.split cuts words at it: dev
    line 64 of the Tatoeba en-de set ("sagen\u00a0— höre") stopped `align` with "piece '!' is past the last
    word". Any Unicode space, also one split over byte pieces, separates words and belongs to no word's bytes."""
    nbsp = "Ich sagen\u00a0— höre zu!"  # the pieces the bundled en-de tokenizer makes of it
    assert al.piece_word_ids(["Ich", "▁sagen", "\u00a0", "—", "▁höre", "▁zu", "!"], nbsp.split()) == \
        [0, 1, 2, 2, 3, 4, 4]
    assert al.piece_word_ids(["▁2", "2", "5", "\u00a0", "g"], "225\u00a0g".split()) == [0, 0, 0, 1, 1]
    # a thin space (E2 80 89), a narrow no-break space (E2 80 AF), an ideographic space (E3 80 80) as bytes
    spaced = "a\u2009b\u202fc\u3000d e"
    pieces = ["a", "<E2 80>", "<89>", "b", "<E2 80>", "<AF>", "c", "<E3>", "<80>", "<80>", "d", "▁e"]
    assert al.piece_word_ids(pieces, spaced.split()) == [0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4]
    # a character that is not a space keeps its bytes in its word ("“" is E2 80 9C)
    assert al.piece_word_ids(["a", "<E2 80>", "<9C>"], ["a“"]) == [0, 0, 0]


def test_the_shift_reading_reads_the_row_where_a_token_is_consumed():
    src, tgt = ["▁a", "▁b", "</s>"], ["▁x", "▁y", "</s>"]
    attn = np.zeros((1, 1, 3, 3))
    attn[0, 0, 0, 1] = attn[0, 0, 1, 0] = attn[0, 0, 2, 1] = 1.0  # predict x at b, y at a; </s> step reads b
    predict = al.AlignMethod(reading="predict", layer=-1, decision="argmax", prior=0, identical=False, grow=0)
    shift = al.AlignMethod(reading="shift", layer=-1, decision="argmax", prior=0, identical=False, grow=0)
    tr = fake(attn, src, tgt)
    assert al.align(tr, predict) == [(0, 1), (1, 0)]
    assert al.align(tr, shift) == [(0, 0), (1, 1)]  # x is consumed at the step that predicts y, y at </s>'s


def test_mutual_keeps_only_links_that_are_best_both_ways_and_priors_shift_ties():
    m = np.array([[0.6, 0.4], [0.7, 0.3]])  # both target words prefer source 0
    argmax = al.AlignMethod(decision="argmax", grow=0)
    assert al.decide(m, argmax) == [(0, 0), (0, 1)]
    assert al.decide(m, al.AlignMethod(decision="mutual", grow=0)) == [(0, 1)]
    attn = np.full((1, 1, 3, 3), 0.5)
    attn[..., 2] = 0.0
    tied = fake(attn, ["▁a", "▁b", "</s>"], ["▁x", "▁y", "</s>"])
    diagonal = al.AlignMethod(reading="predict", layer=-1, decision="argmax", prior=3.0, identical=False, grow=0)
    assert al.align(tied, diagonal) == [(0, 0), (1, 1)]
    same = fake(attn, ["▁Paris", "▁b", "</s>"], ["▁x", "▁paris", "</s>"])
    ident = al.AlignMethod(reading="predict", layer=-1, decision="argmax", prior=0.0, identical=True, grow=0)
    assert (0, 1) in al.align(same, ident)


def test_symmetrisation():
    f, b = [(0, 0), (1, 1), (2, 1)], [(0, 0), (1, 1), (2, 2)]
    assert al.symmetrise(f, b, "intersection") == [(0, 0), (1, 1)]
    assert al.symmetrise(f, b, "union") == [(0, 0), (1, 1), (2, 1), (2, 2)]
    gdf = al.symmetrise(f, b, "grow-diag-final")
    assert {(0, 0), (1, 1)} <= set(gdf) and any(i == 2 for i, _ in gdf)
    with pytest.raises(ValueError, match="unknown symmetrisation"):
        al.symmetrise(f, b, "both")


def test_masking_aligns_a_word_by_word_model_exactly(tiny_translator):
    """The tiny model translates word by word (tests/tiny_models.py): hiding a source word must hit its
    translation, so the masking reading recovers the lexicon's links, on the model's output and on a scored pair."""
    for source, target in PAIRS:
        own = tiny_translator.translate(source)
        n = len(source.split())
        if own.text == target:
            assert al.align(own, translator=tiny_translator) == [(i, i) for i in range(n)]
        scored = tiny_translator.score(source, target)
        links = al.align(scored, al.BEST_METHOD, source.split(), target.split(), translator=tiny_translator)
        assert links == [(i, i) for i in range(n)]
    with pytest.raises(ValueError, match="needs the model"):
        al.align(scored)


def test_the_card_can_name_a_reading_and_bad_entries_fall_back():
    card = {"alignment": {"reading": "shift", "heads": ["L2 H1", "L1 H2"], "decision": "argmax", "prior": 0}}
    m = al.default_method(card, layers=2)
    assert m.reading == "shift" and m.heads == ((1, 0), (0, 1)) and m.prior == 0
    assert al.AlignMethod.from_dict(m.to_dict()) == m
    assert al.default_method({"alignment": {"heads": ["L9 H1"], "reading": "shift"}}, layers=2) == al.BEST_METHOD
    assert al.default_method({"alignment": "nonsense"}, layers=2) == al.BEST_METHOD
    assert "masking" in al.BEST_METHOD.describe(3) and "L2 H1 + L1 H2" in m.describe(2)


def test_truecasing_raises_only_what_the_vocabulary_knows_better_and_keeps_lengths(repo_root):
    from nmt_desktop.core.analysis.truecase import truecaser
    from nmt_desktop.core.formats.model_folder import load_model

    tok = load_model(repo_root / "models" / "en-de").tokenizers.target
    tc = truecaser(tok)
    line = "die kommission muss vor ende des jahres einen neuen vorschlag vorlegen ."
    out = tc(line)
    assert out.lower() == line and len(out) == len(line)
    assert out.split()[0] == "Die" and "Vorschlag" in out.split() and "muss" in out.split()
    assert tc("Die Kommission muss .") == "Die Kommission muss ."  # cased text is left alone
    assert tc("straße , 3 .") == "Straße , 3 ."


# --- growing (issue 31) ------------------------------------------------------------------------------


def test_growing_finds_a_one_to_many_link_and_leaves_weak_or_lone_pairs():
    """Rows are target words, columns source words. "environmental policy is ." -> "umweltpolitik ist .": mutual
    links one word to one, so "policy" (whose best target word is "umweltpolitik", next to the link of
    "environmental") is left out; growing adds it. A neighbour that is its word's best but weak against the
    other word's best is not linked, nor a strong best pair that lies next to no link."""
    m = np.array([[0.50, 0.45, 0.05, 0.00, 0.30],   # umweltpolitik
                  [0.05, 0.05, 0.90, 0.03, 0.00],   # ist
                  [0.00, 0.00, 0.05, 0.01, 0.00]])  # . (its best source word, "is", is taken and strong elsewhere)
    # columns: environmental, policy, is, "weak" (best target "ist" at 0.03 < 0.4 * 0.90), "far" (best target
    # "umweltpolitik" at 0.30 >= 0.4 * 0.50, but no link beside (4, 0))
    mutual = al.AlignMethod(decision="mutual", grow=0.0)
    assert al.decide(m, mutual) == [(0, 0), (2, 1)]
    grown = al.decide(m, al.AlignMethod(decision="mutual", grow=0.4))
    assert grown == [(0, 0), (1, 0), (2, 1)]
    assert al.decide(m, al.AlignMethod(decision="mutual", grow=0.95)) == [(0, 0), (2, 1)]  # 0.45 < 0.95 * 0.50


def test_growing_repeats_and_does_not_attach_a_target_word_to_a_linked_source_word():
    """A three-word name to one compound grows over two rounds ("on" is beside "budgets" only once that is linked);
    the German article whose best source word already has its link stays unlinked (the least precise kind of
    candidate on the development sets)."""
    m = np.array([[0.40, 0.20, 0.40, 0.00],   # haushaltsausschuss <- committee on budgets
                  [0.00, 0.00, 0.00, 1.00]])  # tagt <- meets
    assert al.decide(m, al.AlignMethod(grow=0.0)) == [(0, 0), (3, 1)]
    assert al.decide(m, al.AlignMethod(grow=0.4)) == [(0, 0), (1, 0), (2, 0), (3, 1)]
    article = np.array([[0.60, 0.10],   # die <- farmers (but farmers is "landwirte"'s)
                        [0.90, 0.10],   # landwirte
                        [0.10, 0.90]])  # protestieren <- protest
    assert al.decide(article, al.AlignMethod(grow=0.4)) == [(0, 1), (1, 2)]


def test_cards_old_and_new_round_trip():
    """An entry written before issue 31 (no "grow") is read as it was chosen: not grown; new entries keep their
    growing; attribution readings serialise by name; a bad grow ratio names itself."""
    old = {"reading": "masking", "decision": "mutual", "prior": 1.0, "identical": True, "attention_weight": 0.5,
           "layer": None}
    assert al.AlignMethod.from_dict(old) == al.ISSUE23_METHOD and al.ISSUE23_METHOD.grow == 0.0
    assert al.default_method({"alignment": old}, layers=3) == al.ISSUE23_METHOD
    for method in (al.BEST_METHOD, al.OLD_METHOD, al.AlignMethod(reading="saliency", grow=0.3)):
        assert al.AlignMethod.from_dict(method.to_dict()) == method
    assert al.BEST_METHOD.to_dict()["grow"] == al.BEST_METHOD.grow > 0
    assert "grown" in al.BEST_METHOD.describe(3) and "grown" not in al.ISSUE23_METHOD.describe(3)
    with pytest.raises(ValueError, match="grow ratio"):
        al.AlignMethod(grow=-1)
    with pytest.raises(ValueError, match="unknown alignment reading 'nonsense'"):
        al.AlignMethod(reading="nonsense")


def test_an_attribution_method_is_a_reading(monkeypatch):
    """An attribution's source scores (T, S) become word evidence: positive part, source pieces summed per word,
    target pieces averaged, special tokens left out, rows normalised; then the prior, identical words, decision."""
    from nmt_desktop.core.analysis import attribution

    assert al.attribution_methods() == tuple(attribution.METHODS)
    src, tgt = ["▁a", "▁b", "c", "</s>"], ["▁x", "y", "▁z", "</s>"]
    scores = np.array([[0.2, -0.9, 0.1, 5.0],    # x: a; b's negative score counts 0; </s> is no word
                       [0.4, 0.0, 0.0, 0.0],     # y (x's second piece)
                       [-0.3, 0.1, 0.3, 0.0],    # z: b + c
                       [1.0, 1.0, 1.0, 1.0]], dtype=np.float32)  # </s>
    calls = []

    def fake_attribute(translator, translation, method, **options):
        calls.append((method, options))
        return attribution.Attribution(method, src, tgt, scores, np.zeros((4, 4), np.float32), 0.0,
                                       np.zeros(4, np.float32))

    monkeypatch.setattr(attribution, "attribute", fake_attribute)
    tr = fake(np.zeros((1, 1, 4, 4)), src, tgt)
    method = al.AlignMethod(reading="leave_one_out", prior=0.0, identical=False, grow=0.0)
    ev = al.word_evidence(tr, method, translator=object(), attribution_options={"steps": 2})
    assert calls == [("leave_one_out", {"steps": 2})]
    np.testing.assert_allclose(ev, [[0.30 / 0.35, 0.05 / 0.35], [0.0, 1.0]])  # x: mean of x, y
    assert al.decide(ev, method) == [(0, 0), (1, 1)]
    with pytest.raises(ValueError, match="needs the model"):
        al.word_evidence(tr, method)
