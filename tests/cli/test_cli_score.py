"""`nmt-desktop score` on the tiny model: the JSON fields, agreement with greedy decoding (`translate --json`),
`--format score`, and bad lines kept in place; in process, and once as a real child process."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_runner import assert_one_error_line, run, run_cli, stdout_lines
from tiny_models import TARGET_WORDS, synthetic_pairs, write_tsv

from nmt_desktop.core.decoding.backends import native_library

SOURCES = ["red cat runs", "big dog eats small bird", "the small green bird sees the big red cat", "cat"]
BACKENDS = ["reference", "python"] + (["compiled"] if native_library.load() else [])
ATOL = 1e-5


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_scores_equal_what_greedy_translate_reports(tiny_model_dir: Path, tmp_path: Path, capsys, backend) -> None:
    """Scoring the model's own greedy output gives the log-probabilities `translate --json` reports (1e-5),
    the same tokens, and no disagreement."""
    model = str(tiny_model_dir)
    code, out, _ = run(capsys, "translate", "-m", model, "--json", "--beam", "1", "--backend", backend, *SOURCES)
    assert code == 0
    decoded = json_lines(out)
    pairs = write_tsv(tmp_path / "pairs.tsv", [(s, d["translation"]) for s, d in zip(SOURCES, decoded)])
    code, out, err = run(capsys, "score", "-m", model, "--backend", backend, str(pairs))
    assert code == 0 and err == ""
    scored = json_lines(out)
    assert len(scored) == len(SOURCES)
    for d, s in zip(decoded, scored):
        assert s["target_tokens"] == d["target_tokens"] and s["target_tokens"][-1] == "</s>"
        assert s["source_tokens"] == d["source_tokens"]
        assert len(s["token_logprobs"]) == len(d["nbest"][0]["token_logprobs"])
        for a, b in zip(s["token_logprobs"], d["nbest"][0]["token_logprobs"]):
            assert a == pytest.approx(b, abs=ATOL)
        assert s["disagreements"] == []
        # the model's own choice is its first alternative at every position
        assert [alts[0]["piece"] for alts in s["alternatives"]] == s["target_tokens"]


def test_json_fields_and_a_disagreement(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    source = "big dog eats small bird"
    _, out, _ = run(capsys, "translate", "-m", str(tiny_model_dir), source)
    own = out.strip().split()
    other = next(w for w in TARGET_WORDS if w not in own)
    given = " ".join([other] + own[1:])
    pairs = write_tsv(tmp_path / "pairs.tsv", [(source, given), (source, " ".join(own))])
    code, out, _ = run(capsys, "score", "-m", str(tiny_model_dir), "--alternatives", "3", "--attention",
                       "--self-attention", str(pairs))
    assert code == 0
    wrong, right = json_lines(out)
    assert {"source", "target", "source_tokens", "target_tokens", "token_logprobs", "alternatives", "disagreements",
            "logprob", "perplexity", "tokens", "attention", "self_attention"} == set(wrong)
    assert wrong["source"] == source and wrong["target"] == given
    T, S = len(wrong["target_tokens"]), len(wrong["source_tokens"])
    assert wrong["tokens"] == T == len(wrong["token_logprobs"]) == len(wrong["alternatives"])
    assert all(len(alts) == 3 and set(alts[0]) == {"piece", "id", "prob"} for alts in wrong["alternatives"])
    assert wrong["logprob"] == pytest.approx(sum(wrong["token_logprobs"]), abs=1e-5)
    assert wrong["perplexity"] == pytest.approx(math.exp(-wrong["logprob"] / T), rel=1e-5)
    first = wrong["disagreements"][0]
    assert first["index"] == 0 and first["given"] == wrong["target_tokens"][0]
    assert first["preferred"] == right["target_tokens"][0] == wrong["alternatives"][0][0]["piece"]
    assert first["given_prob"] < first["preferred_prob"]
    assert first["given_prob"] == pytest.approx(math.exp(wrong["token_logprobs"][0]), abs=1e-5)
    assert wrong["logprob"] < right["logprob"]
    layers, heads = 2, 4  # tests/tiny_models.py's tiny_config
    attention, self_attention = wrong["attention"], wrong["self_attention"]
    assert (len(attention), len(attention[0]), len(attention[0][0]), len(attention[0][0][0])) == (layers, heads, T, S)
    assert len(self_attention[0][0]) == T and len(self_attention[0][0][0]) == T
    assert sum(attention[1][2][0]) == pytest.approx(1.0, abs=1e-4)


def test_format_score_and_per_token(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    pairs = write_tsv(tmp_path / "pairs.tsv", synthetic_pairs(5, seed=4))
    model = str(tiny_model_dir)
    _, out, _ = run(capsys, "score", "-m", model, "--alternatives", "0", str(pairs))
    objects = json_lines(out)
    assert all(o["alternatives"] == [[] for _ in o["target_tokens"]] and o["disagreements"] == [] for o in objects)
    code, out, _ = run(capsys, "score", "-m", model, "--format", "score", str(pairs))
    assert code == 0 and [float(x) for x in out.splitlines()] == pytest.approx([o["logprob"] for o in objects],
                                                                               abs=1e-5)
    _, out, _ = run(capsys, "score", "-m", model, "--format", "score", "--per-token", str(pairs))
    assert [float(x) for x in out.splitlines()] == pytest.approx([o["logprob"] / o["tokens"] for o in objects],
                                                                 abs=1e-5)


def test_bad_lines_keep_their_place(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    too_long = " ".join(["red"] * 100)  # more tokens than the tiny model's 64 positions
    path = tmp_path / "pairs.txt"
    path.write_text("red cat ||| rot katze\n"  # fast_align's separator
                    "no separator here\n"
                    "big dog\t\n"
                    f"{too_long}\t{' '.join(['rot'] * 100)}\n"
                    "a\tb\tc\n"
                    "\n"
                    "blue bird\tblau vogel\n", encoding="utf-8")
    code, out, err = run(capsys, "score", "-m", str(tiny_model_dir), str(path))
    objects = json_lines(out)
    assert code == 1 and len(objects) == 7
    assert objects[0]["target_tokens"][:2] == ["rot", "▁katze"] and objects[6]["target"] == "blau vogel"
    assert [("error" in o) for o in objects] == [False, True, True, True, True, True, False]
    assert objects[2] == {"source": "big dog", "target": "", "error": "the target is empty"}
    errors = err.splitlines()
    assert [e.split(":")[2].strip() for e in errors] == [f"{path} line {n}" for n in (2, 3, 4, 5, 6)]
    assert all(e.startswith("nmt-desktop: error: ") for e in errors)
    assert "no tab or ' ||| '" in errors[0] and "the target is empty" in errors[1]
    assert "64" in errors[2] and "2 separators" in errors[3] and "the line is empty" in errors[4]
    code, out, _ = run(capsys, "score", "-m", str(tiny_model_dir), "--format", "score", str(path))
    values = out.splitlines()
    assert code == 1 and values[1:6] == ["nan"] * 5 and all(not math.isnan(float(values[i])) for i in (0, 6))


@pytest.mark.parametrize("args, message", [
    (["--per-token"], "--per-token applies only with --format score"),
    (["--format", "score", "--attention"], "--attention applies only to --format json"),
    (["--alternatives", "-1"], "expected a non-negative integer"),
])
def test_usage_errors(tiny_model_dir: Path, capsys, args, message) -> None:
    code, out, err = run(capsys, "score", "-m", str(tiny_model_dir), *args)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1


def test_child_process_stdin_and_a_missing_file(tiny_model_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("score", "-m", str(tiny_model_dir), "--format", "score", "--threads", "1",
                   stdin="red cat\trot katze\nno tab\nbig dog ||| gross hund\n")
    lines = stdout_lines(proc)
    assert len(lines) == 3 and lines[1] == "nan" and float(lines[0]) < 0 and float(lines[2]) < 0
    assert "stdin line 2: no tab" in assert_one_error_line(proc, 1)
    missing = tmp_path / "missing.tsv"
    proc = run_cli("score", "-m", str(tiny_model_dir), str(missing))
    assert f"cannot read {missing}" in assert_one_error_line(proc, 1) and proc.stdout == ""
