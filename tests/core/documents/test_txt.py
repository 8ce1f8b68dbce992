"""Plain-text adapter: one block per line, line ends and the final newline kept."""

from __future__ import annotations

from nmt_desktop.core.documents.blocks import untranslated
from nmt_desktop.core.documents.formats import open_document
from tests.core.documents.fake_translation import MARK, fake_translate_all

TEXTS = {
    "lf.txt": "First line.\n\nThird line after an empty one.\n",
    "crlf.txt": "Windows line\r\n\r\nanother\r\n",
    "no-final.txt": "no final newline\nsecond",
    "mixed.txt": "a\r\nb\nc\rd\n\n",
}


def test_blocks(tmp_path):
    path = tmp_path / "lf.txt"
    path.write_text(TEXTS["lf.txt"], encoding="utf-8")
    document = open_document(path)
    assert [block.text for block in document.blocks] == ["First line.", "", "Third line after an empty one."]
    assert document.blocks[1].runs == [] and document.blocks[2].where == "line 3"


def test_round_trips(tmp_path):
    for name, text in TEXTS.items():
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8"))
        document = open_document(path)
        out = tmp_path / f"out-{name}"
        document.save(out, [untranslated(block) for block in document.blocks])
        assert out.read_bytes() == text.encode("utf-8"), name
        document.save(out, fake_translate_all(document.blocks))
        lines = out.read_bytes().decode("utf-8").splitlines(keepends=True)
        assert [line.rstrip("\r\n") == "" for line in lines] == [b.text == "" for b in document.blocks]
        assert [line[len(line.rstrip("\r\n")):] for line in lines] == document.ends
        assert all(line.startswith(MARK) for line in lines if line.strip())


def test_bom_kept_out_of_the_text_and_line_breaks_in_a_translation_joined(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfone\ntwo\n")
    document = open_document(path)
    assert document.blocks[0].text == "one"
    out = tmp_path / "out.txt"
    document.save(out, [[type(r)(0, "eins\nund")] for r in [untranslated(b)[0] for b in document.blocks]])
    assert out.read_bytes() == b"\xef\xbb\xbfeins und\neins und\n"  # written back with its BOM
