"""inline_transfer.transfer with the runs' source texts: nothing of the source is lost (issue 42). Each case is
a block as the adapters read it and a target the real model gave or could give, with alignments written
out, so the rule is tested without a model; test_nothing_lost.py runs the real model over real files."""

from __future__ import annotations

import numpy as np

from nmt_desktop.core.documents.inline_transfer import RunInfo, transfer


def infos(*runs: tuple[str, str]) -> list[RunInfo]:
    """("plain" | "style" | "verbatim", text) -> RunInfo with its source text."""
    return [RunInfo(kind != "plain", bool(text.strip()), kind == "verbatim", text) for kind, text in runs]


def texts(out) -> dict[int, str]:
    return {t.index: t.text for t in out}


def joined(out) -> str:
    return "".join(t.text for t in out)


def test_a_word_split_between_runs_is_split_the_same_way_in_the_translation() -> None:
    runs = infos(("plain", "Water is H"), ("style", "2"), ("plain", "O."))
    words = "Wasser ist H2O.".split()
    source_runs = [0, 0, 0]  # the word "H2O." belongs to its plain run by most characters
    out = transfer(runs, source_runs, words, np.eye(3), [(0, 0), (1, 1), (2, 2)], {})
    assert texts(out)[1] == "2"
    assert joined(out) == "Wasser ist H2O."
    assert [t.index for t in out if t.text] == [0, 1, 2]


def test_a_superscript_the_model_glued_into_a_number_keeps_its_digits() -> None:
    runs = infos(("plain", "about 6 x 10"), ("style", "23"), ("plain", " particles"))
    words = "etwa 6 x 1023 Teilchen".split()
    source_runs = [0, 0, 0, 0, 2]
    out = transfer(runs, source_runs, words, np.zeros((5, 5)), [(i, i) for i in range(5)], {})
    assert texts(out)[1] == "23"
    assert joined(out) == "etwa 6 x 1023 Teilchen"


def test_a_marker_nothing_aligns_to_keeps_its_own_text_glued_where_it_was() -> None:
    runs = infos(("plain", "The end"), ("style", "1"), ("plain", " of it."))
    words = "Das Ende davon.".split()
    fixed = {0: 0, 1: 0, 2: 2}  # every target word is somebody else's
    out = transfer(runs, [0, 0, 1, 2, 2], words, np.zeros((3, 5)), [], fixed)
    assert texts(out)[1] == "1"
    assert joined(out) in ("Das Ende davon.1", "Das Ende1 davon.")  # glued, as in the source


def test_a_link_is_never_emptied() -> None:
    runs = infos(("plain", "See "), ("style", "the report"), ("plain", " now."))
    words = "Siehe jetzt.".split()
    out = transfer(runs, [0, 1, 1, 2], words, np.zeros((2, 4)), [], {0: 0, 1: 2})
    assert texts(out)[1].strip()


def test_a_url_link_keeps_its_url_even_when_aligned_to_plain_words() -> None:
    runs = infos(("plain", "Visit "), ("style", "https://example.org/a"), ("plain", " today."))
    words = "Besuchen Sie https://example.org/a heute.".split()
    links = [(0, 0), (0, 1), (0, 2), (2, 3)]  # the URL aligned to "Visit", as the real model did
    out = transfer(runs, [0, 1, 2], words, np.zeros((4, 3)), links, {})
    assert texts(out)[1] == "https://example.org/a"
    assert joined(out) == "Besuchen Sie https://example.org/a heute."


def test_a_verbatim_run_holds_only_its_own_text_and_the_comma_between_code_spans_stays() -> None:
    runs = infos(("plain", "Install it with "), ("verbatim", "apt"), ("plain", ", "), ("verbatim", "yum"),
                 ("plain", " on Linux."))
    words = "Installiere es mit apt, yum unter Linux.".split()
    fixed = {3: 1, 4: 3}
    out = transfer(runs, [0, 0, 0, 1, 3, 4, 4], words, np.zeros((7, 7)), [(i, i) for i in range(7)], fixed)
    assert texts(out)[1] == "apt" and texts(out)[3] == "yum"
    order = [t.index for t in out]
    between = out[order.index(1) + 1: order.index(3)]
    assert "," in "".join(t.text for t in between)
    assert joined(out).replace("apt", "`apt`").replace("yum", "`yum`") == \
        "Installiere es mit `apt`, `yum` unter Linux."


def test_two_code_spans_the_model_put_side_by_side_get_the_source_separator_back() -> None:
    runs = infos(("plain", "Use "), ("verbatim", "apt"), ("plain", ", "), ("verbatim", "yum"), ("plain", " now."))
    words = "Nutze apt yum jetzt.".split()  # the model dropped the comma
    out = transfer(runs, [0, 1, 3, 4], words, np.zeros((4, 4)), [(0, 0), (3, 3)], {1: 1, 2: 3})
    order = [t.index for t in out]
    assert abs(order.index(1) - order.index(3)) == 2
    middle = out[min(order.index(1), order.index(3)) + 1]
    assert middle.text == ", " and not runs[middle.index].formatted


def test_words_around_a_verbatim_placeholder_go_to_plain_text() -> None:
    runs = infos(("plain", "or visit "), ("verbatim", "<https://example.org>"), ("plain", "."))
    words = "oder besuchen Sie <https://example.org> heute.".split()
    links = [(0, 0), (1, 1), (1, 2), (2, 3), (2, 4)]  # "heute" aligned to the placeholder too
    out = transfer(runs, [0, 0, 1, 2], words, np.zeros((5, 4)), links, {3: 1})
    assert texts(out)[1] == "<https://example.org>"
    assert "heute" in joined([t for t in out if t.index != 1])


def test_without_source_texts_the_old_callers_get_what_they_got() -> None:
    runs = [RunInfo(False, True), RunInfo(True, True), RunInfo(False, True)]
    out = transfer(runs, [0, 1, 2, 2], "a b c d".split(), np.zeros((4, 4)), [(0, 0), (1, 1), (2, 2), (3, 3)], {})
    assert joined(out) == "a b c d"
    assert texts(out)[1] == "b"


def test_a_word_glued_to_a_code_span_stays_in_the_bold_around_it() -> None:
    runs = infos(("plain", "The "), ("style", "HTML "), ("verbatim", "<q>"), ("style", " element"), ("plain", " quotes."))
    words = "Das HTML-<q>-Element zitiert.".split()
    links = [(0, 0), (1, 1), (3, 1), (4, 2)]
    out = transfer(runs, [0, 1, 2, 3, 4], words, np.zeros((3, 5)), links, {1: 2})
    assert texts(out)[2] == "<q>"
    assert texts(out)[3] == "-Element"
    assert joined(out) == "Das HTML-<q>-Element zitiert."


def test_the_space_between_two_formatted_stretches_goes_where_the_source_had_it() -> None:
    """<b>red</b> then " car" (a look of its own before a marker): the space starts " Wagen", it does not end
    the bold word ("<b>roten </b>Wagen")."""
    runs = infos(("plain", "I like the "), ("style", "red"), ("style", " car"), ("plain", " but he likes blue."))
    words = "Ich mag den roten Wagen, aber er mag blau.".split()
    source_runs = [0, 0, 0, 1, 2, 3, 3, 3, 3]
    links = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (8, 8)]
    out = transfer(runs, source_runs, words, np.eye(9), links, {})
    assert [(t.index, t.text) for t in out] == [(0, "Ich mag den "), (1, "roten"), (2, " Wagen"),
                                                (3, ", aber er mag blau.")]


def test_white_space_around_a_span_takes_no_words_so_the_span_stays_whole() -> None:
    """tika's resume.html with the bundled model: the cell's white space before a <span> got the unaligned
    words of the translation between the span's runs, which split the span in two."""
    runs = infos(("plain", "\n   "), ("style", "If you have wishes, please "), ("style", "write to us"),
                 ("style", "."), ("plain", "\n   "))
    words = "Bitte schreiben Sie uns N N N wenn Sie Wünsche haben .".split()
    source_runs = [1, 1, 1, 1, 1, 2, 2, 2, 3]
    links = [(4, 0), (5, 1), (6, 3), (0, 8), (2, 10), (3, 9)]
    out = transfer(runs, source_runs, words, np.zeros((11, 9)), links, {}, "\n   ", "\n   ")
    assert {t.index for t in out if t.text.strip()} == {1, 2, 3}, out  # the span's runs only: one span
    assert "".join(t.text for t in out).split() == words and joined(out).startswith("\n   "), out


def test_a_note_reference_glued_to_the_text_before_it_puts_no_space_into_a_superscript_before_it() -> None:
    # "Light at 10<sup>8</sup> per second.<sup><a>1</a></sup>": the model put the note's "1" right after "108";
    # the space between the two would go into the <sup>8</sup> (the verbatim note cannot hold it): none is put
    runs = infos(("plain", "Light at 10"), ("style", "8"), ("plain", " per second."), ("verbatim", "1"))
    words = "Licht pro Sekunde bei 108 1".split()
    links = [(0, 0), (1, 3), (2, 4), (3, 1), (4, 2)]
    out = transfer(runs, [0, 0, 0, 2, 2], words, np.zeros((6, 5)), links, {5: 3})
    assert [(t.index, t.text) for t in out if t.text] == [(2, "Licht pro Sekunde bei 10"), (1, "8"), (3, "1")]
