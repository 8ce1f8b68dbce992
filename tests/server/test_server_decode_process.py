"""Each model decoded in a process of its own (nmt_desktop/server/decode_process.py), on real `serve` children:
the answers are the ones the in-process decode thread gives (`--decode-in-process`), a decode process killed
with SIGKILL answers the requests it held 500 in one sentence and is started again, and SIGTERM with a
request in flight lets it finish, exits 0 and leaves no decode process behind."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from server_process import BUNDLED, ServerProcess, start_server

pytestmark = pytest.mark.xdist_group("server")

SENTENCES = ["The cat sleeps on the sofa.", "I would like a cup of coffee, please.", "Where is the train station?",
             "My brother lives in a small village near the sea.", "Send it to anna@example.com today.",
             "Visit https://example.org/docs for 3,000 more pages.", "We are going to the cinema tonight.",
             "She reads a book every week.\nThe children are playing in the garden."]


def decode_children(pid: int) -> list[int]:
    """The pids of the server's decode processes (its children `serve --decode-child`)."""
    # /proc, not `ps -o args`: ps cuts a line at 80 columns when its output is a pipe, and a checkout in a
    # longer path (a CI clone) pushed "--decode-child" past the cut
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True, text=True).stdout
    found = []
    for child in (int(word) for word in out.split()):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:  # it ended meanwhile
            continue
        if b"--decode-child" in argv:
            found.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether a process of that pid exists (and is not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def requests_of_every_kind() -> list[tuple[str, str, dict]]:
    """(method, path, parameters) of LibreTranslate's and OPUS-CAT's translation calls with every addition."""
    calls: list[tuple[str, str, dict]] = []
    for n, s in enumerate(SENTENCES):
        target = "de" if n % 2 else "fr"
        calls.append(("POST", "/translate", {"q": s, "source": "en", "target": target}))
        calls.append(("POST", "/translate", {"q": s, "source": "en", "target": target, "trust": True,
                                             "alignment": True}))
    calls += [("POST", "/translate", {"q": SENTENCES[:3], "source": "en", "target": "de", "alternatives": 2}),
              ("POST", "/translate", {"q": "The <b>red</b> car is <a href='https://x.org'>here</a>.", "source": "en",
                                      "target": "de", "format": "html"}),
              ("GET", "/MtRestService/TranslateJson", {"tokenCode": "0", "input": SENTENCES[2], "srcLangCode": "en",
                                                       "trgLangCode": "de"}),
              ("POST", "/MtRestService/BatchTranslate", {"tokenCode": "0", "input": SENTENCES[3:6],
                                                         "srcLangCode": "en", "trgLangCode": "fr"})]
    return calls


def _answers(server: ServerProcess) -> list:
    out = []
    with server.client() as c:
        for method, path, params in requests_of_every_kind():
            r = c.post(path, json=params) if method == "POST" and path == "/translate" else (
                c.post(path, data=params) if method == "POST" else c.get(path, params=params))
            assert r.status_code == 200, (path, r.text)
            out.append(r.json())
    return out


def test_a_decode_process_answers_what_the_in_process_thread_answers():
    apart = start_server()
    try:
        assert len(decode_children(apart.proc.pid)) == 2  # en-de and en-fr, a process each
        out_of_process = _answers(apart)
    finally:
        apart.kill()
    together = start_server("--decode-in-process")
    try:
        assert decode_children(together.proc.pid) == []
        in_process = _answers(together)
    finally:
        together.kill()
    assert out_of_process == in_process
    assert any("trust" in a and "alignment" in a for a in out_of_process if isinstance(a, dict))


def test_a_killed_decode_process_fails_its_requests_in_one_sentence_and_is_started_again():
    server = start_server("--max-list", "200", models=[BUNDLED[0]])
    try:
        first = decode_children(server.proc.pid)
        assert len(first) == 1
        texts = [f"{SENTENCES[n % 4]} {SENTENCES[(n + 1) % 4]}" for n in range(200)]
        sender, answer = server.post_in_background({"q": texts, "source": "en", "target": "de"})
        server.wait_until_queued()
        os.kill(first[0], signal.SIGKILL)
        sender.join(120)
        assert answer["status"] == 500
        message = answer["body"]["error"]
        assert message == ("Cannot translate text: the decode process of en-de ended unexpectedly (killed by "
                           "SIGKILL) while translating this; it is being restarted")
        with server.client() as c:  # the next request waits for the new process and is answered
            r = c.post("/translate", json={"q": "The house is small.", "source": "en", "target": "de"})
            assert r.status_code == 200 and "Haus" in r.json()["translatedText"]
        second = decode_children(server.proc.pid)
        assert len(second) == 1 and second != first
        said = "".join(server.stderr)
        assert "the decode process of en-de" in said and "ended unexpectedly (killed by SIGKILL)" in said
        assert "Traceback" not in said
        assert server.stop(signal.SIGTERM) == 0
    finally:
        server.kill()


def test_sigterm_with_requests_in_flight_finishes_them_exits_0_and_leaves_no_decode_process():
    server = start_server("--max-list", "200")
    try:
        children = decode_children(server.proc.pid)
        assert len(children) == 2
        texts = [f"{SENTENCES[n % 4]} {SENTENCES[(n + 2) % 4]}" for n in range(200)]
        sent = {t: server.post_in_background({"q": texts, "source": "en", "target": t}) for t in ("de", "fr")}
        server.wait_until_queued(400)  # both requests held, one by each model's process
        assert server.stop(signal.SIGTERM) == 0, "".join(server.stderr)[-2000:]
        for target, (sender, answer) in sent.items():
            sender.join(60)
            status, body = answer["status"], answer["body"]
            assert status == 200 and len(body["translatedText"]) == 200 and all(body["translatedText"])
        assert [pid for pid in children if alive(pid)] == []
        assert "Traceback" not in "".join(server.stderr)
    finally:
        server.kill()


def test_a_decode_process_ends_by_itself_when_the_server_is_killed():
    """SIGKILL leaves the server no time to stop its children: each sees its socket close and exits."""
    import select

    server = start_server(models=[BUNDLED[0]])
    try:
        (child,) = decode_children(server.proc.pid)
        handle = os.pidfd_open(child)  # readable once that process has ended
        try:
            server.kill()
            readable, _, _ = select.select([handle], [], [], 60)
            assert readable == [handle] and not alive(child)
        finally:
            os.close(handle)
    finally:
        server.kill()
