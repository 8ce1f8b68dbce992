"""Text files and HTML pages in the encodings people's programs write (issue 42): read as browsers and editors
read them, written back in the source's encoding with its BOM. The files are made byte for byte as Notepad
(UTF-16LE with BOM), Windows programs (windows-1252, windows-1251, windows-1256) and web templates write them."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt_desktop.core.documents.blocks import DocumentError, untranslated
from nmt_desktop.core.documents.formats import open_document
from nmt_desktop.core.documents.text_encoding import TextEncoding, decode_html, decode_text
from tests.core.documents.fake_translation import MARK, fake_translate_all

SRT = ("1\r\n00:00:01,000 --> 00:00:03,000\r\n“Café?” she asked. It’s naïve – déjà vu.\r\n\r\n"
       "2\r\n00:00:04,000 --> 00:00:05,000\r\nGrüße aus Köln.\r\n\r\n")
ARABIC = "مرحبا بكم في موقعنا، هذا نص عربي للتجربة. "
RUSSIAN = "Привет, мир! Это проверка кодировки страницы."


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_utf16le_srt_with_bom(tmp_path):
    """Notepad's "Unicode": refused as "not a text file" before (its NUL bytes)."""
    path = write(tmp_path / "notepad.srt", b"\xff\xfe" + SRT.encode("utf-16-le"))
    document = open_document(path)
    assert document.blocks[0].text == "“Café?” she asked. It’s naïve – déjà vu."
    out = tmp_path / "out.srt"
    document.save(out, [untranslated(b) for b in document.blocks])
    assert out.read_bytes() == path.read_bytes()
    document.save(out, fake_translate_all(document.blocks))
    data = out.read_bytes()
    assert data.startswith(b"\xff\xfe") and MARK in data[2:].decode("utf-16-le")


@pytest.mark.parametrize("suffix", [".srt", ".txt", ".vtt"])
def test_windows_1252_text_is_read_and_written_back_in_it(tmp_path, suffix):
    text = SRT if suffix != ".vtt" else "WEBVTT\r\n\r\n" + SRT.replace(",", ".").replace("1\r\n00", "00").replace(
        "2\r\n00", "00")
    if suffix == ".txt":
        text = "“Café?” she asked. It’s naïve – déjà vu.\r\nGrüße aus Köln.\r\n"
    path = write(tmp_path / f"windows{suffix}", text.encode("cp1252"))
    document = open_document(path)
    assert "“Café?” she asked. It’s naïve – déjà vu." in [b.text for b in document.blocks]
    out = tmp_path / f"out{suffix}"
    document.save(out, [untranslated(b) for b in document.blocks])
    assert out.read_bytes() == path.read_bytes()
    document.save(out, fake_translate_all(document.blocks))
    assert "ÜT GRÜSSE AUS KÖLN.".encode("cp1252") in out.read_bytes()  # "ẞ"-free upper case: still cp1252
    with pytest.raises(UnicodeDecodeError):
        out.read_bytes().decode("utf-8")


def test_a_character_the_source_encoding_lacks_is_written_as_its_nearest():
    encoding = TextEncoding("cp1252", how="detected")
    assert encoding.encode("x ≥ 1 → “ok” ﬁ") == "x ? 1 ? “ok” fi".encode("cp1252")
    # a character whose decomposition Latin-1 holds but the code page does not ("ß" in KOI8-R)
    assert TextEncoding("koi8_r").encode("Straße ﬁ Äpfel") == "Stra?e fi Apfel".encode("koi8_r")


def test_html_declaration_after_the_first_1024_bytes(tmp_path):
    """A page declaring windows-1251 at byte 4,970: "declares no charset" before."""
    scripts = "<script>var settings = {a: 1, b: 2};</script>\n" * 110
    page = (f'<html><head><title>t</title>{scripts}<meta http-equiv="Content-Type" content="text/html; '
            f'charset=windows-1251"></head><body><p>{RUSSIAN}</p></body></html>').encode("cp1251")
    assert page.index(b"charset=windows-1251") > 4900
    path = write(tmp_path / "late.html", page)
    document = open_document(path)
    assert RUSSIAN in [b.text for b in document.blocks]
    out = tmp_path / "out.html"
    document.save(out, fake_translate_all(document.blocks))
    assert "ЭТО ПРОВЕРКА".encode("cp1251") in out.read_bytes()


def test_html_declared_utf8_but_windows_1256_is_redetected(tmp_path):
    """Decoded to U+FFFD before: the Arabic destroyed and exit 0."""
    page = (f'<html><head><meta charset="utf-8"><title>t</title></head><body><p>{ARABIC * 3}</p></body></html>'
            .encode("cp1256"))
    assert decode_html(page, "page.html").codec == "cp1256"
    document = open_document(write(tmp_path / "arabic.html", page))
    texts = [b.text for b in document.blocks]
    assert ARABIC.strip() in texts[1] and "\ufffd" not in "".join(texts)


def test_html_declared_legacy_but_utf8(tmp_path):
    page = f'<html><head><meta charset="windows-1252"></head><body><p>{RUSSIAN}</p></body></html>'.encode()
    assert decode_html(page, "page.html").codec == "utf-8"


def test_undeclared_legacy_encodings_are_detected():
    polish = "Zażółć gęślą jaźń. Dzień dobry, jak się masz? Wszystko w porządku, dziękuję.\n"
    assert decode_text(polish.encode("cp1250"), "pl.txt").text == polish
    assert decode_text((RUSSIAN + "\n") .encode("cp1251"), "ru.txt").text == RUSSIAN + "\n"
    assert decode_text("Grüße, naïve “quotes”\n".encode("cp1252"), "de.txt").encoding.codec == "cp1252"


def test_binary_is_still_refused():
    with pytest.raises(DocumentError, match="bin.txt is not a text file"):
        decode_text(b"PNG\x00\x01\x02 text", "bin.txt")


def test_declarations_in_comments_are_skipped_in_linear_time():
    from limits import measured_work

    page = b'<html><head><!-- <meta charset="koi8-r"> --><meta charset="windows-1251"></head><body>x</body></html>'
    assert decode_html(page, "page.html").codec == "cp1251"
    hostile = b"<html><head>" + b"<!--" * 50_000  # unclosed comments: 61 s of CPU with a lazy .*?--> scan
    with measured_work(cpu_s=5, what="reading the head of a page of unclosed comments"):
        assert decode_html(hostile, "comments.html").codec == "utf-8"
    unclosed = b"<html><head>" + b"<meta " * 100_000  # unclosed tags: 40 s of CPU with <meta[^>]*>
    with measured_work(cpu_s=5, what="reading the head of a page of unclosed meta tags"):
        assert decode_html(unclosed, "metas.html").codec == "utf-8"


def test_a_meta_naming_utf16_in_an_ascii_page_means_utf8():
    page = '<html><head><meta charset="utf-16"></head><body><p>café</p></body></html>'.encode()
    assert decode_html(page, "page.html").codec == "utf-8"
