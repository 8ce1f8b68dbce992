"""The packaged app: the frozen/source helpers, `--self-test`, and (slow) a real PyInstaller build.

The slow test takes the one-folder app that packaging/build.sh built into a temporary folder (the session
fixture `frozen_bundle` in conftest.py, shared with tests/test_deb.py) and runs the
frozen binary's `--self-test` on the bundled default model, or on the tiny test model when models/
is empty; it also runs the frozen binary's `train` subcommand, which is how the Train tab starts
its child process in a packaged app.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bundle_build import BUNDLE_GROUP

from nmt_desktop import self_test
from nmt_desktop.cli.main import main as cli_main
from nmt_desktop.core import locations

pytestmark = pytest.mark.timeout(600)


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONIOENCODING="utf-8")
    for key, sub in (("NMT_DESKTOP_CONFIG_DIR", "config"), ("NMT_DESKTOP_LOG_DIR", "log"),
                     ("NMT_DESKTOP_DATA_DIR", "data")):
        env[key] = str(tmp_path / sub)
    return env


def _report(proc: subprocess.CompletedProcess) -> dict:
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, f"no output; stderr: {proc.stderr[-2000:]}"
    return json.loads(lines[-1])


def _check_ok(report: dict) -> None:
    assert report["ok"] is True, report.get("error")
    assert [t["source"] for t in report["translations"]] == list(self_test.SENTENCES)
    assert all(t["translation"].strip() for t in report["translations"])
    assert report["grid"]["width"] > 0 and report["grid"]["height"] > 0
    assert report["grid"]["colours"] >= self_test.MIN_COLOURS
    assert report["language_id"] == "zh"  # py3langid's model file came along


# --- source / frozen helpers ---------------------------------------------------------------------

def test_cli_command_from_source(monkeypatch):
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert not locations.is_frozen()
    assert locations.cli_command("train", "--config", "x.toml") == [
        sys.executable, "-m", "nmt_desktop", "train", "--config", "x.toml"]
    assert locations.app_root() == Path(__file__).resolve().parents[1]


def test_cli_command_and_folders_when_frozen(monkeypatch, tmp_path):
    app = tmp_path / "nmt-desktop"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(app / "_internal"), raising=False)
    monkeypatch.setattr(sys, "executable", str(app / "nmt-desktop"))
    assert locations.is_frozen()
    assert locations.cli_command("train", "--resume") == [str(app / "nmt-desktop"), "train", "--resume"]
    assert locations.bundled_models_dir() == app / "_internal" / "models"
    assert locations.app_icon_path() == app / "_internal" / "resources" / "icons" / "nmt-desktop.png"


def test_train_process_runs_the_frozen_binary(monkeypatch, tmp_path):
    from nmt_desktop.gui.train.process import TrainProcess

    proc = TrainProcess()
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert [proc.program, *proc.arguments("run.toml")] == [
        sys.executable, "-m", "nmt_desktop", "train", "--config", "run.toml", "--progress", "json"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nmt-desktop"))
    assert [proc.program, *proc.arguments("run.toml", resume=True)] == [
        str(tmp_path / "nmt-desktop"), "train", "--config", "run.toml", "--resume", "--progress", "json"]


def test_icons_exist(repo_root):
    icons = repo_root / "resources" / "icons"
    for name in ("nmt-desktop.svg", "nmt-desktop.png", "nmt-desktop.ico"):
        assert (icons / name).stat().st_size > 0, name
    desktop = (repo_root / "packaging" / "nmt-desktop.desktop").read_text(encoding="utf-8")
    assert "Exec=nmt-desktop" in desktop and "Icon=nmt-desktop" in desktop


# --- --self-test from source ---------------------------------------------------------------------

def test_self_test_child_process_ok(tiny_model_dir, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "nmt_desktop", "--self-test", "-m", str(tiny_model_dir)],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    report = _report(proc)
    _check_ok(report)
    assert proc.returncode == 0
    assert report["frozen"] is False
    assert report["model"]["path"] == str(tiny_model_dir)
    assert {"torch", "PySide6", "nmt_desktop"} <= set(report["versions"])


def test_self_test_missing_model(tmp_path):
    missing = tmp_path / "no-such-model"
    proc = subprocess.run([sys.executable, "-m", "nmt_desktop", "--self-test", "-m", str(missing)],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    report = _report(proc)
    assert proc.returncode == 1
    assert report["ok"] is False and str(missing) in report["error"]
    assert "\n" not in report["error"]


def test_self_test_without_bundled_model(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(locations, "bundled_models_dir", lambda: tmp_path / "empty")
    assert self_test.main(None) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["error"].startswith("no bundled model in ") and "-m MODEL" in report["error"]


def test_self_test_usage_errors(capsys):
    assert cli_main(["-m", "somewhere"]) == 2
    assert "only with --self-test" in capsys.readouterr().err
    assert cli_main(["--self-test", "info"]) == 2
    assert "--self-test takes no subcommand" in capsys.readouterr().err


# --- the real bundle (slow) ----------------------------------------------------------------------

MAX_BUNDLE_MB = 700  # CPU torch; a CUDA torch build brings its own GBs of libraries


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20


@pytest.mark.slow
@pytest.mark.timeout(2400)
@pytest.mark.xdist_group(BUNDLE_GROUP)
def test_frozen_app_self_test(frozen_bundle, tiny_model_dir, marian_repo, tmp_path):
    """Run the frozen app that packaging/build.sh built (the session's `frozen_bundle`, shared with test_deb)."""
    import torch

    dist = frozen_bundle.parent
    env = _env(tmp_path)
    binary = dist / "nmt-desktop" / ("nmt-desktop.exe" if sys.platform == "win32" else "nmt-desktop")
    assert binary.is_file()

    # the bundled default model if models/ has one (then the build bundled it), else the tiny one
    model_args = [] if locations.default_model_path() is not None else ["-m", str(tiny_model_dir)]
    proc = subprocess.run([str(binary), "--self-test", *model_args], capture_output=True, text=True,
                          env=env, timeout=600)
    report = _report(proc)
    _check_ok(report)
    assert proc.returncode == 0
    assert report["frozen"] is True
    from nmt_desktop.core.decoding.backends import native_library

    # the compiled decoding step travels with the app when the build machine had it
    assert report["native_step"] is (native_library.library_path() is not None and native_library.native_enabled())
    if not model_args:
        assert Path(report["model"]["path"]).is_relative_to(dist / "nmt-desktop")

    # the Train tab's child in a frozen app: `<binary> train ...` (core.locations.cli_command)
    from tiny_models import synthetic_pairs, write_tsv

    write_tsv(tmp_path / "train.tsv", synthetic_pairs(200, seed=3))
    write_tsv(tmp_path / "dev.tsv", synthetic_pairs(10, seed=4))
    train = subprocess.run([str(binary), "train", "--train", str(tmp_path / "train.tsv"), "--dev",
                            str(tmp_path / "dev.tsv"), "--out", str(tmp_path / "run"), "--preset", "tiny",
                            "--vocab-size", "200", "--max-steps", "4", "--eval-every", "2", "--progress", "json"],
                           capture_output=True, text=True, env=env, timeout=600)
    assert train.returncode == 0, train.stdout[-2000:] + train.stderr[-3000:]
    events = [json.loads(line) for line in train.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["event"] == "end" and events[-1]["step"] == 4
    assert (tmp_path / "run" / "best" / "config.json").is_file()

    # `pull` in the frozen app (huggingface_hub, sentencepiece and the catalogue travel with it), from a
    # local stand-in for the Hub; then the pulled model passes --self-test by name
    from hub_stand_in import HubStandIn

    with HubStandIn([marian_repo]) as hub:
        pull = subprocess.run([str(binary), "pull", "Helsinki-NLP/opus-mt-en-de", "--quiet"], capture_output=True,
                              text=True, env=dict(env, HF_ENDPOINT=hub.url), timeout=600)
        assert pull.returncode == 0, pull.stdout[-2000:] + pull.stderr[-3000:]
        search = subprocess.run([str(binary), "models", "search", "en", "de", "--offline"], capture_output=True,
                                text=True, env=env, timeout=300)
        assert search.returncode == 0 and "Helsinki-NLP/opus-mt-en-de" in search.stdout, search.stderr[-2000:]
    proc = subprocess.run([str(binary), "--self-test", "-m", "opus-mt-en-de"], capture_output=True, text=True,
                          env=env, timeout=600)
    report = _report(proc)
    _check_ok(report)
    assert report["model"]["name"] == "opus-mt-en-de" and Path(report["model"]["path"]).is_relative_to(tmp_path)

    if torch.version.cuda is None:
        size = _size_mb(dist / "nmt-desktop")
        assert size < MAX_BUNDLE_MB, f"bundle is {size:.0f} MB"
