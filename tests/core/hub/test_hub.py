"""Searching for and pulling OPUS-MT models (core/hub/catalogue.py, core/hub/pull.py, core/hub/installed.py)
against a local stand-in for the Hugging Face Hub (tests/hub_stand_in.py) reached through HF_ENDPOINT."""

from __future__ import annotations

import copy
import json
import os
import shutil
import socket
import threading

import pytest
import torch

from hub_stand_in import StandInRepo
from nmt_desktop.core.hub.catalogue import codes_for, language_name, parse_opus_repo, search_models
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.hub.client import HubError, HubUnreachableError
from nmt_desktop.core.hub.pull import PullCancelled, pull_model
from nmt_desktop.core.hub.installed import list_models, remove_model
from nmt_desktop.core.locations import resolve_model_path, user_data_dir, user_models_dir
from nmt_desktop.core.decoding.translator import Translator

REPO = "Helsinki-NLP/opus-mt-en-de"
NEEDED = {"config.json", "vocab.json", "source.spm", "target.spm", "model.safetensors"}


def _downloaded(hub) -> set[str]:
    return {p.rsplit("/", 1)[-1] for m, p, _ in hub.requests if m == "GET" and "/resolve/" in p}


def _variant(repo: StandInRepo, name: str, **changes) -> StandInRepo:
    other = copy.deepcopy(repo)
    other.repo = name
    for key, value in changes.items():
        setattr(other, key, value)
    return other


def _closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def _installed_names() -> list[str]:
    folder = user_models_dir()
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# -- names and languages ---------------------------------------------------------------------------


def test_repo_names_parse_into_language_codes():
    assert parse_opus_repo("Helsinki-NLP/opus-mt-en-de") == ("en", "de")
    assert parse_opus_repo("Helsinki-NLP/opus-mt-tc-big-en-zle") == ("en", "zle")
    assert parse_opus_repo("Helsinki-NLP/opus-mt-en-ROMANCE") == ("en", "ROMANCE")
    assert parse_opus_repo("someone/bert-base") == ("", "")
    assert language_name("de") == "German" and language_name("xx-unknown") == "xx-unknown"
    assert {"de", "deu"} <= codes_for("German") and {"de", "deu"} <= codes_for("de")


def test_offline_catalogue_is_shipped_and_searchable():
    result = search_models(["English", "German"], offline=True)
    assert result.offline and result.snapshot
    repos = [m.repo for m in result.models]
    assert REPO in repos and all(parse_opus_repo(r)[0] in codes_for("en") for r in repos)
    assert len(search_models([], offline=True).models) > 1000  # the whole OPUS-MT family


# -- search ----------------------------------------------------------------------------------------


def test_search_asks_the_hub_and_reports_size_and_license(hub, marian_repo):
    hub.add(_variant(marian_repo, "Helsinki-NLP/opus-mt-de-en", downloads=5))
    hub.add(_variant(marian_repo, "Helsinki-NLP/opus-mt-fr-en", tags=["marian", "license:apache-2.0"]))
    result = search_models(["en", "de"])
    assert not result.offline
    assert [m.repo for m in result.models] == [REPO]
    model = result.models[0]
    assert model.license == "cc-by-4.0" and model.size_bytes == marian_repo.parameters * 4
    assert model.languages == "English → German"
    by_name = search_models(["German"])  # a language name matches either side
    assert {m.repo for m in by_name.models} == {REPO, "Helsinki-NLP/opus-mt-de-en"}
    assert any(m == "GET" and p == "/api/models" for m, p, _ in hub.requests)


def test_search_fills_in_what_the_listing_lacks(hub, marian_repo):
    hub.add(_variant(marian_repo, "Helsinki-NLP/opus-mt-en-nl", parameters=None, tags=["marian"]))
    (model,) = search_models(["en", "nl"]).models
    assert model.size_bytes == sum(len(marian_repo.files[f]) for f in NEEDED)  # what pull would download
    assert model.license == "cc-by-4.0"  # from the model card's metadata
    assert any(p == "/api/models/Helsinki-NLP/opus-mt-en-nl" for _m, p, _r in hub.requests)


def test_search_without_network_falls_back_to_the_catalogue(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", _closed_port_url())
    result = search_models(["en", "de"])
    assert result.offline and REPO in [m.repo for m in result.models]
    assert "cannot reach the Hugging Face Hub" in result.reason and "\n" not in result.reason
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert "HF_HUB_OFFLINE" in search_models(["fr"]).reason


# -- pull ------------------------------------------------------------------------------------------


def test_pull_installs_a_usable_model_with_a_card(hub, marian_repo):
    events = []
    result = pull_model(REPO, progress=events.append)
    assert result.path == user_models_dir() / "opus-mt-en-de"
    assert _downloaded(hub) == NEEDED  # tf_model.h5, README.md, ... are not fetched
    # progress: bytes only grow, reach the total, and the stages come in order
    downloads = [e for e in events if e.stage == "download"]
    assert downloads and downloads[-1].done_bytes == downloads[-1].total_bytes == sum(
        len(marian_repo.files[f]) for f in NEEDED)
    assert all(a.done_bytes <= b.done_bytes for a, b in zip(downloads, downloads[1:]))
    assert [s for s in ("resolve", "download", "verify", "convert", "done") if s in {e.stage for e in events}] == [
        "resolve", "download", "verify", "convert", "done"]
    card = json.loads((result.path / "card.json").read_text(encoding="utf-8"))
    assert card["hub_repo"] == REPO and card["revision"] == marian_repo.sha and card["license"] == "cc-by-4.0"
    assert "Helsinki" in card["attribution"]
    config = json.loads((result.path / "config.json").read_text(encoding="utf-8"))
    assert (config["src_lang"], config["tgt_lang"]) == ("en", "de")
    # usable by name, with every layer's and head's attention
    assert resolve_model_path("opus-mt-en-de") == result.path
    translation = Translator.load(resolve_model_path("opus-mt-en-de")).translate("the house is small",
                                                                                DecodeConfig(max_len_b=6))
    attention = translation.attention
    assert attention is not None and attention.shape[:2] == (1, 2)
    assert attention.shape[3] == len(translation.source_tokens)
    # the staging folder is gone: no second copy of the weights stays behind
    assert not any((user_data_dir() / "downloads").glob("*"))
    listed = {m.name: m for m in list_models()}
    assert listed["opus-mt-en-de"].source == REPO and not listed["opus-mt-en-de"].bundled


def test_pull_int8_stores_under_half_the_size(hub, monkeypatch):
    full = pull_model(REPO)
    small = pull_model(REPO, int8=True, name="opus-mt-en-de-int8")
    size = lambda p: sum(f.stat().st_size for f in p.glob("*.safetensors"))  # noqa: E731
    assert size(small.path) < 0.5 * size(full.path)
    text = "the cat sat on the mat"
    a = Translator.load(full.path).translate(text, DecodeConfig(max_len_b=8))
    b = Translator.load(small.path).translate(text, DecodeConfig(max_len_b=8))
    assert len(b.target_tokens) > 0 and a.attention.shape[:2] == b.attention.shape[:2]


def test_an_interrupted_file_is_resumed_with_a_range_request(hub, marian_repo, monkeypatch):
    import huggingface_hub.constants as hf_constants

    monkeypatch.setattr(hf_constants, "DOWNLOAD_CHUNK_SIZE", 1024)  # so the broken-off part was received
    hub.drop_once["model.safetensors"] = len(marian_repo.files["model.safetensors"]) // 2
    result = pull_model(REPO)
    ranges = hub.range_requests("model.safetensors")
    assert ranges and ranges[0] != "bytes=0-"
    assert (result.path / "model.safetensors").is_file()


def test_a_failed_pull_keeps_finished_files_for_the_next_one(hub, marian_repo):
    hub.forbidden.add("model.safetensors")
    with pytest.raises(HubError, match="HTTP 403"):
        pull_model(REPO)
    assert _installed_names() == []
    hub.forbidden.clear()
    hub.requests.clear()
    pull_model(REPO)
    assert _downloaded(hub) == {"model.safetensors"}  # the rest was kept from the failed pull


def test_a_repo_without_weights_is_one_sentence(hub, marian_repo):
    files = {k: v for k, v in marian_repo.files.items() if k != "model.safetensors"}
    hub.add(_variant(marian_repo, "Helsinki-NLP/opus-mt-en-fi", files=files))
    with pytest.raises(HubError, match="Helsinki-NLP/opus-mt-en-fi lacks model.safetensors"):
        pull_model("opus-mt-en-fi")
    assert _installed_names() == []


def test_a_corrupted_file_is_refused_and_nothing_installed(hub):
    hub.corrupt.add("model.safetensors")
    with pytest.raises(HubError) as err:
        pull_model(REPO)
    message = str(err.value)
    assert "model.safetensors" in message and "corrupt" in message and "\n" not in message
    assert _installed_names() == []
    hub.corrupt.clear()
    assert pull_model(REPO).path.is_dir()  # pulling again downloads it anew


def test_cancel_leaves_nothing_behind(hub):
    cancel = threading.Event()

    def progress(p):
        if p.stage == "download" and p.file == "source.spm":
            cancel.set()

    with pytest.raises(PullCancelled):
        pull_model(REPO, progress=progress, cancel=cancel)
    assert _installed_names() == []
    assert not (user_data_dir() / "downloads" / "Helsinki-NLP--opus-mt-en-de").exists()


def test_a_model_that_is_not_marian_is_refused(hub, marian_repo):
    files = dict(marian_repo.files)
    files["config.json"] = json.dumps({"model_type": "bert", "hidden_size": 8}).encode()
    hub.add(_variant(marian_repo, "someone/bert-tiny", files=files))
    with pytest.raises(HubError, match=r"someone/bert-tiny is not a Marian translation model \(its config.json says "
                                       r"model_type 'bert'\)"):
        pull_model("someone/bert-tiny")
    assert _downloaded(hub) == {"config.json"}  # refused before the weights were fetched
    assert _installed_names() == []


def test_a_hostile_pickle_is_refused_and_never_run(hub, marian_repo, tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    bin_path = tmp_path / "evil.bin"
    torch.save({"weight": Evil()}, bin_path)
    files = {k: v for k, v in marian_repo.files.items() if k != "model.safetensors"}
    files["pytorch_model.bin"] = bin_path.read_bytes()
    hub.add(_variant(marian_repo, "Helsinki-NLP/opus-mt-xx-yy", files=files))
    with pytest.raises(ValueError) as err:
        pull_model("opus-mt-xx-yy")
    assert "pytorch_model.bin" in str(err.value) and "refused" in str(err.value)
    assert not marker.exists() and _installed_names() == []


def test_a_plain_pytorch_bin_is_converted(hub, marian_repo, tmp_path):
    from safetensors.torch import load

    files = {k: v for k, v in marian_repo.files.items() if k != "model.safetensors"}
    bin_path = tmp_path / "plain.bin"
    torch.save(load(marian_repo.files["model.safetensors"]), bin_path)
    files["pytorch_model.bin"] = bin_path.read_bytes()
    hub.add(_variant(marian_repo, "Helsinki-NLP/opus-mt-en-nl", files=files))
    assert (pull_model("opus-mt-en-nl").path / "config.json").is_file()


def test_no_network_is_one_sentence(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", _closed_port_url())
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path))
    with pytest.raises(HubUnreachableError, match="cannot reach the Hugging Face Hub"):
        pull_model(REPO)


def test_unknown_repo_is_one_sentence(hub):
    with pytest.raises(HubError, match="Helsinki-NLP/opus-mt-zz-qq was not found on the Hub"):
        pull_model("opus-mt-zz-qq")


def test_unwritable_models_folder_is_one_sentence(hub, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the models folder should be")
    with pytest.raises(HubError, match="cannot write to the models folder"):
        pull_model(REPO, models_dir=blocked / "models")


def test_disk_full_is_one_sentence(hub, monkeypatch):
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(HubError, match="not enough free disk space"):
        pull_model(REPO)
    assert _installed_names() == []


def test_installed_twice_needs_force_and_remove_deletes(hub):
    pull_model(REPO)
    with pytest.raises(HubError, match="already installed"):
        pull_model(REPO)
    pull_model(REPO, force=True)
    removed = remove_model("opus-mt-en-de")
    assert not removed.exists() and _installed_names() == []
    with pytest.raises(HubError, match="no installed model named"):
        remove_model("opus-mt-en-de")
    with pytest.raises(HubError):
        remove_model("../escape")


def test_bundled_models_cannot_be_removed(monkeypatch, tmp_path, tiny_model_dir):
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    shutil.copytree(tiny_model_dir, bundled / "tiny")
    monkeypatch.setenv("NMT_DESKTOP_MODELS_DIR", str(bundled))
    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(HubError, match="bundled model"):
        remove_model("tiny")
    assert (bundled / "tiny" / "config.json").is_file()
    assert [m.name for m in list_models() if m.bundled] == ["tiny"]
