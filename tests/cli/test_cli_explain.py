"""`nmt-desktop explain` on the tiny model: the JSON lines' shapes, agreement with the core
(core/analysis/attribution.py) for the same pair, `--translate`, `--words`, `--faithfulness`, bad lines kept in
place, the options that do not go together, and `--help`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_runner import assert_one_error_line, run, run_cli, stdout_lines
from tiny_models import write_tsv

from nmt_desktop.cli import explain

SOURCES = ["red cat runs", "big dog eats small bird"]
ATOL = 2e-5  # 5 decimals, and float noise


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture(scope="module")
def translations(tiny_model_dir: Path) -> list[str]:
    """The model's own greedy translations of SOURCES."""
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator

    translator = Translator.load(tiny_model_dir)
    return [t.text for t in translator.translate_batch(SOURCES, DecodeConfig(beam_size=1), whole_lines=True)]


@pytest.fixture(scope="module")
def loaded(tiny_model_dir: Path):
    from nmt_desktop.core.decoding.translator import Translator

    return Translator.load(tiny_model_dir)


def test_methods_equal_the_cores() -> None:
    from nmt_desktop.core.analysis.attribution import METHODS

    assert explain.METHODS == METHODS


def test_help_lists_every_method(capsys) -> None:
    from nmt_desktop.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["explain", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for method in explain.METHODS:
        assert method in text


def test_root_help_lists_explain(capsys) -> None:
    from nmt_desktop.cli.main import main

    with pytest.raises(SystemExit):
        main(["--help"])
    assert "explain" in capsys.readouterr().out


@pytest.mark.parametrize("method", explain.METHODS)
def test_shapes_and_values_equal_the_core(tiny_model_dir: Path, tmp_path: Path, capsys, loaded, translations,
                                          method) -> None:
    """One JSON line per pair, T x S and T x T (T: target tokens with </s>), and the numbers the core gives for the
    same pair (rounded to 5 decimals)."""
    from nmt_desktop.core.analysis.attribution import attribute

    pairs = write_tsv(tmp_path / "pairs.tsv", list(zip(SOURCES, translations)))
    extra = ["--ig-steps", "4"] if method == "integrated_gradients" else []
    code, out, err = run(capsys, "explain", "-m", str(tiny_model_dir), "--method", method, *extra, str(pairs))
    assert code == 0 and err == ""
    lines = json_lines(out)
    assert len(lines) == len(SOURCES)
    for source, target, d in zip(SOURCES, translations, lines):
        assert d["source"] == source and d["translation"] == target
        assert d["method"] == method and d["level"] == "token"
        T, S = len(d["target_tokens"]), len(d["source_tokens"])
        assert d["target_tokens"][-1] == "</s>" and d["source_tokens"][-1] == "</s>"
        assert np.asarray(d["source_attribution"]).shape == (T, S)
        assert np.asarray(d["prefix_attribution"]).shape == (T, T)
        assert len(d["logprobs"]) == T and d["seconds"] >= 0
        core = attribute(loaded, loaded.score(source, target), method,
                         **({"steps": 4} if method == "integrated_gradients" else {}))
        assert d["source_tokens"] == core.source_tokens and d["target_tokens"] == core.target_tokens
        np.testing.assert_allclose(d["source_attribution"], core.source, atol=ATOL)
        np.testing.assert_allclose(d["prefix_attribution"], core.prefix, atol=ATOL)
        np.testing.assert_allclose(d["logprobs"], core.logprobs, atol=ATOL)
        assert ("baseline_logprobs" in d) == (method == "integrated_gradients")
        # rounded to 5 decimals
        assert all(round(x, 5) == x for row in d["source_attribution"] for x in row)


def test_translate_explains_the_models_own_translation(tiny_model_dir: Path, tmp_path: Path, capsys,
                                                       translations) -> None:
    path = tmp_path / "sources.txt"
    path.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "explain", "-m", str(tiny_model_dir), "--translate", str(path))
    assert code == 0 and err == ""
    lines = json_lines(out)
    assert [d["translation"] for d in lines] == translations
    assert [d["source"] for d in lines] == SOURCES
    assert all(d["method"] == explain.DEFAULT_METHOD for d in lines)
    # --beam 2 decodes with a beam; the tiny model's translations are the same
    code, out, _ = run(capsys, "explain", "-m", str(tiny_model_dir), "--translate", "--beam", "2", str(path))
    assert code == 0 and len(json_lines(out)) == len(SOURCES)


def test_words_shapes_are_word_counts(tiny_model_dir: Path, tmp_path: Path, capsys, translations) -> None:
    pairs = write_tsv(tmp_path / "pairs.tsv", list(zip(SOURCES, translations)))
    code, out, _ = run(capsys, "explain", "-m", str(tiny_model_dir), "--words", str(pairs))
    assert code == 0
    for source, target, d in zip(SOURCES, translations, json_lines(out)):
        assert d["level"] == "word"
        S, T = len(source.split()) + 1, len(target.split()) + 1  # the words and </s>
        assert len(d["source_tokens"]) == S and len(d["target_tokens"]) == T
        assert d["source_tokens"][:-1] == source.split()
        assert np.asarray(d["source_attribution"]).shape == (T, S)
        assert np.asarray(d["prefix_attribution"]).shape == (T, T)
        assert len(d["logprobs"]) == T


def test_faithfulness_keys(tiny_model_dir: Path, tmp_path: Path, capsys, translations) -> None:
    pairs = write_tsv(tmp_path / "pairs.tsv", list(zip(SOURCES, translations))[:1])
    code, out, _ = run(capsys, "explain", "-m", str(tiny_model_dir), "--faithfulness", "--seed", "3", str(pairs))
    assert code == 0
    (d,) = json_lines(out)
    faith = d["faithfulness"]
    for key in ("comprehensiveness_aopc", "sufficiency_aopc", "random_comprehensiveness_aopc",
                "random_sufficiency_aopc", "fractions", "comprehensiveness", "sufficiency", "full_logprob"):
        assert key in faith
    assert faith["seed"] == 3 and len(faith["comprehensiveness"]) == len(faith["fractions"])


@pytest.mark.parametrize("method", ["alti_plus", "leave_one_out"])
def test_summary_is_the_mean_of_the_lines(tiny_model_dir: Path, tmp_path: Path, capsys, translations,
                                          method) -> None:
    """--summary's numbers (stderr, after the JSON lines) are the means of the lines' own numbers; a bad line is
    left out of them and counted out of n."""
    path = tmp_path / "pairs.tsv"
    path.write_text(f"{SOURCES[0]}\t{translations[0]}\nno separator here\n{SOURCES[1]}\t{translations[1]}\n"
                    f"{SOURCES[1]}\t{translations[0]}\n", encoding="utf-8")
    code, out, err = run(capsys, "explain", "-m", str(tiny_model_dir), "--method", method, "--faithfulness",
                         "--summary", str(path))
    assert code == 1  # the bad line
    good = [d["faithfulness"] for d in json_lines(out) if "error" not in d]
    assert len(good) == 3
    lines = err.splitlines()
    assert lines[0].startswith("nmt-desktop: error: ")  # the bad line's report comes first
    assert lines[1].startswith("faithfulness summary: 3 lines")
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in lines[3:]}
    assert set(rows) == {method, "random"}
    mean = lambda key: float(np.mean([f[key] for f in good]))
    assert rows[method][0] == pytest.approx(mean("comprehensiveness_aopc"), abs=2e-5)
    assert rows[method][1] == pytest.approx(mean("sufficiency_aopc"), abs=2e-5)
    assert rows["random"][0] == pytest.approx(mean("random_comprehensiveness_aopc"), abs=2e-5)
    assert rows["random"][1] == pytest.approx(mean("random_sufficiency_aopc"), abs=2e-5)
    assert rows[method][0] != pytest.approx(good[0]["comprehensiveness_aopc"], abs=1e-4)  # a mean, not one line


def test_share_methods_report_start_and_source_share(tiny_model_dir: Path, tmp_path: Path, capsys,
                                                     translations) -> None:
    pairs = write_tsv(tmp_path / "pairs.tsv", list(zip(SOURCES, translations))[:1])
    code, out, _ = run(capsys, "explain", "-m", str(tiny_model_dir), "--method", "value_zeroing", str(pairs))
    assert code == 0
    (d,) = json_lines(out)
    total = np.sum(d["source_attribution"], 1) + np.sum(d["prefix_attribution"], 1) + np.asarray(d["start"])
    np.testing.assert_allclose(total, 1.0, atol=1e-4)
    np.testing.assert_allclose(d["source_share"], np.sum(d["source_attribution"], 1), atol=1e-4)
    code, out, _ = run(capsys, "explain", "-m", str(tiny_model_dir), "--method", "saliency", str(pairs))
    assert code == 0
    (d,) = json_lines(out)
    assert "start" not in d and "source_share" not in d


def test_a_bad_line_keeps_its_place(tiny_model_dir: Path, tmp_path: Path, capsys, translations) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text(f"{SOURCES[0]}\t{translations[0]}\nno separator here\n{SOURCES[1]} ||| {translations[1]}\n",
                    encoding="utf-8")
    code, out, err = run(capsys, "explain", "-m", str(tiny_model_dir), str(path))
    assert code == 1
    first, bad, last = json_lines(out)
    assert "error" in bad and "source_attribution" not in bad
    assert "error" not in first and "error" not in last and last["source"] == SOURCES[1]
    (line,) = err.splitlines()
    assert line.startswith("nmt-desktop: error: ") and f"{path} line 2:" in line


def test_a_bad_line_in_a_child_process(tiny_model_dir: Path) -> None:
    """stdin, a real process: one stderr line naming the line, exit 1, the other lines explained."""
    proc = run_cli("explain", "-m", str(tiny_model_dir), "--translate", stdin="red cat runs\n\ncat\n")
    line = assert_one_error_line(proc, 1)
    assert "stdin line 2: the line is empty" in line
    out = [json.loads(x) for x in stdout_lines(proc)]
    assert len(out) == 3 and "error" in out[1] and "error" not in out[0] and "error" not in out[2]


@pytest.mark.parametrize("options, flag", [(["--int8"], "--int8"), (["--beam", "2"], "--beam"),
                                           (["--ig-steps", "4"], "--ig-steps"), (["--seed", "1"], "--seed"),
                                           (["--summary"], "--summary")])
def test_options_that_do_not_apply(tiny_model_dir: Path, capsys, options, flag) -> None:
    code, out, err = run(capsys, "explain", "-m", str(tiny_model_dir), *options)
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("nmt-desktop: error: ") and flag in line
