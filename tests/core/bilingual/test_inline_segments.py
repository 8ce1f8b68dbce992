"""inline_segments.py: what the writer does with the orders and texts a real translation gives back (issue 44)."""

from __future__ import annotations

from lxml import etree

from nmt_desktop.core.bilingual import xliff1
from nmt_desktop.core.bilingual.inline_segments import read_segment, settled, write_segment
from nmt_desktop.core.documents.blocks import TranslatedRun

NS = "urn:oasis:names:tc:xliff:document:1.2"


def _segment(xml: str):
    return read_segment(etree.fromstring(f'<source xmlns="{NS}">{xml}</source>'), xliff1.classify)


def _written(segment, runs) -> str:
    target = etree.fromstring(f'<target xmlns="{NS}"/>')
    write_segment(segment, runs, target)
    return etree.tostring(target, encoding="unicode").replace(f' xmlns="{NS}"', "")


def test_a_pair_the_translation_split_is_gathered_once_in_the_source_nesting():
    segment = _segment('A <g id="1">red <g id="2">big</g> car</g> here.')
    assert [r.text for r in segment.runs] == ["A ", "red ", "big", " car", " here."]
    # the translation puts plain text between the two halves of g1: g1 is written once, where it starts
    out = _written(segment, [TranslatedRun(1, "rotes "), TranslatedRun(0, "Ein "), TranslatedRun(2, "großes"),
                             TranslatedRun(4, " hier"), TranslatedRun(3, " Auto")])
    assert out == '<target><g id="1">rotes <g id="2">großes</g> Auto</g>Ein  hier</target>'


def test_standalone_tags_come_back_as_elements_never_as_labels():
    segment = _segment('Press <x id="1"/> then <ph id="2">&lt;br/&gt;</ph>go.')
    labels = [r.text for r in segment.runs if r.verbatim]
    assert labels == ["TAGx1", "TAGph2"]
    out = _written(segment, [TranslatedRun(i, r.text) for i, r in enumerate(segment.runs)][::-1])
    assert out == '<target>go.<ph id="2">&lt;br/&gt;</ph> then <x id="1"/>Press </target>'


def test_a_placeholder_the_model_wrote_twice_is_kept_once():
    segment = _segment("Found %d files in %s now")
    runs = [TranslatedRun(0, "Fand "), TranslatedRun(1, "%d"), TranslatedRun(2, " %s Dateien in "),
            TranslatedRun(3, "%s"), TranslatedRun(4, " jetzt")]
    assert "".join(r.text for r in settled(segment.runs, runs)) == "Fand %d Dateien in %s jetzt"


def test_printf_arguments_without_positions_keep_the_source_order():
    segment = _segment("%s has %d files, %1$s too")
    runs = [TranslatedRun(i, r.text) for i, r in enumerate(segment.runs)]
    moved = [runs[2], runs[1], runs[0], *runs[3:]]  # "%d has %s": printf would read the wrong arguments
    assert "".join(r.text for r in settled(segment.runs, moved)) == "%s has %d files, %1$s too"


def _content(draw, depth: int = 0) -> str:
    """Random XLIFF 1.2 inline content: words, g pairs (nested), bpt/ept pairs, x and ph placeholders."""
    from hypothesis import strategies as st

    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["word", "word", "g", "bpt", "x", "ph"] if depth < 3 else ["word", "x"]))
        n = len(parts) + 10 * depth
        if kind == "word":
            parts.append(draw(st.sampled_from(["red ", "car ", "%d ", "the big ", "{0} "])))
        elif kind == "g":
            parts.append(f'<g id="g{depth}{n}">{_content(draw, depth + 1)}</g>')
        elif kind == "bpt":
            parts.append(f'<bpt id="b{depth}{n}">&lt;b&gt;</bpt>{_content(draw, depth + 1)}<ept id="b{depth}{n}">&lt;/b&gt;</ept>')
        else:
            parts.append(f'<{kind} id="{kind}{depth}{n}"/>' if kind == "x" else f'<ph id="p{depth}{n}">&lt;br/&gt;</ph>')
    return "".join(parts)


def test_any_order_of_the_runs_gives_every_tag_back_once_paired_and_nested():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=150, deadline=None)
    @given(st.data())
    def check(data):
        xml = _content(data.draw)
        segment = _segment(xml)
        order = data.draw(st.permutations(range(len(segment.runs))))
        # the transfer gives a verbatim run (a placeholder, a tag's label) its own text, the others new words
        runs = [TranslatedRun(i, segment.runs[i].text if segment.runs[i].verbatim else segment.runs[i].text.upper())
                for i in order]
        out = etree.fromstring(_written(segment, runs).replace("<target>", f'<target xmlns="{NS}">'))
        again = read_segment(out, xliff1.classify)
        assert sorted((t.kind, t.id, t.name) for t in again.tags) == sorted((t.kind, t.id, t.name) for t in segment.tags)
        stack = []
        for tag in again.tags:  # every open closed after it by the same id, in nesting order
            if tag.kind == "open":
                stack.append(tag.id)
            elif tag.kind == "close":
                assert stack and stack.pop() == tag.id, (xml, again.tags)
        assert not stack
        written = "".join(r.text for r in runs if segment.slots[r.index].marker is None)
        assert sorted(again.text) == sorted(written)  # every run's text once; the tags' labels never

    check()
