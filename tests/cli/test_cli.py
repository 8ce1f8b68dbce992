"""The command line, run for real: `python -m nmt_desktop ...` in child processes on the tiny model.

Each child process imports torch (a few seconds), so related checks share a process where sensible.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from cli_runner import assert_one_error_line, run_cli, stderr_lines, stdout_lines

from nmt_desktop import __version__
from nmt_desktop.cli.common import CLIError, UsageError, resolve_model


@pytest.fixture(scope="module")
def model(tiny_model_dir: Path) -> str:
    return str(tiny_model_dir)


@pytest.fixture(scope="module")
def model_config(tiny_model_dir: Path) -> dict:
    return json.loads((tiny_model_dir / "config.json").read_text(encoding="utf-8"))


# --- no model needed ---------------------------------------------------------------------------

def test_version() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"nmt-desktop {__version__}"


def test_no_subcommand_without_gui_prints_help_and_exits_2() -> None:
    try:
        import nmt_desktop.gui.app  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name not in ("nmt_desktop.gui", "nmt_desktop.gui.app"):
            raise
    else:
        pytest.skip("the GUI exists in this build: no subcommand opens it")
    proc = run_cli()
    assert proc.returncode == 2
    assert "usage: nmt-desktop" in proc.stderr
    assert "desktop app is not part of this build" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["translate", "-m", "M", "--bogus", "x"], "unrecognized arguments: --bogus"),
    (["translate", "-m", "M", "--beam", "0", "x"], "beam size must be >= 1"),
    (["translate", "-m", "M", "--nbest", "4", "--beam", "2", "x"], "n-best must be between 1 and the beam size"),
    (["translate", "-m", "M", "--batch-size", "0", "x"], "--batch-size"),
    (["translate", "-m", "M", "--top-k", "5", "x"], "--top-k only applies with --sample"),
    (["translate", "-m", "M", "--no-attention", "--attention-out", "a.npz", "x"], "--attention-out"),
    (["translate", "x"], "no model given and no bundled model installed: use -m MODEL"),
    (["info"], "no model given and no bundled model installed: use -m MODEL"),
    (["frobnicate"], "invalid choice"),
    # layers and heads are written L3H2, counted from 1: the old 0-based spellings are refused, never shifted
    (["translate", "-m", "M", "--ablate", "2:1", "x"], "--ablate 2:1: heads are now written like L3H2, counted from "
                                                       "1 (2:1 in the old 0-based spelling is L3H2)"),
    (["translate", "-m", "M", "--align", "--align-layer", "2", "x"], "--align-layer 2: layers are now written like "
                                                                     "L3, counted from 1"),
    (["gui", "--layer", "2", "--head", "1"], "(--layer 2 --head 1 in the old 0-based spelling is --focus L3H2)"),
])
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    no_models = {"NMT_DESKTOP_MODELS_DIR": str(tmp_path / "no-bundled-models")}  # as an install without models
    line = assert_one_error_line(run_cli(*args, env_extra=no_models), 2)
    assert message in line


def test_resolve_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nmt_desktop.core.locations.bundled_models_dir", lambda: tmp_path / "no-bundled-models")
    with pytest.raises(UsageError, match="no model given"):
        resolve_model(None)
    bundled = tmp_path / "bundled"
    for name in ("de-en", "en-de"):
        (bundled / name).mkdir(parents=True)
        (bundled / name / "config.json").write_text("{}")
    monkeypatch.setattr("nmt_desktop.core.locations.bundled_models_dir", lambda: bundled)
    assert resolve_model(None) == bundled / "en-de"  # the default model when -m is left out
    assert resolve_model("some/where/model") == Path("some/where/model")
    assert resolve_model("model.zip") == Path("model.zip")
    installed = tmp_path / "models"
    (installed / "de-en").mkdir(parents=True)
    (installed / "fr-en.zip").write_bytes(b"")
    monkeypatch.setattr("nmt_desktop.core.locations.model_search_dirs", lambda: [tmp_path / "nowhere", installed])
    monkeypatch.chdir(tmp_path)
    assert resolve_model("de-en") == installed / "de-en"
    assert resolve_model("fr-en") == installed / "fr-en.zip"
    with pytest.raises(CLIError, match="model 'xx-yy' not found"):
        resolve_model("xx-yy")
    (tmp_path / "de-en").mkdir()  # a path that exists wins over an installed model
    assert resolve_model("de-en") == Path("de-en")


def test_resolve_model_path_opens_a_run_folders_best_else_last(tiny_trained, tmp_path: Path) -> None:
    from tiny_models import tiny_run_folder

    from nmt_desktop.core.locations import RunWithoutModelError, resolve_model_path

    run = tiny_run_folder(tmp_path / "run", *tiny_trained)
    said: list[str] = []
    assert resolve_model_path(str(run), say=said.append) == run / "best"
    assert said == [f"using {run / 'best'} (the run's best model)"]
    assert resolve_model_path(str(run / "best"), say=said.append) == run / "best"  # a model folder as is
    assert len(said) == 1
    (run / "best" / "config.json").unlink()  # best/ cut short: the last checkpoint is opened
    assert resolve_model_path(str(run), say=said.append) == run / "last"
    assert said[-1] == f"using {run / 'last'} (the run's last checkpoint)"
    (run / "last" / "config.json").unlink()
    with pytest.raises(RunWithoutModelError, match="has no complete model yet"):
        resolve_model_path(str(run))
    with pytest.raises(CLIError, match=r"^training run '.*run' has no complete model yet"):
        resolve_model(str(run))


# --- translate ---------------------------------------------------------------------------------

INPUTS = ["red cat runs", "big dog", "the sun and the moon"]


def test_translate_arguments_plain(model: str) -> None:
    proc = run_cli("translate", "-m", model, "--threads", "1", *INPUTS)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = stdout_lines(proc)
    assert len(lines) == len(INPUTS)
    assert lines[0] == "rot katze rennt"  # the tiny model has learned the synthetic task


def test_stdin_one_output_line_per_input_line(model: str) -> None:
    too_long = " ".join(["red"] * 100)  # more tokens than max_positions and no sentence end to split at
    data = b"".join([
        b"red cat\n",
        b"\n",  # empty
        b"   \t \n",  # whitespace only
        b"\xff\xfe\x00\x80junk \xc3\x28 bytes\r\n",  # invalid UTF-8, NUL, CRLF
        too_long.encode() + b"\n",
        b"blue dog\r\n",
        b"sun moon",  # no final newline
    ])
    proc = run_cli("translate", "-m", model, "--batch-size", "2", stdin=data)
    lines = stdout_lines(proc)
    assert len(lines) == 7, proc.stdout
    assert lines[0] == "rot katze"
    assert lines[1] == "" and lines[2] == ""
    assert lines[4] == ""  # the failed input
    assert lines[5] == "blau hund"
    assert lines[6] != ""
    # one stderr line for the failed input, naming its line number; the rest were translated
    line = assert_one_error_line(proc, 1)
    assert "input line 5" in line and "64" in line


def test_another_language_is_warned_on_stderr_and_translated(tiny_model_dir: Path, tmp_path: Path) -> None:
    english = tmp_path / "en-model"  # the tiny model, said to read English (its card's source language)
    shutil.copytree(tiny_model_dir, english)
    config = json.loads((english / "config.json").read_text(encoding="utf-8"))
    (english / "config.json").write_text(json.dumps({**config, "src_lang": "en"}), encoding="utf-8")
    chinese = "我今天很累，想早点睡觉。"
    proc = run_cli("translate", "-m", str(english), "red cat runs", chinese, "Tom")
    assert proc.returncode == 0, proc.stderr
    assert len(stdout_lines(proc)) == 3 and stdout_lines(proc)[0] == "rot katze rennt"
    assert stderr_lines(proc) == ["nmt-desktop: warning: input 2: This looks like Chinese (zh), not English (en): "
                                  "the model only reads English, so its translation will be nonsense."]

    german = ["Ich habe heute keine Zeit für dich.", "Wo ist der Bahnhof, bitte?", "Das Wetter ist heute sehr schön.",
              "Er wohnt seit zehn Jahren in Berlin.", "Wir gehen morgen ins Kino.", "Sie hat das Buch schon gelesen.",
              "Kannst du mir bitte helfen?"]
    proc = run_cli("translate", "-m", str(english), stdin="\n".join(["red cat runs", *german]) + "\n")
    assert proc.returncode == 0, proc.stderr
    assert len(stdout_lines(proc)) == 8
    lines = stderr_lines(proc)  # the first five named, the rest counted
    assert [line.split(": ")[2] for line in lines[:5]] == [f"input line {n}" for n in range(2, 7)]
    assert all("This looks like German (de), not English (en)" in line for line in lines[:5])
    assert lines[5:] == ["nmt-desktop: warning: 2 more input lines look like another language than the model's"]

    proc = run_cli("translate", "-m", str(tiny_model_dir), chinese)  # a model with no source language: no judgement
    assert proc.returncode == 0 and proc.stderr == ""


def test_json_beam_nbest_and_attention_out(model: str, model_config: dict, tmp_path: Path) -> None:
    npz = tmp_path / "attn.npz"
    stdin = "\n".join(INPUTS[:2] + [""] + INPUTS[2:]) + "\n"
    proc = run_cli("translate", "-m", model, "--json", "--beam", "3", "--nbest", "3",
                   "--attention-out", str(npz), stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    objs = [json.loads(line) for line in stdout_lines(proc)]
    assert len(objs) == 4
    layers, heads = model_config["decoder_layers"], model_config["n_heads"]
    for obj in objs:
        assert {"translation", "source_tokens", "target_tokens", "score", "nbest"} <= set(obj)
        assert "attention" not in obj  # each array once: the best hypothesis' attention is in nbest[0]
    empty = objs.pop(2)
    assert empty["translation"] == "" and empty["nbest"][0]["attention"] is None

    plain = stdout_lines(run_cli("translate", "-m", model, "--beam", "3", "--nbest", "3", *INPUTS))
    assert plain == [obj["translation"] for obj in objs]  # plain output is the best hypothesis

    for obj in objs:
        S, T = len(obj["source_tokens"]), len(obj["target_tokens"])
        attn = np.array(obj["nbest"][0]["attention"])
        assert attn.shape == (layers, heads, T, S)
        np.testing.assert_allclose(attn.sum(-1), 1.0, atol=1e-3)
        assert obj["source_tokens"][-1] == "</s>"
        nbest = obj["nbest"]
        assert 1 <= len(nbest) <= 3
        scores = [h["score"] for h in nbest]
        assert scores == sorted(scores, reverse=True)
        assert nbest[0]["translation"] == obj["translation"] and nbest[0]["score"] == obj["score"]
        for h in nbest:
            assert {"translation", "score", "attention"} <= set(h)
            assert np.array(h["attention"]).shape == (layers, heads, len(h["tokens"]), S)

    with np.load(npz, allow_pickle=False) as z:
        assert sorted(z.files) == sorted(f"{k}_{i}" for i in range(4)
                                         for k in ("attention", "source_tokens", "target_tokens"))
        for i, obj in zip([0, 1, 3], objs):
            assert z[f"attention_{i}"].dtype == np.float32
            np.testing.assert_allclose(z[f"attention_{i}"], np.array(obj["nbest"][0]["attention"]), atol=1e-5)
            assert z[f"source_tokens_{i}"].dtype.kind == "U"
            assert z[f"source_tokens_{i}"].tolist() == obj["source_tokens"]
            assert z[f"target_tokens_{i}"].tolist() == obj["target_tokens"]
        assert z["attention_2"].shape == (layers, heads, 0, 0)
        assert z["source_tokens_2"].tolist() == [] and z["target_tokens_2"].tolist() == []


def test_json_no_attention(model: str) -> None:
    proc = run_cli("translate", "-m", model, "--json", "--no-attention", "--beam", "2", "--nbest", "2", INPUTS[0])
    assert proc.returncode == 0, proc.stderr
    (obj,) = [json.loads(line) for line in stdout_lines(proc)]
    assert obj["translation"] == "rot katze rennt"
    assert "attention" not in obj
    assert all("attention" not in h for h in obj["nbest"])


def test_sampling_with_seed_is_reproducible(model: str) -> None:
    args = ["translate", "-m", model, "--sample", "--seed", "7", "--temperature", "1.5", "--top-p", "0.95",
            "--top-k", "20", *INPUTS]
    first, second = run_cli(*args), run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert len(stdout_lines(first)) == len(INPUTS)
    assert first.stdout == second.stdout


# --- info --------------------------------------------------------------------------------------

def test_info_text_and_json(model: str, model_config: dict, tiny_model_dir: Path) -> None:
    proc = run_cli("info", "-m", model, "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert Path(info["path"]) == tiny_model_dir.resolve()
    assert info["architecture"] == model_config
    assert info["parameters"] > 0
    assert info["size_bytes"] == sum(p.stat().st_size for p in tiny_model_dir.iterdir())
    assert info["vocabulary"] == {"joint": True, "source_size": model_config["src_vocab_size"],
                                  "target_size": model_config["tgt_vocab_size"],
                                  "tokenizer_files": ["tokenizer.json"]}
    assert info["card"]["name"] == "tiny synthetic"
    assert set(info["languages"]) == {"source", "target"}

    text = run_cli("info", "-m", model)
    assert text.returncode == 0, text.stderr
    assert f"{info['parameters']:,}" in text.stdout
    assert "d_model" in text.stdout and "tiny synthetic" in text.stdout and "joint" in text.stdout


# --- bad models --------------------------------------------------------------------------------

def test_missing_model_exits_1(tmp_path: Path) -> None:
    line = assert_one_error_line(run_cli("translate", "-m", str(tmp_path / "no-such-model"), "x"), 1)
    assert "no-such-model" in line and "not found" in line


def test_run_folder_opens_its_best_model(tiny_trained, tmp_path: Path) -> None:
    from tiny_models import perturbed_model, tiny_run_folder

    model, tokenizers = tiny_trained
    run = tiny_run_folder(tmp_path / "run", model, tokenizers, last_model=perturbed_model(model.config))
    proc = run_cli("translate", "-m", str(run), INPUTS[0])
    assert proc.returncode == 0, proc.stderr
    assert stdout_lines(proc) == ["rot katze rennt"]  # best/ (the trained model), not last/ (perturbed)
    assert stderr_lines(proc) == [f"using {run / 'best'} (the run's best model)"]

    empty = tmp_path / "empty-run"
    empty.mkdir()
    (empty / "train_config.toml").write_text("steps = 10\n", encoding="utf-8")
    line = assert_one_error_line(run_cli("info", "-m", str(empty)), 1)
    assert line == (f"nmt-desktop: error: training run '{empty}' has no complete model yet (neither best/ nor "
                    "last/ holds one): open it again after its first evaluation or checkpoint")


def test_corrupted_model_exits_1_and_debug_shows_traceback(tiny_model_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model_dir, broken)
    (broken / "config.json").write_text('{"d_model": ', encoding="utf-8")
    line = assert_one_error_line(run_cli("info", "-m", str(broken)), 1)
    assert "config.json" in line

    debug = run_cli("translate", "-m", str(broken), "x", "--debug")  # --debug after the subcommand
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr
    assert stderr_lines(debug)[-1] == line
