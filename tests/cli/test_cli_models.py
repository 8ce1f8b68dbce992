"""`nmt-desktop models` and `nmt-desktop pull` in a real child process, against the local Hub stand-in."""

from __future__ import annotations

import json
import subprocess

import pytest
from cli_runner import run_cli

REPO = "Helsinki-NLP/opus-mt-en-de"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_cli(*args, env_extra=env, timeout=300)


@pytest.fixture
def env(hub, tmp_path):
    return {"HF_ENDPOINT": hub.url, "NMT_DESKTOP_DATA_DIR": str(tmp_path / "user-data")}


def test_pull_then_translate_by_name_gives_every_head(hub, env, marian_repo):
    pulled = cli("pull", REPO, env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert "installed opus-mt-en-de from Helsinki-NLP/opus-mt-en-de" in pulled.stdout
    assert "nmt-desktop translate -m opus-mt-en-de" in pulled.stdout
    assert "download" in pulled.stderr and "converting" in pulled.stderr  # the progress bar and stages

    out = cli("translate", "-m", "opus-mt-en-de", "--json", "the house is small .", env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    config = json.loads(marian_repo.files["config.json"])
    attention = data["nbest"][0]["attention"]  # (layers, heads, target, source)
    assert len(attention) == config["decoder_layers"]
    assert all(len(layer) == config["decoder_attention_heads"] for layer in attention)
    assert len(attention[0][0]) == len(data["target_tokens"])
    assert len(attention[0][0][0]) == len(data["source_tokens"])

    listed = cli("models", "list", "--json", env=env)
    entry = {m["name"]: m for m in json.loads(listed.stdout)}["opus-mt-en-de"]
    assert entry["source"] == REPO and entry["license"] == "cc-by-4.0" and not entry["bundled"]
    plain = cli("models", env=env)
    assert plain.returncode == 0 and "opus-mt-en-de" in plain.stdout

    removed = cli("models", "remove", "opus-mt-en-de", env=env)
    assert removed.returncode == 0 and "removed" in removed.stdout
    gone = cli("translate", "-m", "opus-mt-en-de", "hello", env=env)
    assert gone.returncode == 1 and "model 'opus-mt-en-de' not found" in gone.stderr


def test_search_lists_hub_models_and_says_when_offline(hub, env):
    found = cli("models", "search", "English", "German", env=env)
    assert found.returncode == 0, found.stderr
    assert REPO in found.stdout and "cc-by-4.0" in found.stdout and "English → German" in found.stdout
    offline = cli("models", "search", "en", "de", env={**env, "HF_HUB_OFFLINE": "1"})
    assert offline.returncode == 0 and REPO in offline.stdout
    assert "offline catalogue" in offline.stderr and "HF_HUB_OFFLINE" in offline.stderr


@pytest.mark.parametrize("case", ["no-network", "not-marian", "unknown", "unwritable"])
def test_pull_failures_are_one_line(hub, env, marian_repo, tmp_path, case):
    import copy

    if case == "no-network":
        env = {**env, "HF_ENDPOINT": "http://127.0.0.1:9"}  # the discard port: nothing listens
        expected = "cannot reach the Hugging Face Hub"
        repo = REPO
    elif case == "not-marian":
        other = copy.deepcopy(marian_repo)
        other.repo = "someone/gpt-tiny"
        other.files["config.json"] = json.dumps({"model_type": "gpt2"}).encode()
        hub.add(other)
        expected, repo = "someone/gpt-tiny is not a Marian translation model", "someone/gpt-tiny"
    elif case == "unknown":
        expected, repo = "was not found on the Hub", "opus-mt-xx-zz"
    else:
        data = tmp_path / "read-only-data"
        (data / "models").parent.mkdir(parents=True)
        (data / "models").write_text("not a folder")
        env = {**env, "NMT_DESKTOP_DATA_DIR": str(data)}
        expected, repo = "cannot write to the models folder", REPO
    proc = cli("pull", repo, "--quiet", env=env)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.startswith("nmt-desktop: error:")]
    assert len(lines) == 1 and expected in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
