"""`nmt-desktop qe` in a real child process: one JSON object per input line with `qe`, the same numbers as the
core's `estimate_pairs`, `--translate`, a bad line kept in place with exit status 1, and `--help`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli, stdout_lines

PAIRS = ["red cat runs\trot katze rennt", "big dog eats small bird ||| gross hund isst klein vogel"]


def test_pairs_give_the_cores_estimates(tiny_model_dir: Path, tiny_translator) -> None:
    from nmt_desktop.core.analysis.quality import estimate_pairs
    from nmt_desktop.core.decoding.translator import Translator

    proc = run_cli("qe", "-m", str(tiny_model_dir), stdin="\n".join(PAIRS + ["no separator here"]) + "\n")
    assert proc.returncode == 1
    rows = [json.loads(line) for line in stdout_lines(proc)]
    assert len(rows) == 3
    assert rows[2] == {"source": "", "target": "", "error": "no tab or ' ||| ' between source and target"}
    assert "stdin line 3: no tab" in proc.stderr
    core = estimate_pairs(Translator.load(tiny_model_dir), [("red cat runs", "rot katze rennt"),
                                                             ("big dog eats small bird", "gross hund isst klein vogel")])
    for row, est in zip(rows, core):
        assert row["qe"] == pytest.approx(est.qe, abs=1e-3)
        assert 0 <= row["qe"] <= 100 and row["trust"] in ("high", "medium", "low")
        assert row["own"] is False and row["perplexity"] > 1
        assert set(row["features"]) == {"mean_logprob", "neg_entropy", "support", "length_ratio"}
        assert [f["text"] for f in row["flags"]] == [f.text for f in est.flags]


def test_translate_estimates_the_models_own_translation(tiny_model_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "sources.txt"
    source.write_text("red cat runs\nblue house\n", encoding="utf-8")
    proc = run_cli("qe", "-m", str(tiny_model_dir), "--translate", str(source))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in stdout_lines(proc)]
    assert [r["source"] for r in rows] == ["red cat runs", "blue house"]
    assert all(r["own"] and r["target"] for r in rows)


def test_help_says_what_qe_estimates() -> None:
    proc = run_cli("qe", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "sentence chrF" in text and "higher is better" in text and "--translate" in text
