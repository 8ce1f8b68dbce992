"""Zipped documents (issue 42): refused only when really encrypted, truncated, malformed or hostile, and then
said which. Password-protected files are made as Office makes them (msoffcrypto-tool writes the MS-OFFCRYPTO
compound file Office writes) and as LibreOffice writes them (its manifest's encryption data); LibreOffice's
empty Configurations2/accelerator/current.xml, which no adapter reads, is no reason to refuse."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import msoffcrypto
import olefile
import pytest

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats import open_document
from tests.core.documents.fake_translation import fake_translate_all
from tests.core.documents.test_odt import MANIFEST, parts, write_odt

CONFIG = ("Configurations2/accelerator/current.xml", "Configurations2/toolbar/", "Configurations2/floater/")


def refusal(path: Path) -> str:
    with pytest.raises(DocumentError) as caught:
        open_document(path)
    message = str(caught.value)
    assert message.startswith(path.name) and "\n" not in message, message
    return message


def with_members(source: Path, target: Path, extra: dict[str, bytes], replace: dict[str, bytes] | None = None) -> Path:
    """`source`'s zip copied member by member (mimetype first, stored), `replace`d, plus `extra` members."""
    replace = replace or {}
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info, replace.get(info.filename, zin.read(info)))
        for name, data in extra.items():
            zout.writestr(name, data)
    return target


def test_libreoffice_empty_accelerator_member_is_read(tmp_path):
    """LibreOffice writes Configurations2/accelerator/current.xml empty (0 bytes) in every .odt it saves:
    refused as "not well-formed XML" before; read, translated and copied byte for byte now."""
    plain = write_odt(tmp_path / "plain.odt")
    path = with_members(plain, tmp_path / "libreoffice.odt",
                        {CONFIG[0]: b"", CONFIG[1]: b"", CONFIG[2]: b"", "Thumbnails/thumbnail.png": b"junk"})
    document = open_document(path)
    assert [b.text for b in document.blocks] == [b.text for b in open_document(plain).blocks]
    out = tmp_path / "out.odt"
    document.save(out, fake_translate_all(document.blocks))
    assert parts(out)[CONFIG[0]] == b"" and parts(out)["Thumbnails/thumbnail.png"] == b"junk"


def test_malformed_part_that_is_read_is_still_refused(tmp_path):
    path = with_members(write_odt(tmp_path / "plain.odt"), tmp_path / "broken.odt", {},
                        {"content.xml": b"<office:document-content><unclosed>"})
    assert "content.xml" in refusal(path) and "not well-formed XML" in refusal(path)


def test_entity_bomb_in_a_member_nobody_reads_is_not_what_refuses(tmp_path):
    """Hostile XML matters where a parser reads it; the junk member is copied as bytes, never parsed."""
    bomb = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>'
    path = with_members(write_odt(tmp_path / "plain.odt"), tmp_path / "junk.odt", {CONFIG[0]: bomb})
    assert open_document(path).blocks
    read = with_members(write_odt(tmp_path / "plain2.odt"), tmp_path / "bomb.odt", {}, {"styles.xml": bomb})
    assert "entities" in refusal(read)


def test_password_protected_docx(tmp_path):
    """Word saves a .docx with a password as an OLE2 compound file holding an EncryptedPackage stream."""
    plain = tmp_path / "plain.docx"
    document = docx.Document()
    document.add_paragraph("A secret paragraph.")
    document.save(plain)
    path = tmp_path / "secret.docx"
    with plain.open("rb") as source, path.open("wb") as target:
        office = msoffcrypto.OfficeFile(source)
        office.encrypt("password", target)
    assert path.read_bytes()[:4] == bytes.fromhex("D0CF11E0")
    assert olefile.OleFileIO(str(path)).exists("EncryptedPackage")
    message = refusal(path)
    assert message.startswith("secret.docx is encrypted with a password"), message
    for suffix in (".pptx", ".xlsx"):  # the same container for every OOXML format
        other = tmp_path / f"secret{suffix}"
        other.write_bytes(path.read_bytes())
        assert "encrypted with a password" in refusal(other)


def test_encrypted_odt(tmp_path):
    """LibreOffice encrypts content.xml, styles.xml and meta.xml and lists each one's encryption data in
    the manifest: refused as "not well-formed XML" before."""
    manifest = MANIFEST.replace(
        'manifest:full-path="content.xml" manifest:media-type="text/xml"/>',
        'manifest:full-path="content.xml" manifest:media-type="text/xml" manifest:size="2870">'
        '<manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0'
        '#sha256-1k" manifest:checksum="Jd0I1qRfFIcVhDuSXXUiBkZEYfAmcgJbWe5E2gE3Bq8=">'
        '<manifest:algorithm manifest:algorithm-name="http://www.w3.org/2001/04/xmlenc#aes256-cbc" '
        'manifest:initialisation-vector="yJz6Jt7G0KHD0Z9QEsXFkA=="/>'
        '<manifest:key-derivation manifest:key-derivation-name="PBKDF2" manifest:key-size="32" '
        'manifest:iteration-count="100000" manifest:salt="H7y6Oq8BcwEk7fNnCEC2wA=="/>'
        '</manifest:encryption-data></manifest:file-entry>')
    assert manifest != MANIFEST
    ciphertext = bytes(range(256)) * 11  # what an encrypted part looks like: no XML at all
    path = with_members(write_odt(tmp_path / "plain.odt"), tmp_path / "secret.odt", {},
                        {"META-INF/manifest.xml": manifest.encode(), "content.xml": ciphertext})
    assert refusal(path).startswith("secret.odt is encrypted with a password")


def test_truncated_docx_is_said_to_be_truncated(tmp_path):
    plain = tmp_path / "plain.docx"
    docx.Document().save(plain)
    path = tmp_path / "cut.docx"
    path.write_bytes(plain.read_bytes()[: plain.stat().st_size // 2])
    assert "truncated" in refusal(path)


def test_old_binary_office_file(tmp_path):
    """A compound file without EncryptedPackage is the old .doc format under a .docx name."""
    plain = tmp_path / "plain.docx"
    docx.Document().save(plain)
    encrypted = io.BytesIO()
    with plain.open("rb") as source:
        msoffcrypto.OfficeFile(source).encrypt("pw", encrypted)
    data = encrypted.getvalue().replace("EncryptedPackage".encode("utf-16-le"), "WordDocument\0\0\0\0".encode("utf-16-le"))
    path = tmp_path / "old.docx"
    path.write_bytes(data)
    assert "older binary Office file" in refusal(path)


def test_a_huge_relationships_member_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    """The lists that name the parsed parts are read whole: one far larger than any real one is refused."""
    from nmt_desktop.core.documents import safety

    monkeypatch.setattr(safety, "MAX_STRUCTURE", 4000)  # stands for 20 MB, with small data
    plain = tmp_path / "plain.docx"
    docx.Document().save(plain)
    with zipfile.ZipFile(plain) as z:
        rels = z.read("_rels/.rels")
    path = with_members(plain, tmp_path / "padded.docx", {},
                        {"_rels/.rels": rels.replace(b"<Relationships", b"<!--" + b" " * 5000 + b"-->" + b"<Relationships")})
    assert "_rels/.rels unpacks to" in refusal(path)
