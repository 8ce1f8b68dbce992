"""safety.check_file through the registry: hostile and unreadable files are refused in one sentence naming
the file, fast and with bounded memory, before any format's module is imported (so nothing is written)."""

from __future__ import annotations

import importlib
import zipfile
from pathlib import Path

import docx
import pytest

from nmt_desktop.core.documents import formats, safety
from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats import format_of, open_document
from limits import measured_work

LAUGHS = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
BOMB = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">' + LAUGHS
        + ']><w:document xmlns:w="urn:w"><w:body><w:p>&lol9;</w:p></w:body></w:document>')
XXE = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
       '<w:document xmlns:w="urn:w"><w:body>&e;</w:body></w:document>')
DEEP = "<a>" * 100_000 + "</a>" * 100_000
TYPES = '<?xml version="1.0"?><Types xmlns="urn:t"/>'
CT = "http://schemas.openxmlformats.org/package/2006/content-types"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
DOCX_TYPES = (f'<?xml version="1.0"?><Types xmlns="{CT}"><Default Extension="rels" ContentType="application/'
              f'vnd.openxmlformats-package.relationships+xml"/><Override PartName="/word/document.xml" ContentType='
              f'"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
DOCX_RELS = (f'<?xml version="1.0"?><Relationships xmlns="{RELS}"><Relationship Id="rId1" Type="http://schemas.'
             f'openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
             f'</Relationships>')


def docx_with(document_xml: str) -> dict[str, str]:
    """The members of a .docx whose main part (reached as python-docx reaches it) is `document_xml`."""
    return {"[Content_Types].xml": DOCX_TYPES, "_rels/.rels": DOCX_RELS, "word/document.xml": document_xml}


def epub_with(page: str) -> dict[str, str]:
    """The members of an EPUB whose one chapter, named in its package file, is `page`."""
    return {"mimetype": "application/epub+zip",
            "META-INF/container.xml": '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
                                      'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf"'
                                      ' media-type="application/oebps-package+xml"/></rootfiles></container>',
            "OEBPS/book.opf": '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
                              '<manifest><item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/>'
                              '</manifest><spine><itemref idref="c1"/></spine></package>',
            "OEBPS/ch1.xhtml": page}


def make_zip(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.fixture
def adapters_never_run(monkeypatch):
    """Records any format module the registry imports: a refused file must not reach one."""
    imported: list[str] = []
    real = importlib.import_module

    def spy(name, *args):
        if name.startswith("nmt_desktop.core.documents.formats."):
            imported.append(name)
        return real(name, *args)

    monkeypatch.setattr(formats.importlib, "import_module", spy)
    return imported


def refused(path: Path, *words: str) -> str:
    """open_document's one-sentence DocumentError for `path`, checked to come fast with bounded memory."""
    with measured_work(cpu_s=5, peak_bytes=50_000_000, what=f"refusing {path.name}"), \
            pytest.raises(DocumentError) as caught:
        open_document(path)
    message = str(caught.value)
    assert path.name in message and "\n" not in message and ". " not in message, message
    for word in words:
        assert word in message, message
    return message


def test_zip_bomb_by_ratio(tmp_path, adapters_never_run):
    path = tmp_path / "bomb.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", TYPES)
        with archive.open("word/media/zeros.bin", "w", force_zip64=True) as member:
            chunk = bytes(1 << 20)
            for _ in range(64):  # 64 MB of zeros, stored in about 64 KB
                member.write(chunk)
    assert path.stat().st_size < 1_000_000
    refused(path, "zip bomb", "zeros.bin")
    assert adapters_never_run == []


def test_zip_bomb_by_total_size(tmp_path, monkeypatch, adapters_never_run):
    monkeypatch.setattr(safety, "MAX_UNPACKED", 1_000_000)  # stands for the 1 GB cap, with small data
    path = make_zip(tmp_path / "big.xlsx", {"[Content_Types].xml": TYPES, "xl/a.bin": bytes(2_000_000)})
    refused(path, "unpacks to 2 MB", "zip bomb")
    assert adapters_never_run == []


def test_too_many_members(tmp_path, adapters_never_run):
    path = make_zip(tmp_path / "many.pptx", {f"ppt/x{i}.bin": b"" for i in range(safety.MAX_MEMBERS + 1)})
    refused(path, "10001 files")
    assert adapters_never_run == []


def test_billion_laughs(tmp_path, adapters_never_run):
    path = make_zip(tmp_path / "laughs.docx", docx_with(BOMB))
    refused(path, "word/document.xml", "entities")
    assert adapters_never_run == []


def test_external_entity(tmp_path, adapters_never_run):
    path = make_zip(tmp_path / "xxe.odt", {"mimetype": "application/vnd.oasis.opendocument.text",
                                           "content.xml": XXE})
    refused(path, "content.xml", "entities")
    assert adapters_never_run == []


def test_entity_bomb_in_an_epub_page(tmp_path, adapters_never_run):
    path = make_zip(tmp_path / "book.epub", epub_with(BOMB))
    refused(path, "OEBPS/ch1.xhtml")
    assert adapters_never_run == []


def test_deep_nesting_in_a_docx_member(tmp_path, adapters_never_run):
    path = make_zip(tmp_path / "deep.docx", docx_with(DEEP))
    refused(path, "word/document.xml", "nests elements")
    assert adapters_never_run == []


def test_deep_nesting_in_html(tmp_path, adapters_never_run):
    path = tmp_path / "deep.html"
    path.write_text("<html><body>" + "<div>" * 100_000 + "x" + "</div>" * 100_000 + "</body></html>")
    refused(path, "nests elements")
    assert adapters_never_run == []


def test_entity_declaration_in_html(tmp_path, adapters_never_run):
    path = tmp_path / "laughs.html"
    path.write_text(BOMB.replace("w:document", "html"))
    refused(path, "entities")
    assert adapters_never_run == []


def test_docx_that_is_plain_text(tmp_path, adapters_never_run):
    path = tmp_path / "report.docx"
    path.write_text("just some text, not a zip")
    assert refused(path) == "report.docx is not a Word document: it is not a zip archive"
    assert adapters_never_run == []


def test_encrypted_member(tmp_path, adapters_never_run):
    path = make_zip(tmp_path / "secret.docx", {"[Content_Types].xml": TYPES, "word/document.xml": "<a/>"})
    data = bytearray(path.read_bytes())  # zipfile cannot encrypt: set the "encrypted" flag bit by hand
    for signature, flags in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            data[start + flags] |= 0x1
            start += 4
    path.write_bytes(bytes(data))
    refused(path, "encrypted")
    assert adapters_never_run == []


def test_binary_txt(tmp_path, adapters_never_run):
    path = tmp_path / "image.txt"
    path.write_bytes(b"PNG\x00\x01\x02 text")
    refused(path, "binary")
    assert adapters_never_run == []


def test_non_utf8_markdown_is_read_in_its_encoding(tmp_path):
    path = tmp_path / "latin.md"
    path.write_bytes("# Überschrift\n\nGrüße aus Köln\n".encode("cp1252"))
    assert [block.text for block in open_document(path).blocks] == ["Überschrift", "Grüße aus Köln"]


def test_missing_file_folder_and_size_cap(tmp_path, monkeypatch, adapters_never_run):
    refused(tmp_path / "gone.srt", "does not exist")
    (tmp_path / "folder.vtt").mkdir()
    refused(tmp_path / "folder.vtt", "folder")
    monkeypatch.setattr(safety, "MAX_BYTES", 10)
    big = tmp_path / "big.txt"
    big.write_text("more than ten bytes\n")
    refused(big, "MB")
    assert adapters_never_run == []


def test_real_documents_pass(tmp_path):
    path = tmp_path / "real.docx"
    document = docx.Document()
    document.add_paragraph("A normal document with a table.")
    document.add_table(rows=2, cols=2)
    document.save(path)
    safety.check_file(path, format_of(path))
    page = tmp_path / "latin.html"  # another charset, declared: lxml decodes it
    page.write_bytes('<!DOCTYPE html><html><head><meta charset="iso-8859-1"></head><body><p>Grüße</p>'
                     '</body></html>'.encode("latin-1"))
    safety.check_file(page, format_of(page))
    text = tmp_path / "bom.md"
    text.write_bytes(b"\xef\xbb\xbf# Title\r\n")
    safety.check_file(text, format_of(text))
    assert safety.read_text(text) == "# Title\r\n"
