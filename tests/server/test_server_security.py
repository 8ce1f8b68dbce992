"""Who may call: a server off loopback needs a key (refused in one sentence otherwise), keys from a file are
checked (missing 400, wrong 403, as LibreTranslate), a key's token bucket answers 429, OPUS-CAT's tokenCode
must be a key once keys are set, CORS is limited to the origins given, and the queue and upload limits
refuse in one sentence while the server stays up; and a served model's glossary applies."""

from __future__ import annotations

import shutil
import socket
from typing import Iterator

import pytest
from cli_runner import assert_one_error_line, run_cli
from server_process import BUNDLED, ServerProcess, start_server

pytestmark = pytest.mark.xdist_group("server")


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::"])
def test_binding_off_loopback_without_a_key_is_refused_in_one_sentence(host):
    proc = run_cli("serve", "--host", host, "--port", "0")
    line = assert_one_error_line(proc, 2)
    assert f"--host {host} would let other machines use the server" in line and "--api-key" in line


def test_command_line_mistakes_are_one_sentence_each(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = taken.getsockname()[1]
        line = assert_one_error_line(run_cli("serve", "--port", str(port)), 1)
        assert f"cannot listen on 127.0.0.1:{port}" in line and "in use" in line  # said before any model loads
    finally:
        taken.close()
    bad = tmp_path / "keys.txt"
    bad.write_text("alpha 0\n", encoding="utf-8")
    line = assert_one_error_line(run_cli("serve", "--api-keys", str(bad)), 1)
    assert "keys.txt, line 1: the rate must be a positive number of requests per minute, got '0'" in line
    assert_one_error_line(run_cli("serve", "--api-key", "a", "--api-keys", str(bad)), 2)
    assert "--port: expected 0-65535" in assert_one_error_line(run_cli("serve", "--port", "70000"), 2)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory) -> Iterator[ServerProcess]:
    """A server with keys, one CORS origin, small limits, and a copy of en-de that carries a glossary."""
    folder = tmp_path_factory.mktemp("keys")
    keys = folder / "keys.txt"
    keys.write_text("# our translators\nalpha\nbeta 2   # two requests a minute\n", encoding="utf-8")
    model = folder / "en-de-glossary"
    shutil.copytree(BUNDLED[0], model)
    (model / "glossary.tsv").write_text("station\tBahnsteig\n", encoding="utf-8")
    process = start_server("--api-keys", str(keys), "--cors", "https://allowed.example", "--max-queue", "8",
                           "--max-file-mb", "0.001", models=[str(model), BUNDLED[0]],
                           env_extra={"NMT_DESKTOP_CONFIG_DIR": str(folder / "config")})
    try:
        yield process
    finally:
        process.kill()


def test_a_key_is_required_and_checked(keyed):
    with keyed.client() as c:
        r = c.post("/translate", json={"q": "Hi.", "source": "en", "target": "de"})
        assert (r.status_code, r.json()) == (400, {"error": "Please contact the server operator to get an API key"})
        r = c.post("/translate", json={"q": "Hi.", "source": "en", "target": "de", "api_key": "alphx"})
        assert (r.status_code, r.json()) == (403, {"error": "Invalid API key"})
        assert c.post("/translate", json={"q": "Hi.", "source": "en", "target": "de", "api_key": "alpha"}).status_code == 200
        assert c.post("/translate", data={"q": "Hi.", "source": "en", "target": "de", "api_key": "alpha"}).status_code == 200
        assert c.post("/detect", data={"q": "Hallo Welt"}).status_code == 400
        assert c.get("/frontend/settings").json()["keyRequired"] is True
        assert c.get("/nmt/stats").status_code == 400
        assert c.get("/nmt/stats", params={"api_key": "alpha"}).json()["requests"] >= 1


def test_opuscat_token_code_must_be_a_key_once_keys_are_set(keyed):
    with keyed.client() as c:
        query = {"input": "Hi.", "srcLangCode": "en", "trgLangCode": "de"}
        assert c.get("/MtRestService/TranslateJson", params={"tokenCode": "0", **query}).status_code == 403
        assert c.get("/MtRestService/TranslateJson", params={"tokenCode": "alpha", **query}).status_code == 200


def test_a_keys_rate_limit_answers_429_and_others_go_on(keyed):
    with keyed.client() as c:
        payload = {"q": "Hi.", "source": "en", "target": "de", "api_key": "beta"}
        assert [c.post("/translate", json=payload).status_code for _ in range(2)] == [200, 200]
        r = c.post("/translate", json=payload)
        assert r.status_code == 429 and r.json()["error"].startswith("Slowdown: ")
        assert c.post("/translate", json=dict(payload, api_key="alpha")).status_code == 200


def test_cors_answers_only_the_origins_given(keyed):
    with keyed.client() as c:
        allowed = c.options("/translate", headers={"Origin": "https://allowed.example",
                                                   "Access-Control-Request-Method": "POST"})
        assert allowed.headers.get("access-control-allow-origin") == "https://allowed.example"
        other = c.options("/translate", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
        assert other.status_code == 400 and "access-control-allow-origin" not in other.headers


def test_a_request_larger_than_the_queue_gets_429_and_the_server_stays_up(keyed):
    with keyed.client() as c:
        r = c.post("/translate", json={"q": [f"Sentence {n}." for n in range(9)], "source": "en", "target": "de",
                                       "api_key": "alpha"})
        assert r.status_code == 429
        assert r.json()["error"] == ("Slowdown: the decode queue is full (0 segments waiting, at most 8); "
                                     "try again in a moment")
        ok = c.post("/translate", json={"q": ["One.", "Two."], "source": "en", "target": "de", "api_key": "alpha"})
        assert ok.status_code == 200 and len(ok.json()["translatedText"]) == 2


def test_an_upload_over_the_size_limit_is_refused(keyed):
    with keyed.client() as c:
        r = c.post("/translate_file", data={"source": "en", "target": "de", "api_key": "alpha"},
                   files={"file": ("big.txt", b"The cat sleeps.\n" * 200, "text/plain")})
        assert r.status_code == 400 and "larger than this server takes" in r.json()["error"]


def test_the_models_glossary_applies_to_what_it_serves(keyed):
    with keyed.client() as c:
        r = c.post("/translate", json={"q": ["Where is the station?", "The cat sleeps."], "source": "en",
                                       "target": "de", "api_key": "alpha"})
        first, second = r.json()["translatedText"]
        assert "Bahnsteig" in first and "Bahnsteig" not in second
        pair = c.get("/MtRestService/TranslateJson", params={"tokenCode": "alpha", "input": "The station is big.",
                                                             "srcLangCode": "en", "trgLangCode": "de"}).json()
        assert "Bahnsteig" in pair["translation"]
        # two models of one pair: the first given serves it, OPUS-CAT's modelTag picks the other by name
        tags = c.get("/MtRestService/GetLanguagePairModelTags", params={"tokenCode": "alpha", "srcLangCode": "en",
                                                                        "trgLangCode": "de"}).json()
        assert tags == ["en-de-glossary", "en-de"]
        plain = c.get("/MtRestService/TranslateJson", params={"tokenCode": "alpha", "input": "The station is big.",
                                                              "srcLangCode": "en", "trgLangCode": "de",
                                                              "modelTag": "en-de"}).json()
        assert "Bahnsteig" not in plain["translation"]


def test_regional_and_upper_case_codes_reach_the_model(keyed):
    with keyed.client() as c:
        r = c.post("/translate", json={"q": "The cat sleeps.", "source": "en-US", "target": "DE", "api_key": "alpha"})
        assert r.status_code == 200 and r.json()["translatedText"]


def test_subtitle_edit_with_a_key_sends_json_without_the_comma_before_api_key_and_is_understood(keyed):
    # Subtitle Edit (src/libse/AutoTranslate/LibreTranslate.cs) appends ' "api_key": "KEY" ' after "target"
    body = '{"q": "Good morning.\\nHow are you?", "source": "en", "target": "de" "api_key": "alpha" }'
    with keyed.client() as c:
        r = c.post("/translate", content=body.encode("utf-8"), headers={"Content-Type": "application/json",
                                                                      "accept": "application/json"})
        assert r.status_code == 200, r.text
        assert r.json()["translatedText"].count("\n") == 1
        wrong = body.replace("alpha", "alphx")
        assert c.post("/translate", content=wrong.encode("utf-8"),
                      headers={"Content-Type": "application/json"}).status_code == 403
