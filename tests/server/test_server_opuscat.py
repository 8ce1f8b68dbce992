"""OPUS-CAT MT Engine's routes as its plugins call them (Helsinki-NLP/OPUS-CAT): memoQ's
`TranslateJson?tokenCode=0&input=...&modelTag=""`, OmegaT's /MTRestService/TranslateJson, the Trados plugin's RestSharp GETs (Accept: JSON),
Wordfast's TranslatePost form, BatchTranslate with repeated `input`, ListSupportedLanguagePairs."""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytestmark = pytest.mark.xdist_group("server")

RESTSHARP_ACCEPT = "application/json, text/json, text/x-json, text/javascript, application/xml, text/xml"


def test_memoq_translate_json_gets_a_translation_pair(client):
    text = "The children play in the garden."
    r = client.get(f'/MtRestService/TranslateJson?tokenCode=0&input={quote(text)}&srcLangCode=en&trgLangCode=de'
                   f'&modelTag=""')
    assert r.status_code == 200, r.text
    pair = r.json()
    assert pair["translation"] == pair["Translation"] and "Kinder" in pair["Translation"]
    assert pair["Segmentation"] == 1 and pair["SegmentedSourceSentence"] and pair["SegmentedTranslation"]
    links = [tuple(map(int, link.split("-"))) for link in pair["AlignmentString"].split()]
    assert len(links) == len(pair["SegmentedTranslation"])  # every target piece aligned to one source piece
    assert all(0 <= i < len(pair["SegmentedSourceSentence"]) for i, _ in links)
    for i, j in links:
        assert j in pair["SegmentedAlignmentSourceToTarget"][str(i)] and i in pair["SegmentedAlignmentTargetToSource"][str(j)]
    assert pair["RawTranslation"] == " ".join(pair["SegmentedTranslation"])


def test_the_omegat_plugin_writes_mtrestservice_in_capitals(client):
    # OmegaTPlugin/.../OpusCatPlugin.java: "%s:%s/MTRestService/TranslateJson", OpusCatTranslator.java the query
    r = client.get("/MTRestService/TranslateJson", params={"input": "The dog sleeps.", "srcLangCode": "en",
                                                          "trgLangCode": "de", "tokenCode": "0", "modelTag": ""})
    assert r.status_code == 200 and "Hund" in r.json()["translation"]
    assert client.get("/MTRestService/ListSupportedLanguagePairs").json() == ["en-de", "en-fr"]


def test_a_long_segment_in_the_query_string_is_translated(client):
    # memoQ and OmegaT put the segment in the query: 4,000 characters, most of them two bytes of UTF-8, make a
    # 22 KB request line (h11 refuses one over 16 KB that arrives in pieces: serve raises that bound, run.py)
    text = ("ääääääääää " * 400)[:4000]
    assert len(quote(text)) > 16 * 1024
    r = client.get("/MtRestService/Translate", params={"tokenCode": "0", "input": text, "srcLangCode": "en",
                                                       "trgLangCode": "de"})
    assert r.status_code == 200 and r.text


def test_trados_restsharp_calls_get_json(client):
    pairs = client.get("/MtRestService/ListSupportedLanguagePairs", params={"tokenCode": "0"},
                       headers={"Accept": RESTSHARP_ACCEPT})
    assert pairs.json() == ["en-de", "en-fr"]
    tags = client.get("/MtRestService/GetLanguagePairModelTags", params={"tokenCode": "0", "srcLangCode": "en",
                                                                         "trgLangCode": "fr"})
    assert tags.json() == ["en-fr"]
    status = client.get("/MtRestService/CheckModelStatus", headers={"Accept": RESTSHARP_ACCEPT},
                        params={"tokenCode": "0", "srcLangCode": "en", "trgLangCode": "de", "modelTag": ""})
    assert isinstance(status.json(), str) and "en-de" in status.json()


def test_translate_answers_plain_text_and_takes_three_letter_and_regional_codes(client):
    r = client.get("/MtRestService/Translate", params={"tokenCode": "0", "input": "Good night.", "srcLangCode": "eng",
                                                       "trgLangCode": "fr-FR", "modelTag": ""})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    json_pair = client.get("/MtRestService/TranslateJson", params={"tokenCode": "0", "input": "Good night.",
                                                                   "srcLangCode": "en", "trgLangCode": "fr"}).json()
    assert r.text == json_pair["translation"]


def test_wordfast_translate_post_form_and_batch_translate(client):
    r = client.post("/MtRestService/TranslatePost", data={"tokenCode": "0", "input": "A big dog.", "srcLangCode": "en",
                                                          "trgLangCode": "de"})
    assert r.status_code == 200 and "Hund" in r.json()["translation"]
    batch = client.get("/MtRestService/BatchTranslate", params=[("tokenCode", "0"), ("input", "A big dog."),
                                                                ("input", "The sun."), ("srcLangCode", "en"),
                                                                ("trgLangCode", "de"), ("modelTag", "")])
    assert batch.json()[0] == r.json()["translation"] and len(batch.json()) == 2
    assert client.post("/MtRestService/PreOrderBatch?tokenCode=0&srcLangCode=en&trgLangCode=de",
                       json=["One.", "Two."]).status_code == 200


def test_a_pair_without_a_model_is_refused_in_one_sentence(client):
    r = client.get("/MtRestService/TranslateJson", params={"tokenCode": "0", "input": "Hi.", "srcLangCode": "de",
                                                           "trgLangCode": "en"})
    assert (r.status_code, r.json()) == (400, {"error": "English (en) is not available as a target language from "
                                                        "German (de)"})

    r = client.get("/MtRestService/Translate", params={"tokenCode": "0", "input": "Hi.", "srcLangCode": "",
                                                       "trgLangCode": "de"})
    assert (r.status_code, r.json()) == (400, {"error": "Invalid request: missing srcLangCode parameter"})
