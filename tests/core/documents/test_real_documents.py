"""Every file of the corpus of real documents (tests/real_documents/: Word, LibreOffice, PowerPoint, Excel, web pages,
subtitle tools, READMEs; SOURCES.tsv says where each comes from) read, translated by the fake translation and
written back, then held to the fidelity check (tests/real_documents/fidelity.py) with the format's own library:
same elements, links, no text left as the source, other package members unchanged, cues intact. A file that must
be refused (encrypted, truncated, not a zip) is refused in one sentence naming it.

The model is not the point here (benchmarks/real_documents.py runs the real CLI and model over the same files):
the fake translation upper-cases every run and reverses a block's runs, as a real translation reorders them.

A file that fails today because of a known bug is in KNOWN_BUGS (strict xfail): whoever fixes the bug sees its
test XPASS and deletes the line.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats import open_document
from tests.core.documents.fake_translation import fake_translate_all
from tests.real_documents.fidelity import REFUSAL_REASONS, compare

CORPUS = Path(__file__).parents[2] / "real_documents"
with open(CORPUS / "SOURCES.tsv", newline="", encoding="utf-8") as _f:
    SOURCES = {row["file"]: row for row in csv.DictReader(_f, delimiter="\t")}

# file -> the bug that makes it fail today, in one sentence. Delete the line when the test XPASSes.
KNOWN_BUGS: dict[str, str] = {}


def _param(name: str):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name])] if name in KNOWN_BUGS else []
    return pytest.param(name, marks=marks, id=name)


def test_the_corpus_is_what_sources_lists():
    files = {p.name for p in (CORPUS / "files").iterdir()}
    assert files == set(SOURCES), (files ^ set(SOURCES))
    assert set(KNOWN_BUGS) <= files
    assert {row["expect"] for row in SOURCES.values()} <= {"translate", *REFUSAL_REASONS}


def test_the_check_sees_untranslated_text_and_a_lost_link(tmp_path):
    """The yardstick can fail: a copy of the source is "left as the source", and a link taken out is missed."""
    source = CORPUS / "files" / "tika-testWORD_boldHyperlink.docx"
    copy = compare(source, source)
    assert copy.kinds()["untranslated"] == 1 and set(copy.kinds()) == {"untranslated"}, copy.summary()
    import zipfile

    output = tmp_path / "unlinked.docx"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(output, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:hyperlink ", b"<w:smartTag w:x=\"1\" ").replace(b"</w:hyperlink>",
                                                                                        b"</w:smartTag>")
            zout.writestr(item, data)
    unlinked = compare(source, output)
    assert {"elements", "links"} <= set(unlinked.kinds()), unlinked.summary()


def test_the_check_sees_text_destroyed_by_a_wrong_character_set(tmp_path):
    """The page declared UTF-8 that is Windows-1256: written back from a UTF-8 reading with errors replaced, its
    Arabic is gone, which the check names."""
    source = CORPUS / "files" / "tika-testArabicMisleadingCharset.html"
    output = tmp_path / source.name
    output.write_bytes(source.read_bytes().decode("utf-8", "replace").encode("utf-8"))
    assert "U+FFFD" in compare(source, output).summary()


@pytest.mark.parametrize("name", [_param(n) for n in sorted(SOURCES)])
def test_real_document(name, tmp_path):
    source = CORPUS / "files" / name
    if SOURCES[name]["expect"].startswith("refuse"):
        with pytest.raises(DocumentError) as refused:
            open_document(source)
        message = str(refused.value)
        assert name in message and "\n" not in message, message
        assert re.search(REFUSAL_REASONS[SOURCES[name]["expect"]], message.replace(name, ""), re.I), message
        return
    document = open_document(source)
    output = tmp_path / name
    document.save(output, fake_translate_all(document.blocks))
    result = compare(source, output)
    assert result.checks > 0
    assert result.ok, result.summary()
