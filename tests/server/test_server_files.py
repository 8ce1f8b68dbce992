"""POST /translate_file and GET /download_file/<name> on a real server: documents translated through the
document pipeline and its safety checks, names that try to leave the folder refused, translations deleted
after --file-ttl (2 s on the shared server)."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.xdist_group("server")

SRT = "1\n00:00:01,000 --> 00:00:02,000\nThe cat sleeps.\n\n2\n00:00:03,000 --> 00:00:04,000\nThe dog runs.\n"


def _upload(client, name: str, data: bytes, source: str = "en", target: str = "de"):
    return client.post("/translate_file", data={"source": source, "target": target},
                       files={"file": (name, data, "application/octet-stream")})


def _download(client, url: str):
    return client.get(url.split(str(client.base_url).rstrip("/"), 1)[1])


def test_a_subtitle_file_is_translated_and_downloaded_with_its_name(client):
    r = _upload(client, "film.srt", SRT.encode("utf-8"))
    assert r.status_code == 200, r.text
    url = r.json()["translatedFileUrl"]
    assert url.startswith(str(client.base_url).rstrip("/") + "/download_file/")
    got = _download(client, url)
    assert got.status_code == 200 and 'filename="film.de.srt"' in got.headers["content-disposition"]
    text = got.content.decode("utf-8")
    assert "00:00:01,000 --> 00:00:02,000" in text and "Katze" in text and "The cat" not in text


def test_an_html_page_keeps_its_markup(client):
    page = b"<html><body><p>The <b>green</b> tree.</p></body></html>"
    r = _upload(client, "page.html", page, target="fr")
    got = _download(client, r.json()["translatedFileUrl"]).content.decode("utf-8")
    assert "<b>" in got and 'lang="fr"' in got and "arbre" in got


@pytest.mark.parametrize("name, data, error", [
    ("notes.pdf", b"%PDF-1.4", "Invalid request: file format not supported"),
    # the documents' safety checks, in their sentence, naming the client's file (not the server's copy)
    ("report.docx", b"this is not a zip", "Invalid request: report.docx is not a Word document: it is not a zip archive"),
])
def test_unsupported_and_hostile_files_are_refused(client, name, data, error):
    r = _upload(client, name, data)
    assert (r.status_code, r.json()) == (400, {"error": error})


def test_missing_fields_are_named(client):
    r = client.post("/translate_file", data={"source": "en", "target": "de"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: missing file parameter"})
    r = client.post("/translate_file", data={"target": "de"}, files={"file": ("a.txt", b"Hi.", "text/plain")})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: missing source parameter"})
    r = _upload(client, "a.txt", b"Hi.", target="xx")
    assert (r.status_code, r.json()) == (400, {"error": "xx is not supported"})


@pytest.mark.parametrize("path", [
    "/download_file/..%2F..%2F..%2Fetc%2Fpasswd", "/download_file/%2e%2e%2fconfig.json", "/download_file/..",
    "/download_file/....etc.passwd", "/download_file/uploads", "/download_file/uploads%2F00000000000000000000000000000000.a.txt",
    "/download_file/%2Fetc%2Fpasswd", "/download_file/..%5C..%5Cwin.ini",
])
def test_names_that_leave_the_folder_are_refused(client, path):
    r = client.get(path)
    assert r.status_code in (400, 404) and "error" in r.json()
    assert "root:" not in r.text


def test_translations_are_deleted_after_the_ttl(client):
    url = _upload(client, "short.txt", b"The sun is hot.\n").json()["translatedFileUrl"]
    assert _download(client, url).status_code == 200
    for _ in range(600):  # the sweep runs every 0.5 s with --file-ttl 2; a busy machine may delay it (60 s at most)
        gone = _download(client, url)
        if gone.status_code == 404:
            break
        time.sleep(0.1)
    assert gone.status_code == 404 and "deleted" in gone.json()["error"]
