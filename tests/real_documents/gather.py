"""How the corpus was gathered: each file copied out of a fetched snapshot of its public repository (bare git dirs
under $MIRRORS, named owner+name/repo, as the `fetch` of github:owner/name leaves them), and SOURCES.tsv written
with the repository, path, commit, license and what translate-file must do with the file (`expect`).

    MIRRORS=/work/.mirror python tests/real_documents/gather.py
"""
import os
import subprocess
import zipfile
from pathlib import Path

M = Path(os.environ.get("MIRRORS", "/work/.mirror"))  # bare git dirs: owner+name/repo
OUT = Path(__file__).parent / "files"
REPOS = {  # key: (mirror dir, github name, license of its test data)
    "poi": ("apache+poi", "apache/poi", "Apache-2.0"),
    "tika": ("apache+tika", "apache/tika", "Apache-2.0"),
    "pydocx": ("python-openxml+python-docx", "python-openxml/python-docx", "MIT"),
    "pypptx": ("scanny+python-pptx", "scanny/python-pptx", "MIT"),
    "odfpy": ("eea+odfpy", "eea/odfpy", "Apache-2.0 (odfpy is Apache-2.0/GPL-2.0/LGPL-2.1)"),
    "webvtt": ("glut23+webvtt-py", "glut23/webvtt-py", "MIT"),
    "daw": ("orchetect+DAWFileKit", "orchetect/DAWFileKit", "MIT"),
    "fastapi": ("fastapi+fastapi", "fastapi/fastapi", "MIT"),
    "requests": ("psf+requests", "psf/requests", "Apache-2.0"),
    "mdn": ("mdn+learning-area", "mdn/learning-area", "CC0-1.0"),
    "epub3": ("IDPF+epub3-samples", "IDPF/epub3-samples", "CC-BY-SA-3.0"),
}
rows = []


def _git(git: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(git), *args], capture_output=True, text=True, check=True).stdout


def take(key, path, expect="translate", name=None, note=""):
    """One file; a bare Tika file name is looked up among Tika's test-documents folders (module tests first)."""
    d, repo, lic = REPOS[key]
    git = M / d / "repo"
    full = path
    if "/" not in path and key == "tika":
        names = _git(git, "ls-tree", "-r", "--name-only", "HEAD").split("\n")
        hits = sorted((n for n in names if n.endswith(("/test-documents/" + path, "/versions/" + path))),
                      key=lambda n: ("integration" in n, n))
        assert hits, path
        full = hits[0]
    commit = _git(git, "rev-parse", "HEAD").strip()
    data = subprocess.run(["git", "-C", str(git), "show", f"HEAD:{full}"], capture_output=True, check=True).stdout
    base = name or f"{key}-{Path(path).name}"
    (OUT / base).write_bytes(data)
    rows.append((base, repo, full, commit, lic, expect, note))


OUT.mkdir(parents=True, exist_ok=True)
for f in OUT.iterdir():
    f.unlink()
# --- .docx
for p, e, n in [
    ("test-data/document/delins.docx", "translate", "tracked insertions and deletions (Word)"),
    ("test-data/document/footnotes.docx", "translate", "footnotes"),
    ("test-data/document/endnotes.docx", "translate", "endnotes"),
    ("test-data/document/table_footnotes.docx", "translate", "footnotes in a table"),
    ("test-data/document/headerFooter.docx", "translate", "headers and footers"),
    ("test-data/document/DiffFirstPageHeadFoot.docx", "translate", "first-page header/footer"),
    ("test-data/document/FieldCodes.docx", "translate", "field codes"),
    ("test-data/document/FldSimple.docx", "translate", "simple fields"),
    ("test-data/document/IllustrativeCases.docx", "translate", "assorted Word features"),
    ("test-data/document/drawing.docx", "translate", "drawings and text boxes"),
    ("test-data/document/checkboxes.docx", "translate", "content-control checkboxes"),
    ("test-data/document/comment.docx", "translate", "comments"),
    ("test-data/document/bookmarks.docx", "translate", "bookmarks"),
    ("test-data/document/smarttag-snippet.docx", "translate", "smart tags"),
    ("test-data/document/heading123.docx", "translate", "headings"),
    ("test-data/document/HeaderFooterUnicode.docx", "translate", "non-ASCII header/footer"),
    ("test-data/document/bug53475-password-is-pass.docx", "refuse-encrypted", "password-protected (Office encryption, an OLE file)"),
    ("test-data/document/truncated62886.docx", "refuse-malformed", "a truncated zip"),
]:
    take("poi", p, e, note=n)
for p, e, n in [
    ("testWORD_text_box.docx", "translate", "text boxes"),
    ("testWORD_boldHyperlink.docx", "translate", "a bold hyperlink"),
    ("testWORD_various.docx", "translate", "sub/superscript, footnotes, endnotes, hyperlinks, headers (Word)"),
    ("testWORD_phonetic.docx", "translate", "ruby (phonetic) text"),
    ("testWORD_sdtInTextBox.docx", "translate", "content control in a text box"),
    ("testInstrLink.docx", "translate", "a HYPERLINK field"),
    ("testWORD_protected_passtika.docx", "refuse-encrypted", "password-protected"),
]:
    take("tika", p, e, note=n)
for p, n in [("features/steps/test_files/par-hyperlinks.docx", "hyperlinks (Word)"),
             ("features/steps/test_files/par-hlink-frags.docx", "hyperlinks with fragments"),
             ("features/steps/test_files/hdr-header-footer.docx", "headers and footers"),
             ("features/steps/test_files/comments-rich-para.docx", "comments with formatting"),
             ("features/steps/test_files/tbl-having-tables.docx", "nested tables")]:
    take("pydocx", p, note=n)
# --- .pptx
for p, e, n in [
    ("testPPT_various.pptx", "translate", "sub/superscript, hyperlinks, tables, notes, footers (PowerPoint)"),
    ("testPPT_masterFooter.pptx", "translate", "master footer"),
    ("testPPT_groups.pptx", "translate", "grouped shapes"),
    ("testPPT_comment.pptx", "translate", "comments"),
    ("testWordArt.pptx", "translate", "WordArt"),
    ("testPPT_autodate.pptx", "translate", "date field"),
    ("testOptionalHyphen.pptx", "translate", "optional hyphens"),
    ("testPPT_protected_passtika.pptx", "refuse-encrypted", "password-protected"),
]:
    take("tika", p, e, note=n)
for p, n in [("test-data/slideshow/SampleShow.pptx", "a sample show"),
             ("test-data/slideshow/bug58144-headers-footers-2007.pptx", "headers and footers (PowerPoint 2007)"),
             ("test-data/slideshow/table_test.pptx", "a table"),
             ("test-data/slideshow/with_japanese.pptx", "Japanese text"),
             ("test-data/slideshow/highlight-test-case.pptx", "highlighted runs"),
             ("test-data/slideshow/shapes.pptx", "many shapes")]:
    take("poi", p, note=n)
for p, n in [("features/steps/test_files/sld-notes.pptx", "slide notes"),
             ("features/steps/test_files/txt-text.pptx", "text frames"),
             ("features/steps/test_files/tbl-cell.pptx", "table cells")]:
    take("pypptx", p, note=n)
# --- .xlsx
for p, e, n in [
    ("testEXCEL.xlsx", "translate", "a workbook (Excel)"),
    ("testEXCEL_hyperlinks.xlsx", "translate", "hyperlinks"),
    ("testEXCEL_headers_footers.xlsx", "translate", "headers and footers"),
    ("testEXCEL_textbox.xlsx", "translate", "a text box"),
    ("testEXCEL_phonetic.xlsx", "translate", "phonetic runs"),
    ("testComment.xlsx", "translate", "comments"),
    ("testEXCEL_protected_passtika.xlsx", "refuse-encrypted", "password-protected"),
]:
    take("tika", p, e, note=n)
for p, n in [("test-data/spreadsheet/InlineStrings.xlsx", "inline strings"),
             ("test-data/spreadsheet/SimpleWithComments.xlsx", "comments"),
             ("test-data/spreadsheet/WithTextBox.xlsx", "a text box"),
             ("test-data/spreadsheet/HeaderFooterComplexFormats.xlsx", "formatted headers/footers"),
             ("test-data/spreadsheet/WithVariousData.xlsx", "various data"),
             ("test-data/spreadsheet/SampleSS.xlsx", "sample sheet"),
             ("test-data/spreadsheet/50784-font_theme_colours.xlsx", "rich text runs")]:
    take("poi", p, note=n)
for p, e, n in [("test-data/spreadsheet/sample.xlsx", "translate", "rich-text runs (Excel)"),
                ("test-data/spreadsheet/56511.xlsx", "translate", "rich-text runs"),
                ("test-data/spreadsheet/styles.xlsx", "translate", "rich-text runs"),
                ("test-data/spreadsheet/XSSFSheet.copyRows.xlsx", "translate", "in-cell line breaks"),
                ("test-data/spreadsheet/57523.xlsx", "translate", "in-cell line breaks"),
                ("test-data/spreadsheet/workbookProtection-sheet_password-2013.xlsx", "translate",
                 "a protected sheet (not encrypted: must not be refused)")]:
    take("poi", p, e, note=n)
# --- .odt
for p, e, n in [
    ("testODFwithOOo3.odt", "translate", "OpenOffice 3"),
    ("testFooter.odt", "translate", "footer"),
    ("testOpenOffice2.odt", "translate", "OpenOffice 2"),
    ("testStyles.odt", "translate", "styles"),
    ("testODT_svgTitleInStyledSpan.odt", "translate", "svg:title in a span"),
    ("testODTEncrypted.odt", "refuse-encrypted", "an encrypted ODF package"),
    ("testODTnotaZipFile.odt", "refuse-malformed", "not a zip file"),
]:
    take("tika", p, e, note=n)
take("tika", "LibreOfficeWriter_odt_1.3.odt", note="LibreOffice Writer (ODF 1.3)")
for p, n in [("tests/examples/headerfooter.odt", "header and footer"),
             ("tests/examples/serious_poem.odt", "a poem (OpenOffice)"),
             ("tests/examples/simpletable.odt", "a table"),
             ("tests/examples/twolevellist.odt", "nested lists"),
             ("tests/examples/userfields_ooo3.odt", "user fields (OpenOffice 3)"),
             ("tests/examples/imageslabels.odt", "images with captions")]:
    take("odfpy", p, note=n)
# --- .epub
take("tika", "testEPUB.epub", note="an EPUB")
take("tika", "testEPUB_xml_ext.epub", note="an EPUB with .xml content documents")
# --- .html
for p, n in [("testHTML.html", "a web page"),
             ("testHTMLNoisyMetaEncoding_1.html", "noisy meta charset"),
             ("testHTMLNoisyMetaEncoding_2.html", "noisy meta charset"),
             ("testArabicMisleadingCharset.html", "declared UTF-8, really Windows-1256"),
             ("testHTML_charset_utf16le.html", "UTF-16LE"),
             ("big-preamble.html", "charset declared late (after a long preamble)"),
             ("testXHTML.html", "XHTML"),
             ("resume.html", "a resume (web page)"),
             ("testHTML_utf8.html", "UTF-8")]:
    take("tika", p, note=n)
for p, n in [("html/introduction-to-html/advanced-text-formatting/other-semantics.html", "abbr, sub, sup, code"),
             ("html/introduction-to-html/marking-up-a-letter-finished/index.html",
              "a letter: abbr, time, sub, sup, cite, q, links"),
             ("html/introduction-to-html/tasks/advanced-text/advanced-text2-finished.html", "abbr, time, sub, sup"),
             ("html/introduction-to-html/advanced-text-formatting/quotations.html", "blockquote, q, cite, code"),
             ("html/introduction-to-html/document_and_website_structure/index.html", "a page's structure: nav, links")]:
    take("mdn", p, name="mdn-" + p.split("/")[-2] + "-" + p.split("/")[-1], note=n)
# --- .md
take("tika", "testMARKDOWN.md", note="Markdown")
take("fastapi", "README.md", note="a popular README: many links, code spans, badges")
take("requests", "README.md", note="a popular README")
take("pydocx", "README.md", note="a README")
# --- .srt
take("tika", "test_subrip.srt", note="SubRip")
take("webvtt", "tests/subtitles/sample.srt", note="SubRip")
take("daw", "Tests/DAWFileToolsTests/SRT/Resources/SRT Files/SRT-BOM-CRLF-ExtendedChars.srt",
     name="daw-SRT-BOM-CRLF-ExtendedChars.srt", note="UTF-8 BOM, CRLF")
# --- .vtt
for p, n in [("testWebVTT.vtt", "WebVTT"), ("testWebVTT_header.vtt", "a header"), ("testWebVTT_utf8.vtt", "UTF-8")]:
    take("tika", p, note=n)
for p, n in [("tests/subtitles/captions_with_bom.vtt", "a BOM"), ("tests/subtitles/cue_tags.vtt", "cue tags"),
             ("tests/subtitles/styles.vtt", "STYLE blocks"), ("tests/subtitles/youtube_dl.vtt", "YouTube captions"),
             ("tests/subtitles/using_identifiers.vtt", "cue identifiers"), ("tests/subtitles/comments.vtt", "NOTE blocks")]:
    take("webvtt", p, note=n)
# --- .txt
take("tika", "testTXT_win-1252.txt", note="Windows-1252")
take("tika", "testTXTNonASCIIUTF8.txt", note="non-ASCII UTF-8")
take("tika", "english.txt", note="English prose")
take("poi", "test-data/document/Bug47742-text.txt", note="plain text")


def pack(key, folder, name, note):
    """An EPUB built from a sample's source folder as the sample's own pack script does: mimetype first, stored."""
    d, repo, lic = REPOS[key]
    git = M / d / "repo"
    commit = _git(git, "rev-parse", "HEAD").strip()
    names = _git(git, "ls-tree", "-r", "--name-only", "HEAD", folder).split()
    with zipfile.ZipFile(OUT / name, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), b"application/epub+zip", zipfile.ZIP_STORED)
        for n in names:
            if n.endswith("/mimetype"):
                continue
            data = subprocess.run(["git", "-C", git, "show", f"HEAD:{n}"], capture_output=True).stdout
            member = zipfile.ZipInfo(n[len(folder) + 1:], date_time=(2024, 1, 1, 0, 0, 0))  # the same bytes each time
            z.writestr(member, data, zipfile.ZIP_DEFLATED)
    rows.append((name, repo, folder, commit, lic, "translate", note + " (zipped from the sample's folder)"))


pack("epub3", "30/wasteland", "epub3-wasteland.epub", "The Waste Land: notes, note references, links")


def derive(src, name, encoding, bom, note):
    text = (OUT / src).read_bytes().decode("utf-8-sig")
    data = text.encode(encoding)
    (OUT / name).write_bytes((bom + data) if bom else data)
    r = next(r for r in rows if r[0] == src)
    rows.append((name, r[1], r[2], r[3], r[4], "translate", f"derived: {src} re-encoded as {note}"))

derive("daw-SRT-BOM-CRLF-ExtendedChars.srt", "daw-SRT-ExtendedChars.utf16le-bom.srt", "utf-16-le", b"\xff\xfe",
       "UTF-16LE with a BOM (what Windows tools save)")
derive("tika-test_subrip.srt", "tika-test_subrip.cp1252.srt", "cp1252", b"", "Windows-1252 (French accents)")
with open(OUT.parent / "SOURCES.tsv", "w") as f:
    f.write("file\trepository\tpath\tcommit\tlicense\texpect\tnote\n")
    for r in rows:
        f.write("\t".join(r) + "\n")
print(len(rows))
