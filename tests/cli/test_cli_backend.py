"""`translate --backend`, run in-process on the tiny model: every backend's choice gives the default's output."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run

from nmt_desktop.cli import translate
from nmt_desktop.core.decoding.backends.choice import BACKENDS

INPUTS = ["red cat runs", "big dog sleeps", "small bird"]


def test_the_flag_offers_the_cores_backends() -> None:
    assert translate.BACKENDS == BACKENDS


def test_reference_backend_translates_as_the_default(tiny_model_dir: Path, capsys) -> None:
    default = run(capsys, "translate", "-m", str(tiny_model_dir), "--beam", "3", *INPUTS)
    reference = run(capsys, "translate", "-m", str(tiny_model_dir), "--beam", "3", "--backend", "reference", *INPUTS)
    assert default[0] == reference[0] == 0
    assert reference[1] == default[1] and len(default[1].splitlines()) == len(INPUTS)


def test_an_unknown_backend_is_a_usage_error(tiny_model_dir: Path, capsys) -> None:
    code, _, err = run(capsys, "translate", "-m", str(tiny_model_dir), "--backend", "gpu", "x")
    assert code == 2 and "invalid choice: 'gpu'" in err
