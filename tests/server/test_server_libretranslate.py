"""LibreTranslate's API on a real `nmt-desktop serve` process, called as its clients call it: Weblate (JSON, a
`q` list, api_key), Discourse (a form, format=html), Subtitle Edit (JSON, one text with a line break), the
LibreTranslate web page (/frontend/settings, /languages, /detect, source=auto, alternatives); our additions
(trust, alignment); every error with LibreTranslate's status and words; the request log and /nmt/stats."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group("server")


def test_weblate_sends_a_json_q_list_and_gets_a_list_back_in_order(client):
    texts = ["The cat sleeps.", "I like green apples.", "Where is the station?"]
    r = client.post("/translate", json={"q": texts, "source": "en", "target": "de", "format": "text",
                                        "api_key": ""})
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["translatedText"]
    out = body["translatedText"]
    assert isinstance(out, list) and len(out) == 3 and all(out)
    # each item is what that text alone gets: the list is translated item by item, in order
    for text, translated in zip(texts, out):
        alone = client.post("/translate", json={"q": text, "source": "en", "target": "de"}).json()
        assert alone == {"translatedText": translated}


def test_one_server_routes_en_de_and_en_fr_by_the_pair(client):
    de = client.post("/translate", json={"q": "The house is small.", "source": "en", "target": "de"}).json()
    fr = client.post("/translate", json={"q": "The house is small.", "source": "en", "target": "fr"}).json()
    assert "Haus" in de["translatedText"]
    assert "maison" in fr["translatedText"]


def test_discourse_sends_a_form_with_format_html_and_the_markup_is_kept(client):
    html = 'The <b>red</b> car is <a href="https://example.com/x">here</a>.'
    r = client.post("/translate", data={"q": html, "source": "en", "target": "de", "format": "html",
                                        "api_key": ""})
    assert r.status_code == 200, r.text
    out = r.json()["translatedText"]
    assert out.count("<b>") == 1 and out.count("</b>") == 1
    assert '<a href="https://example.com/x">' in out and out.count("</a>") == 1
    assert "rot" in out.lower()


def test_subtitle_edit_sends_one_json_text_with_a_line_break_and_gets_both_lines(client):
    r = client.post("/translate", json={"q": "Good morning.\nHow are you?", "source": "en", "target": "fr",
                                        "format": "text"})
    assert r.status_code == 200, r.text
    lines = r.json()["translatedText"].split("\n")
    assert len(lines) == 2 and all(line.strip() for line in lines)


def test_a_form_q_with_windows_line_ends_comes_back_with_plain_ones(client):
    r = client.post("/translate", data={"q": "One dog.\r\nTwo cats.", "source": "en", "target": "de"})
    assert r.status_code == 200
    assert r.json()["translatedText"].count("\n") == 1 and "\r" not in r.json()["translatedText"]


def test_source_auto_reports_the_detected_language(client):
    r = client.post("/translate", json={"q": "The weather is nice today.", "source": "auto", "target": "de"})
    body = r.json()
    assert r.status_code == 200
    assert body["detectedLanguage"]["language"] == "en" and 0 < body["detectedLanguage"]["confidence"] <= 100
    listed = client.post("/translate", json={"q": ["Hello there.", "A small dog."], "source": "auto",
                                             "target": "fr"}).json()
    assert [d["language"] for d in listed["detectedLanguage"]] == ["en", "en"]


def test_alternatives_come_from_the_beam_and_differ_from_the_translation(client):
    r = client.post("/translate", json={"q": "I am going home now.", "source": "en", "target": "de",
                                        "alternatives": 2})
    body = r.json()
    assert r.status_code == 200 and len(body["alternatives"]) <= 2 and body["alternatives"]
    assert body["translatedText"] not in body["alternatives"]


def test_trust_and_alignment_are_added_only_when_asked(client):
    plain = client.post("/translate", json={"q": "The dog runs.", "source": "en", "target": "de"}).json()
    assert set(plain) == {"translatedText"}
    r = client.post("/translate", json={"q": ["The dog runs.", "I see a big tree."], "source": "en",
                                        "target": "de", "trust": True, "alignment": True})
    body = r.json()
    assert len(body["trust"]) == 2 and len(body["alignment"]) == 2
    for trust in body["trust"]:
        assert trust["trust"] in ("high", "medium", "low") and 0 <= trust["qe"] <= 100
        assert isinstance(trust["flags"], list)
    for text, target, links in zip(["The dog runs.", "I see a big tree."], body["translatedText"], body["alignment"]):
        pairs = [tuple(map(int, link.split("-"))) for link in links.split()]
        assert pairs, links
        assert all(i < len(text.split()) and j < len(target.split()) for i, j in pairs)
    # a URL the model reads as a placeholder and a number with its unit: indices count the words as sent
    text = "Send 5 kg of apples to https://example.com/shop today."
    body = client.post("/translate", json={"q": text, "source": "en", "target": "de", "alignment": True}).json()
    pairs = [tuple(map(int, link.split("-"))) for link in body["alignment"].split()]
    words = body["translatedText"].split()
    assert "https://example.com/shop" in words and "5" in words
    assert pairs and all(i < len(text.split()) and j < len(words) for i, j in pairs)
    assert (6, words.index("https://example.com/shop")) in pairs  # the URL aligned to itself
    # form-encoded flags are read too
    form = client.post("/translate", data={"q": "The dog runs.", "source": "en", "target": "de", "trust": "true"})
    assert "trust" in form.json()


def test_languages_detect_frontend_settings_and_health(client):
    languages = client.get("/languages").json()
    en = next(lang for lang in languages if lang["code"] == "en")
    assert en["name"] == "English" and sorted(en["targets"]) == ["de", "fr"]
    detected = client.post("/detect", data={"q": "Das ist ein kleines Haus im Wald."}).json()
    assert detected[0]["language"] == "de" and detected[0]["confidence"] > 50
    assert client.post("/detect", json={"q": ["Guten Tag.", "Bonjour."]}).json()[0]["language"] in ("de", "fr")
    for bad, error in (({}, "Invalid request: missing q parameter"),
                       ({"q": [1]}, "Invalid request: q must be a text or a list of texts"),
                       ({"q": "x" * 5001}, "Invalid request: request (5001) exceeds text limit (5000)")):
        r = client.post("/detect", json=bad)
        assert (r.status_code, r.json()) == (400, {"error": error})
    settings = client.get("/frontend/settings").json()
    assert settings["charLimit"] == 5000 and settings["language"]["source"]["code"] == "en"
    assert ".docx" in settings["supportedFilesFormat"] and settings["keyRequired"] is False
    assert client.get("/health").json() == {"status": "ok"}


@pytest.mark.parametrize("payload, status, error", [
    ({"source": "en", "target": "de"}, 400, "Invalid request: missing q parameter"),
    ({"q": "", "source": "en", "target": "de"}, 400, "Invalid request: missing q parameter"),
    ({"q": "Hi.", "target": "de"}, 400, "Invalid request: missing source parameter"),
    ({"q": "Hi.", "source": "en"}, 400, "Invalid request: missing target parameter"),
    ({"q": "Hi.", "source": "xx", "target": "de"}, 400, "xx is not supported"),
    ({"q": "Hi.", "source": "en", "target": "xx"}, 400, "xx is not supported"),
    ({"q": "Hi.", "source": "de", "target": "fr"}, 400,
     "French (fr) is not available as a target language from German (de)"),
    ({"q": "Hi.", "source": "en", "target": "de", "format": "pdf"}, 400, "pdf format is not supported"),
    ({"q": "Hi.", "source": "en", "target": "de", "alternatives": "many"}, 400,
     "Invalid request: alternatives parameter is not a number"),
    ({"q": "Hi.", "source": "en", "target": "de", "alternatives": 9}, 400,
     "Invalid request: alternatives parameter must be <= 3"),
    ({"q": ["Hi."] * 65, "source": "en", "target": "de"}, 400, "Invalid request: request (65) exceeds text limit (64)"),
    ({"q": [1, 2], "source": "en", "target": "de"}, 400, "Invalid request: q must be a text or a list of texts"),
])
def test_every_translate_error_is_libretranslates_status_and_sentence(client, payload, status, error):
    r = client.post("/translate", json=payload)
    assert (r.status_code, r.json()) == (status, {"error": error})


def test_bad_json_unknown_routes_and_methods_answer_one_sentence(client):
    r = client.post("/translate", content=b"[1, 2]", headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid JSON format"})
    r = client.post("/translate", content=b"{not json", headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid JSON format"})
    r = client.post("/translate", content=b"[" * 100_000 + b"]" * 100_000, headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid JSON format"})  # not a RecursionError
    r = client.post("/translate", content=b'{"q": "Hi.", "source": "en", "target": "de", "alternatives": 1e999}',
                    headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: alternatives parameter is not a number"})
    r = client.get("/nothing-here")
    assert r.status_code == 404 and "error" in r.json()
    r = client.get("/translate")
    assert r.status_code == 405 and r.json() == {"error": "GET is not allowed on /translate"}


def test_a_1mb_q_is_refused_and_the_server_still_answers(client):
    huge = "word " * 200_000  # 1,000,000 characters
    r = client.post("/translate", json={"q": huge, "source": "en", "target": "de"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: request (1000000) exceeds text limit (5000)"})
    r = client.post("/translate", data={"q": huge, "source": "en", "target": "de"})
    assert r.status_code == 400 and "exceeds text limit (5000)" in r.json()["error"]
    assert client.post("/translate", json={"q": "Still here.", "source": "en", "target": "de"}).status_code == 200


def test_cors_allows_any_origin_by_default(client):
    r = client.options("/translate", headers={"Origin": "https://example.org", "Access-Control-Request-Method": "POST"})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] in ("*", "https://example.org")
    r = client.get("/languages", headers={"Origin": "https://example.org"})
    assert r.headers["access-control-allow-origin"] == "*"


def test_each_request_is_logged_as_one_json_event_and_counted(server, client):
    while not server.events.empty():
        server.events.get_nowait()
    before = client.get("/nmt/stats").json()
    server.next_events(1)  # the stats request itself
    r = client.post("/translate", json={"q": ["One red bird.", "Two blue birds."], "source": "en", "target": "fr"})
    assert r.status_code == 200
    event = server.next_events(1)[0]
    assert event["event"] == "request" and event["client"] == "127.0.0.1" and event["method"] == "POST"
    assert event["path"] == "/translate" and event["status"] == 200 and event["segments"] == 2
    assert event["characters"] == len("One red bird.") + len("Two blue birds.") and event["model"] == "en-fr"
    assert event["ms"] > 0 and event["time"].endswith("+00:00")
    client.post("/translate", json={"q": "x"})  # an error is counted as one
    after = client.get("/nmt/stats").json()
    assert after["requests"] == before["requests"] + 3
    assert after["segments"] == before["segments"] + 2 and after["errors"] == before["errors"] + 1
    assert after["characters"] == before["characters"] + event["characters"]
    assert after["queued"] == 0 and after["uptime_s"] > before["uptime_s"]
    assert {(m["name"], m["source"], m["target"]) for m in after["models"]} == {("en-de", "en", "de"), ("en-fr", "en", "fr")}
    assert server.listening["models"] == after["models"] and server.listening["host"] == "127.0.0.1"
