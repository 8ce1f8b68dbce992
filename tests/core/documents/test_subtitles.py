"""SubRip and WebVTT adapters: files with every feature round-tripped through the fake (run-reversing)
translation and `untranslated` (which gives back the original bytes), and the cue re-wrapping."""

from __future__ import annotations

import re
from pathlib import Path

import srt
import webvtt

from nmt_desktop.core.documents.blocks import untranslated
from nmt_desktop.core.documents.formats import open_document
from nmt_desktop.core.documents.formats.srt import look, wrap
from tests.core.documents.fake_translation import MARK, fake_translate_all

SRT = """1
00:00:01,000 --> 00:00:03,500
Hello, <i>my friend</i>.

2
00:00:04,000 --> 00:00:08,250
This cue has two lines of text that
<b>together</b> are too long for one line.

3
00:00:09,000 --> 00:00:10,000 X1:100 X2:200 Y1:10 Y2:50
{\\an8}<font color="#ffff00">Up here</font> in yellow

4
00:01:00,000 --> 00:01:02,000
<i>A single</i>
<i>italic cue</i>

"""

VTT = """WEBVTT - the test file
Kind: captions

NOTE a comment
over two lines

STYLE
::cue(.yellow) { color: yellow }

intro
00:00:01.000 --> 00:00:03.500 align:start line:0 position:10%
<v Roger>Hello <i>there</i> &amp; welcome to a long
sentence on two lines

NOTE in between

00:00:04.000 --> 00:00:05.000
<c.yellow>Bye</c> for now

00:00:06.000 --> 00:00:07.000 size:50%
<v.loud Anna>Short
"""

TAGS = re.compile(r"<[^>]*>|\{\\[^}]*\}")


def visible(line: str) -> str:
    return TAGS.sub("", line).replace("&amp;", "&")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_srt_blocks(tmp_path):
    document = open_document(write(tmp_path, "film.srt", SRT))
    assert [block.text for block in document.blocks] == [
        "Hello, my friend.", "This cue has two lines of text that together are too long for one line.",
        "Up here in yellow", "A single italic cue"]
    assert [look(run.style) for run in document.blocks[0].runs] == [(), (("i", "<i>"),), ()]
    assert look(document.blocks[2].runs[0].style) == (("font", '<font color="#ffff00">'),)
    assert document.blocks[0].where == "cue 1 (00:00:01,000)"


def test_srt_fake_translation_round_trip(tmp_path):
    document = open_document(write(tmp_path, "film.srt", SRT))
    out = tmp_path / "out.srt"
    document.save(out, fake_translate_all(document.blocks))
    before, after = list(srt.parse(SRT)), list(srt.parse(out.read_text(encoding="utf-8")))
    assert [(s.index, s.start, s.end, s.proprietary) for s in after] == \
        [(s.index, s.start, s.end, s.proprietary) for s in before]
    for sub in after:
        lines = sub.content.split("\n")
        assert 1 <= len(lines) <= 2 and all(len(visible(line)) <= 42 for line in lines), lines
        assert visible(sub.content).count(MARK.strip()) >= 1
    assert after[0].content == "ÜT .<i>ÜT MY FRIEND</i>ÜT HELLO,"
    assert after[1].content.count("<b>") == 1 and len(after[1].content.split("\n")) == 2
    assert after[2].content == '{\\an8}ÜT IN YELLOW<font color="#ffff00">ÜT UP HERE</font>'
    assert after[3].content == "<i>ÜT A SINGLE ITALIC CUE</i>"


def test_srt_untranslated_gives_the_original_bytes(tmp_path):
    for name, text in (("lf.srt", SRT), ("crlf.srt", SRT.replace("\n", "\r\n"))):
        document = open_document(write(tmp_path, name, text))
        out = tmp_path / f"out-{name}"
        document.save(out, [untranslated(block) for block in document.blocks])
        assert out.read_bytes() == text.encode("utf-8")


def test_vtt_blocks(tmp_path):
    document = open_document(write(tmp_path, "film.vtt", VTT))
    assert [block.text for block in document.blocks] == [
        "Hello there & welcome to a long sentence on two lines",
        "Bye for now", "Short"]
    assert look(document.blocks[0].runs[1].style) == (("v", "<v Roger>"), ("i", "<i>"))
    assert look(document.blocks[1].runs[0].style) == (("c", "<c.yellow>"),)


def test_vtt_fake_translation_round_trip(tmp_path):
    document = open_document(write(tmp_path, "film.vtt", VTT))
    out = tmp_path / "out.vtt"
    document.save(out, fake_translate_all(document.blocks))
    text = out.read_text(encoding="utf-8")
    before, after = webvtt.from_string(VTT).captions, webvtt.from_string(text).captions
    assert [(c.identifier, c.start, c.end, c.settings) for c in after] == \
        [(c.identifier, c.start, c.end, c.settings) for c in before]
    assert text.startswith(VTT[:VTT.index("intro")])  # header, NOTE and STYLE byte for byte
    assert "\n\nNOTE in between\n\n" in text
    assert "00:00:01.000 --> 00:00:03.500 align:start line:0 position:10%\n" in text
    for caption in after:
        lines = caption.raw_text.split("\n")
        assert 1 <= len(lines) <= 2 and all(len(visible(line)) <= 42 for line in lines), lines
        assert MARK.strip() in caption.text
    assert [c.voice for c in after] == ["Roger", None, "Anna"]
    assert "&amp;" in after[0].raw_text and "<i>ÜT THERE</i>" in after[0].raw_text
    assert after[1].raw_text == "ÜT  FOR NOW<c.yellow>ÜT BYE</c>".replace("  ", " ")


def test_vtt_untranslated_gives_the_original_bytes(tmp_path):
    document = open_document(write(tmp_path, "film.vtt", VTT))
    out = tmp_path / "out.vtt"
    document.save(out, [untranslated(block) for block in document.blocks])
    assert out.read_bytes() == VTT.encode("utf-8")


def test_wrap():
    assert wrap("Short enough") == ["Short enough"]
    text = "A sentence that is clearly longer than forty-two characters in all"
    lines = wrap(text)
    assert len(lines) == 2 and all(len(line) <= 42 for line in lines) and " ".join(lines) == text
    assert abs(len(lines[0]) - len(lines[1])) <= 10  # balanced, not greedy
    tagged = wrap("<i>A sentence that is clearly longer</i> than forty-two characters in all")
    assert [visible(line) for line in tagged] == lines
    word = "Donaudampfschifffahrtsgesellschaftskapitänsmütze"  # one word over 42: kept whole
    assert wrap(word) == [word]
    long = " ".join(["word"] * 40)  # too long for 2 lines of 42: more lines of 42, never an overlong one
    assert len(wrap(long)) == 5 and " ".join(wrap(long)) == long
    assert all(len(line) <= 42 for line in wrap(long))


DIALOGUE = """1
00:00:01,000 --> 00:00:03,000
- Where are you going?
- Home.

2
00:00:04,000 --> 00:00:06,000
<i>- Did you see it
at the station?</i>
<i>- No.</i>

3
00:00:07,000 --> 00:00:09,000
-It is late.
-Not that late.

4
00:00:10,000 --> 00:00:12,000
Who is there?
- Only me.

"""


def test_speaker_dashes_are_kept_a_turn_per_line(tmp_path):
    """Issue 42: the dashes of 128 of 128 two-speaker cues were dropped (the turns joined into one block)."""
    document = open_document(write(tmp_path, "dialogue.srt", DIALOGUE))
    assert [b.text for b in document.blocks] == [
        "Where are you going?", "Home.", "Did you see it at the station?", "No.", "It is late.", "Not that late.",
        "Who is there?", "Only me."]
    assert document.blocks[1].where == "cue 1 (00:00:01,000), speaker 2"
    assert look(document.blocks[2].runs[0].style) == look(document.blocks[3].runs[0].style) == (("i", "<i>"),)
    out = tmp_path / "out.srt"
    document.save(out, fake_translate_all(document.blocks))
    after = [sub.content.split("\n") for sub in srt.parse(out.read_text(encoding="utf-8"))]
    assert after == [["- ÜT WHERE ARE YOU GOING?", "- ÜT HOME."],
                     ["- <i>ÜT DID YOU SEE IT AT THE STATION?</i>", "- <i>ÜT NO.</i>"],
                     ["-ÜT IT IS LATE.", "-ÜT NOT THAT LATE."], ["ÜT WHO IS THERE?", "- ÜT ONLY ME."]]
    document.save(out, [untranslated(b) for b in document.blocks])
    assert out.read_bytes() == DIALOGUE.encode()


def test_cues_without_numbers_are_numbered(tmp_path):
    """Issue 42: every cue was written as number 0 when the source had none."""
    text = "00:00:01,000 --> 00:00:02,000\nHello.\n\n00:00:03,000 --> 00:00:04,000\nGoodbye.\n"
    document = open_document(write(tmp_path, "bare.srt", text))
    out = tmp_path / "out.srt"
    document.save(out, fake_translate_all(document.blocks))
    assert [sub.index for sub in srt.parse(out.read_text(encoding="utf-8"))] == [1, 2]
    assert out.read_text(encoding="utf-8").startswith("1\n00:00:01,000")


def test_a_long_translation_gets_lines_of_42_not_two_overlong_ones(tmp_path):
    """Issue 42: translations came back as 2 lines of 99-318 characters."""
    text = "1\n00:00:01,000 --> 00:00:05,000\nA short cue that\nfits in two lines.\n"
    document = open_document(write(tmp_path, "short.srt", text))
    long = "Ein sehr viel längerer Satz, der als Übersetzung zurückkommt und " * 3
    out = tmp_path / "out.srt"
    document.save(out, [[type(untranslated(document.blocks[0])[0])(0, long.strip())]])
    lines = list(srt.parse(out.read_text(encoding="utf-8")))[0].content.split("\n")
    assert " ".join(lines) == long.strip() and all(len(line) <= 42 for line in lines), lines
    wide = "1\n00:00:01,000 --> 00:00:05,000\n" + "A source whose own line is wider than forty-two characters.\n"
    document = open_document(write(tmp_path, "wide.srt", wide))
    document.save(out, [[type(untranslated(document.blocks[0])[0])(0, "Eine Zeile, die so breit ist wie die der Quelle.")]])
    assert list(srt.parse(out.read_text(encoding="utf-8")))[0].content.count("\n") == 0


def test_a_tag_opened_twice_is_closed_once(tmp_path):
    """Issue 42: doubled </u></u> when a source opened <u> again inside an open <u>."""
    text = "1\n00:00:01,000 --> 00:00:02,000\n<u>Underlined <u>words</u> here</u>\n"
    document = open_document(write(tmp_path, "u.srt", text))
    out = tmp_path / "out.srt"
    document.save(out, fake_translate_all(document.blocks, reverse=False))
    content = list(srt.parse(out.read_text(encoding="utf-8")))[0].content
    assert "</u></u>" not in content and content.count("<u>") == content.count("</u>") == 1, content


def test_vtt_dialogue_dashes(tmp_path):
    text = "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n- Are you there?\n- Yes &amp; no.\n"
    document = open_document(write(tmp_path, "d.vtt", text))
    assert [b.text for b in document.blocks] == ["Are you there?", "Yes & no."]
    out = tmp_path / "out.vtt"
    document.save(out, fake_translate_all(document.blocks))
    assert out.read_text(encoding="utf-8").endswith("- ÜT ARE YOU THERE?\n- ÜT YES &amp; NO.\n")


VTT_AS_WEBVTT_PY_READS = [  # each read one way by webvtt-py and another by a blank-line split (issue 42)
    "WEBVTT\n\n00:01.000 --> 00:02.000\nHello there.\n00:03.000 --> 00:04.000\nWorld.\n",  # no blank line between
    "WEBVTT\n\n00:01.000 --> 00:02.000\nHello there.\n \nagain.\n\n00:03.000 --> 00:04.000\nWorld.\n",  # spaces line
    "WEBVTT\n\n00:01 --> 00:02\nNot a cue.\n\n00:03.000 --> 00:04.000\nWorld.\n",  # malformed timings: skipped
    "WEBVTT\n00:01.000 --> 00:02.000\nNo blank line after the header.\n",
]


def test_vtt_cues_are_found_where_webvtt_py_reads_them(tmp_path):
    for number, text in enumerate(VTT_AS_WEBVTT_PY_READS):
        path = write(tmp_path, f"case{number}.vtt", text)
        document = open_document(path)
        captions = webvtt.from_string(text).captions
        assert [b.text for b in document.blocks] == [" ".join(c.raw_text.split()) for c in captions], text
        out = tmp_path / f"out{number}.vtt"
        document.save(out, [untranslated(b) for b in document.blocks])
        assert out.read_bytes() == path.read_bytes()
        document.save(out, fake_translate_all(document.blocks))
        after = webvtt.from_string(out.read_text(encoding="utf-8")).captions
        assert [(c.start, c.end) for c in after] == [(c.start, c.end) for c in captions]
        assert all(c.raw_text.startswith(MARK) for c in after), [c.raw_text for c in after]


def test_dashes_that_frame_a_line_are_no_speakers_and_no_line_starts_with_one(tmp_path):
    """A credit framed by dashes ('- Author -' / '-- www --', as subtitle tools write it) is one text, and a
    re-wrapped line never starts with a dash (it would read as a new speaker); an interrupted speaker
    ('- But I -') still is one."""
    text = ("1\n00:00:01,000 --> 00:00:02,000\n- <font color=\"#D81D1D\">Subtitles Author</font> -\n"
            "-- <font color=\"#138CE7\">www.example.com</font> --\n\n"
            "2\n00:00:03,000 --> 00:00:04,000\n- But I thought -\n- No!\n")
    document = open_document(write(tmp_path, "credits.srt", text))
    assert [b.text for b in document.blocks] == ["Subtitles Author", "www.example.com", "But I thought -", "No!"]
    out = tmp_path / "out.srt"
    document.save(out, fake_translate_all(document.blocks))
    first, second = (sub.content.split("\n") for sub in srt.parse(out.read_text(encoding="utf-8")))
    assert first == ['- <font color="#D81D1D">ÜT SUBTITLES AUTHOR</font> -',
                     '-- <font color="#138CE7">ÜT WWW.EXAMPLE.COM</font> --'], first
    assert [visible(line)[:2] for line in second] == ["- ", "- "], second
    assert wrap("Ein Satz, der lang genug ist, um umbrochen zu werden - und dann -- noch mehr") == [
        "Ein Satz, der lang genug ist, um umbrochen", "zu werden - und dann -- noch mehr"]


KARAOKE = """WEBVTT

00:05:04.080 --> 00:05:05.069 align:start position:0%
this<00:05:04.199><c> will</c><c.colorE5E5E5><00:05:04.379><c> happen</c></c><c.colorCCCCCC><00:05:04.620><c> is</c></c>
"""


def test_a_karaoke_cue_keeps_one_element_per_element_when_the_words_move(tmp_path):
    """YouTube's captions put each word in its own <c> inside coloured <c>s; the translation reorders the runs,
    and an element whose runs land apart was written twice (</c> 10 -> 11 on a real file): written once now."""
    from nmt_desktop.core.documents.blocks import TranslatedRun

    document = open_document(write(tmp_path, "karaoke.vtt", KARAOKE))
    block = document.blocks[0]
    texts = {r: run.text for r, run in enumerate(block.runs)}
    # the words first, the timestamps (verbatim runs inside the coloured <c>s) after them all: each coloured
    # <c> now has runs on both sides of the other words
    moved = [TranslatedRun(r, texts[r].upper()) for r, run in enumerate(block.runs) if not run.verbatim] + \
        [TranslatedRun(r, texts[r]) for r, run in enumerate(block.runs) if run.verbatim]
    out = tmp_path / "out.vtt"
    document.save(out, [moved])
    written = out.read_text(encoding="utf-8")
    source = KARAOKE
    for tag in ("<c>", "<c.colorE5E5E5>", "<c.colorCCCCCC>", "</c>"):
        assert written.count(tag) == source.count(tag), (tag, written)
