"""`translate-file` and `translate --glossary/--dnt`, run for real in child processes on the bundled en-de
model: a .docx translated with its bold word on the aligned words, glossary terms used, a hostile file and a
bad glossary refused in one line with nothing written, and the input never written over."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from cli_runner import assert_one_error_line, run_cli, stdout_lines

docx = pytest.importorskip("docx")  # a dependency of the package: installed in CI, never skipped there


def _make_docx(path: Path) -> Path:
    document = docx.Document()
    document.core_properties.title = "A short report"
    paragraph = document.add_paragraph("I saw the ")
    paragraph.add_run("black dog").bold = True
    paragraph.add_run(" in the garden.")
    document.add_paragraph("My house is big. Visit https://example.com/a?b=1 today.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Thank you very much.", "Where is the station?"
    document.sections[0].header.paragraphs[0].text = "I love you."
    document.save(path)
    return path


def test_translate_file_docx_with_glossary(tmp_path):
    source = _make_docx(tmp_path / "report.docx")
    before = source.read_bytes()
    (tmp_path / "terms.tsv").write_text("source\ttarget\nhouse\tGebäude\n", encoding="utf-8")
    done = run_cli("translate-file", str(source), "-m", "en-de", "--glossary", str(tmp_path / "terms.tsv"))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "report.de.docx"
    assert "report.de.docx: 7 sentences in 6 blocks" in done.stderr and "1 glossary term use: 1 placed" in done.stderr
    assert source.read_bytes() == before
    translated = docx.Document(str(out))
    runs = translated.paragraphs[0].runs
    assert len(runs) == 3 and [r.text for r in runs if r.bold] == ["schwarzen Hund"]
    assert "Gebäude" in translated.paragraphs[1].text and "https://example.com/a?b=1" in translated.paragraphs[1].text
    assert translated.tables[0].cell(0, 0).text.startswith("Vielen Dank")
    assert translated.sections[0].header.paragraphs[0].text == "Ich liebe dich."
    assert translated.core_properties.title != "A short report"
    assert len(translated.paragraphs) == 2
    with zipfile.ZipFile(source) as a, zipfile.ZipFile(out) as b:
        assert a.namelist() == b.namelist()
        assert _styles_but_language(a.read("word/styles.xml")) == _styles_but_language(b.read("word/styles.xml"), "de")


def _styles_but_language(styles: bytes, expected: str | None = None) -> bytes:
    """styles.xml in canonical form without the document's default language, which a translation sets to its
    target language (issue 42); `expected`: that language, checked."""
    from lxml import etree

    root = etree.fromstring(styles)
    w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    for lang in root.iterfind(f"{w}docDefaults/{w}rPrDefault/{w}rPr/{w}lang"):
        if expected is not None:
            assert lang.get(f"{w}val") == expected
        lang.attrib.pop(f"{w}val", None)
    return etree.tostring(root, method="c14n")


def test_hostile_and_bad_inputs_are_one_line_and_write_nothing(tmp_path):
    fake = tmp_path / "fake.docx"
    fake.write_text("not a zip")
    done = run_cli("translate-file", str(fake), "-m", "en-de")
    assert "fake.docx is not a Word document: it is not a zip archive" in assert_one_error_line(done, 1)
    source = _make_docx(tmp_path / "r.docx")
    (tmp_path / "bad.tsv").write_text("dog\tHund\njust one field\n", encoding="utf-8")
    done = run_cli("translate-file", str(source), "-m", "en-de", "--glossary", str(tmp_path / "bad.tsv"))
    assert "bad.tsv, line 2: a glossary line needs a source term and a target term" in assert_one_error_line(done, 1)
    done = run_cli("translate-file", str(source), "-m", "en-de", "-o", str(source))
    assert "r.docx is the file being translated" in assert_one_error_line(done, 1)
    done = run_cli("translate-file", str(source), "-m", "en-de", "--dnt", "(")
    assert done.returncode == 2 and "--dnt '(' is not a valid regular expression" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tsv", "fake.docx", "r.docx"]


def test_translate_lines_with_glossary_and_dnt(tmp_path):
    (tmp_path / "terms.tsv").write_text("dog\tKöter\n", encoding="utf-8")
    done = run_cli("translate", "-m", "en-de", "--glossary", str(tmp_path / "terms.tsv"), "--dnt", r"Zorg-\d+",
                   stdin="The dogs are hungry.\n\nTom installs Zorg-7 now.\n")
    assert done.returncode == 0, done.stderr
    lines = stdout_lines(done)
    assert len(lines) == 3 and "Köter" in lines[0] and lines[1] == "" and "Zorg-7" in lines[2] and "Tom" in lines[2]
    assert "1 glossary term use: 1 placed; 1 of 1 kept span kept" in done.stderr


def test_the_glossary_report_says_what_really_happened_per_term(tmp_path):
    """Placed, and not placed with its reason (the translation kept without it): never "in place" for a
    term that is not there (issue 41: "3 of 3 glossary terms … in place" for "im Kliniktahre")."""
    (tmp_path / "terms.tsv").write_text("hospital\tKlinik\nhouse\t病院\n", encoding="utf-8")
    done = run_cli("translate", "-m", "en-de", "--glossary", str(tmp_path / "terms.tsv"),
                   stdin="My sister works at the hospital in the city.\nThe house is big.\n",
                   env_extra={"OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    lines = stdout_lines(done)
    assert "in der Stadt" in lines[0] and " Klinik " in lines[0], lines
    assert "病院" not in lines[1], lines
    assert "2 glossary term uses: 1 placed, 1 not placed" in done.stderr, done.stderr
    assert '"house" -> "病院" not placed in "The house is big.": ' in done.stderr, done.stderr
    assert "in place" not in done.stderr


def test_help_lists_the_core_formats():
    from nmt_desktop.cli.translate_file import SUFFIXES
    from nmt_desktop.core.documents.formats import SUFFIXES as CORE

    assert SUFFIXES.split() == list(CORE)
