"""A sentence longer than the model takes, in a document (issue 42): cut at clauses, then hard on words,
never refused; each piece a substring of the sentence, in order, none over the limit."""

from __future__ import annotations

from nmt_desktop.core.decoding.document import line_units, sentence_pieces


def words(text: str) -> list[int]:
    return [0] * len(text.split())  # a word a token


def characters(text: str) -> list[int]:
    return [0] * len(text)


def test_a_sentence_that_fits_is_one_piece():
    assert sentence_pieces("one two three", words, 3) == [("one two three", [0, 0, 0])]


def test_clauses_are_cut_at_commas_and_merged_again_while_they_fit():
    sentence = "red cat, blue dog, green bird, small fish runs"
    assert [p for p, _ in sentence_pieces(sentence, words, 4)] == ["red cat, blue dog,", "green bird,",
                                                                    "small fish runs"]


def test_semicolons_come_before_commas_and_conjunctions_before_hard_cuts():
    sentence = "one two, three; four five six seven and eight nine"
    assert [p for p, _ in sentence_pieces(sentence, words, 4)] == ["one two, three;", "four five six seven",
                                                                   "and eight nine"]


def test_a_sentence_without_clauses_is_cut_hard_between_words_at_the_limit():
    sentence = " ".join(f"w{i}" for i in range(10))
    pieces = sentence_pieces(sentence, words, 4)
    assert [p for p, _ in pieces] == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9"]


def test_a_word_over_the_limit_is_cut_between_characters():
    assert [p for p, _ in sentence_pieces("ab abcdefg", characters, 3)] == ["ab", "abc", "def", "g"]


def test_a_400_token_list_is_cut_into_pieces_that_fit_and_cover_it_in_order():
    sentence = ", ".join(f"attribute{i} value" for i in range(200))  # 400 words, commas only
    pieces = sentence_pieces(sentence, words, 64)
    assert all(len(ids) <= 64 for _p, ids in pieces) and len(pieces) == 7
    cursor = 0
    for piece, _ids in pieces:
        found = sentence.index(piece, cursor)
        assert sentence[cursor:found].strip() == ""
        cursor = found + len(piece)
    assert cursor == len(sentence)


def test_cut_long_units_never_refuse_while_the_typed_line_policy_still_does():
    line = "Short one. " + " ".join(["word"] * 9)
    assert [p for p, _ in line_units(line, words, 4, cut_long=True)] == [
        "Short one.", "word word word word", "word word word word", "word"]


def test_a_huge_word_is_cut_without_tokenizing_it_whole_at_every_cut():
    seen = [0]

    def counted(text: str) -> list[int]:
        seen[0] += len(text)
        return [0] * len(text)

    blob = "x" * 20_000  # a base64 image or a minified line: one "word"
    pieces = sentence_pieces(blob, counted, 64)
    assert "".join(p for p, _ in pieces) == blob and all(len(ids) <= 64 for _p, ids in pieces)
    assert seen[0] < 50 * len(blob)  # each cut looks at a window near it, not at the rest of the blob
