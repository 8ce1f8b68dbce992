"""`nmt-desktop align` on the tiny model: Pharaoh links, the reading options and the card's default, `--gold`
(AER 0 against its own output), symmetrisation with `--reverse-model`, and the error sentences."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from cli_runner import assert_one_error_line, run, run_cli, stdout_lines
from tiny_models import synthetic_pairs, write_tsv

from nmt_desktop.cli import align as align_cli
from nmt_desktop.cli.main import main
from nmt_desktop.core.analysis import alignment
from nmt_desktop.core.analysis.alignment import AlignMethod, align, default_method, symmetrise
from nmt_desktop.core.analysis.pharaoh import parse_pharaoh, to_pharaoh
from nmt_desktop.core.analysis.truecase import truecaser
from nmt_desktop.core.config import DecodeConfig

PAIRS = synthetic_pairs(8, seed=5)
CARD_METHOD = AlignMethod(reading="shift", layer=0, decision="argmax", prior=0.0, identical=False)


@pytest.fixture(scope="module")
def pairs_tsv(tmp_path_factory) -> Path:
    return write_tsv(tmp_path_factory.mktemp("align") / "pairs.tsv", PAIRS)


@pytest.fixture(scope="module")
def carded_model(tiny_trained, tmp_path_factory) -> Path:
    """The tiny model with an "alignment" entry in its card: the reading `align` uses by default."""
    from nmt_desktop.core.formats.model_folder import save_model

    model, tokenizers = tiny_trained
    folder = tmp_path_factory.mktemp("carded") / "tiny-carded"
    return save_model(folder, model, tokenizers, {"name": "tiny", "alignment": CARD_METHOD.to_dict()})


def expected_links(translator, method: AlignMethod, pairs=PAIRS, truecase: bool = True) -> list[str]:
    """What the core's `align` gives for the pairs read as whitespace words (the CLI's contract), each side
    truecased for the model as `align` does unless --no-truecase."""
    if truecase:
        source, target = truecaser(translator.tokenizers.source), truecaser(translator.tokenizers.target)
        pairs = [(source(s), target(t)) for s, t in pairs]
    scored = translator.score_batch(pairs, DecodeConfig(attention=True, alternatives=0))
    return [to_pharaoh(align(t, method, s.split(), g.split(), translator=translator))
            for t, (s, g) in zip(scored, pairs)]


def test_the_choices_are_the_cores(capsys) -> None:
    from nmt_desktop.core.analysis.attribution import METHODS

    assert align_cli.READINGS == alignment.READINGS
    assert align_cli.ATTRIBUTION_METHODS == METHODS  # the help's torch-free copy
    with pytest.raises(SystemExit) as exit_info:
        main(["align", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert exit_info.value.code == 0 and all(name in out for name in METHODS)
    assert set(align_cli.DECISIONS) == set(alignment.DECISIONS)
    assert set(align_cli.SYMMETRISATIONS) == set(alignment.SYMMETRISATIONS)
    from nmt_desktop.cli import translate

    assert translate.ALIGN_READINGS == alignment.READINGS


def test_default_reading_and_overrides(tiny_model_dir: Path, tiny_translator, pairs_tsv: Path, capsys) -> None:
    model = str(tiny_model_dir)
    code, out, err = run(capsys, "align", "-m", model, str(pairs_tsv))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines == expected_links(tiny_translator, default_method({}, 2))
    for line, (s, t) in zip(lines, PAIRS):
        assert all(i < len(s.split()) and j < len(t.split()) for i, j in parse_pharaoh(line))
    default = default_method({}, 2)
    for flags, method in ((["--reading", "shift", "--layer", "L1"], replace(default, reading="shift", layer=0,
                                                                            heads=None)),
                          (["--reading", "predict", "--heads", "L2H1,L2H3", "--decision", "argmax"],
                           replace(default, reading="predict", heads=((1, 0), (1, 2)), decision="argmax")),
                          (["--layer", "L2", "--decision", "threshold", "--threshold", "0.2"],
                           replace(default, layer=1, heads=None, decision="threshold", threshold=0.2))):
        code, out, _ = run(capsys, "align", "-m", model, *flags, str(pairs_tsv))
        assert code == 0 and out.splitlines() == expected_links(tiny_translator, method), flags


def test_lower_cased_sides_are_truecased(tiny_model_dir: Path, tiny_translator, pairs_tsv: Path, capsys) -> None:
    from nmt_desktop.cli.pairs import PairLine

    lines = [PairLine(1, "red cat runs", "rot katze rennt"), PairLine(2, "Red cat", "rot Katze"), PairLine(3, error="x")]
    _, cased, _ = align_cli.truecased(("test", iter(lines), False), tiny_translator)
    first, second, bad = list(cased)
    assert first.source.startswith("Red ") and first.target.startswith("Rot ")
    assert first.source.lower() == "red cat runs" and len(first.source) == len("red cat runs")
    assert (second.source, second.target) == ("Red cat", "Rot Katze") and bad == lines[2]
    code, out, _ = run(capsys, "align", "-m", str(tiny_model_dir), "--no-truecase", str(pairs_tsv))
    assert code == 0 and out.splitlines() == expected_links(tiny_translator, default_method({}, 2), truecase=False)


def test_text_with_unicode_spaces_aligns(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    """Untokenized text with no-break, thin and ideographic spaces aligns (it stopped with "the tokens do not
    match the words"): a line per pair, each link inside the pair's whitespace words."""
    pairs = [("red cat\u00a0runs", "rot katze\u00a0rennt"), ("big\u2009dog eats", "gross hund\u202fisst"),
             ("green bird\u3000sleeps", "gruen vogel schlaeft\u00a0!")]
    path = tmp_path / "spaces.tsv"
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    code, out, err = run(capsys, "align", "-m", str(tiny_model_dir), str(path))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == len(pairs) and any(lines)
    for line, (s, t) in zip(lines, pairs):
        assert all(i < len(s.split()) and j < len(t.split()) for i, j in parse_pharaoh(line))


def test_the_cards_reading_is_the_default(carded_model: Path, tiny_translator, pairs_tsv: Path, capsys,
                                          monkeypatch) -> None:
    code, out, _ = run(capsys, "align", "-m", str(carded_model), str(pairs_tsv))
    assert code == 0 and out.splitlines() == expected_links(tiny_translator, CARD_METHOD)
    # --help states each bundled model's default reading (AlignMethod.describe)
    bundled = carded_model.parent / "models"
    shutil.copytree(carded_model, bundled / "tiny-carded")
    monkeypatch.setenv("NMT_DESKTOP_MODELS_DIR", str(bundled))
    with pytest.raises(SystemExit) as exit_info:
        main(["align", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert exit_info.value.code == 0
    assert f"For the bundled tiny-carded: {CARD_METHOD.describe(2)}." in help_text


def test_gold_from_its_own_output_gives_aer_0(tiny_model_dir: Path, pairs_tsv: Path, tmp_path: Path) -> None:
    """Real child processes: align, then align --gold against that output (every link sure)."""
    proc = run_cli("align", "-m", str(tiny_model_dir), "--threads", "1", str(pairs_tsv))
    assert proc.returncode == 0, proc.stderr
    own = stdout_lines(proc)
    assert len(own) == len(PAIRS) and sum(len(parse_pharaoh(line)) for line in own) > 0
    gold = tmp_path / "gold.txt"
    gold.write_text("".join(line + "\n" for line in own), encoding="utf-8")
    summary = tmp_path / "summary.json"
    proc = run_cli("align", "-m", str(tiny_model_dir), "--threads", "1", "--gold", str(gold), "--json-summary",
                   str(summary), str(pairs_tsv))
    assert proc.returncode == 0, proc.stderr
    assert stdout_lines(proc) == own
    line = proc.stderr.strip()
    assert line.startswith("AER 0.00%, precision 100.00%, recall 100.00%") and "\n" not in line
    report = json.loads(summary.read_text(encoding="utf-8"))
    links = sum(len(parse_pharaoh(line)) for line in own)
    assert (report["aer"], report["precision"], report["recall"]) == (0.0, 1.0, 1.0)
    assert report["links"] == report["sure"] == report["possible"] == links and report["sentences"] == len(PAIRS)


def test_gold_possible_links_and_a_missed_link(tiny_model_dir: Path, pairs_tsv: Path, tmp_path: Path,
                                               capsys) -> None:
    """A link marked possible (i?j) costs nothing; a sure link not predicted lowers recall and AER by the formula."""
    model = str(tiny_model_dir)
    _, out, _ = run(capsys, "align", "-m", model, str(pairs_tsv))
    own = [sorted(parse_pharaoh(line)) for line in out.splitlines()]
    first = own[0]
    assert first, "the first pair has links"
    (i0, j0), rest = first[0], first[1:]
    missed = (len(PAIRS[0][0].split()) + 5, 0)  # a sure gold link no alignment can have
    gold_lines = [" ".join([f"{i0}?{j0}"] + [f"{i}-{j}" for i, j in rest] + [f"{missed[0]}-{missed[1]}"])]
    gold_lines += [" ".join(f"{i}-{j}" for i, j in links) for links in own[1:]]
    gold = tmp_path / "gold.txt"
    gold.write_text("\n".join(gold_lines) + "\n", encoding="utf-8")
    summary = tmp_path / "summary.json"
    code, _, err = run(capsys, "align", "-m", model, "--gold", str(gold), "--json-summary", str(summary), str(pairs_tsv))
    report = json.loads(summary.read_text(encoding="utf-8"))
    a = sum(map(len, own))
    s = a - 1 + 1  # one sure link became possible, one unpredictable sure link was added
    assert code == 0 and report["links"] == a and report["sure"] == s and report["possible"] == a + 1
    assert report["precision"] == 1.0
    assert report["recall"] == pytest.approx((a - 1) / s, abs=1e-6)
    assert report["aer"] == pytest.approx(1 - (a - 1 + a) / (a + s), abs=1e-6)
    assert f"recall {100 * (a - 1) / s:.2f}%" in err


def test_symmetrisation_with_a_reverse_model(tiny_model_dir: Path, tiny_translator, pairs_tsv: Path,
                                             tmp_path: Path, capsys) -> None:
    """The reverse model's links (aligning target -> source, flipped) combined with the forward ones. The tiny
    model stands in for a reverse model (its joint vocabulary reads both sides), so its reverse links are
    exactly `align` run on the swapped pairs."""
    model = str(tiny_model_dir)
    swapped = write_tsv(tmp_path / "swapped.tsv", [(t, s) for s, t in PAIRS])
    _, out, _ = run(capsys, "align", "-m", model, str(pairs_tsv))
    forward = [parse_pharaoh(line) for line in out.splitlines()]
    _, out, _ = run(capsys, "align", "-m", model, str(swapped))
    backward = [{(i, j) for j, i in parse_pharaoh(line)} for line in out.splitlines()]
    assert forward != backward
    results = {}
    for how in ("intersection", "union", "grow-diag-final"):
        code, out, err = run(capsys, "align", "-m", model, "--reverse-model", model, "--symmetrise", how,
                             str(pairs_tsv))
        assert code == 0 and err == ""
        results[how] = [parse_pharaoh(line) for line in out.splitlines()]
        assert results[how] == [set(symmetrise(f, b, how)) for f, b in zip(forward, backward)], how
    assert results["intersection"] == [f & b for f, b in zip(forward, backward)]
    assert results["union"] == [f | b for f, b in zip(forward, backward)]
    assert all(i <= g <= u for i, g, u in zip(results["intersection"], results["grow-diag-final"], results["union"]))
    code, out, _ = run(capsys, "align", "-m", model, "--reverse-model", model, str(pairs_tsv))  # the default
    assert code == 0 and [parse_pharaoh(line) for line in out.splitlines()] == results["grow-diag-final"]


def test_bad_lines_and_gold_errors(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    model = str(tiny_model_dir)
    path = tmp_path / "pairs.txt"
    path.write_text("red cat ||| rot katze\nno separator\nbig dog\t \nblue bird\tblau vogel\n", encoding="utf-8")
    code, out, err = run(capsys, "align", "-m", model, str(path))
    lines = out.split("\n")[:-1]
    assert code == 1 and len(lines) == 4 and lines[1] == lines[2] == "" and lines[0] and lines[3]
    assert err.splitlines() == [f"nmt-desktop: error: {path} line 2: no tab or ' ||| ' between source and target",
                                f"nmt-desktop: error: {path} line 3: the target is empty"]
    gold = tmp_path / "gold.txt"
    gold.write_text("0-0\n1-1 0-x\n", encoding="utf-8")
    code, out, err = run(capsys, "align", "-m", model, "--gold", str(gold), str(path))
    assert code == 1 and out == "" and err.strip() == (
        f"nmt-desktop: error: {gold} line 2: '0-x' is not a link (i-j sure or i?j possible, 0-based word indices)")
    gold.write_text("0-0 1-1\n\n\n", encoding="utf-8")
    code, out, err = run(capsys, "align", "-m", model, "--gold", str(gold), str(path))
    assert code == 1 and len(out.splitlines()) == 4
    assert err.splitlines()[-1] == (f"nmt-desktop: error: {gold} has 3 lines but {path} has 4 pairs; the gold file "
                                    "needs one line per pair")


@pytest.mark.parametrize("args, message", [
    (["--layer", "1"], "--layer 1: layers are now written like L3, counted from 1 (1 in the old 0-based spelling "
                       "is L2)"),
    (["--heads", "1:0"], "--heads 1:0: heads are now written like L3H2, counted from 1 (1:0 in the old 0-based "
                         "spelling is L2H1)"),
    (["--heads", "L2"], "--heads L2: name a head too, like L2H1"),
    (["--layer", "L5"], "--layer L5: the model has 2 decoder layers (L1..L2)"),
    (["--heads", "L1H9"], "--heads L1H9: the model has 4 heads per decoder layer (H1..H4)"),
    (["--layer", "L1", "--heads", "L1H1"], "argument --heads: not allowed with argument --layer"),
    (["--decision", "argmax", "--threshold", "0.2"], "--threshold applies only with --decision threshold"),
    (["--reading", "saliency", "--layer", "L1"], "--layer does not apply to --reading saliency"),
    (["--reading", "nonsense"], "argument --reading: invalid choice: 'nonsense' (choose from masking, shift, predict, "
                                "saliency,"),
    (["--grow", "-1"], "argument --grow: must be >= 0"),
    (["--symmetrise", "union"], "--symmetrise applies only with --reverse-model"),
    (["--json-summary", "x.json"], "--json-summary applies only with --gold"),
])
def test_usage_errors(tiny_model_dir: Path, pairs_tsv: Path, capsys, args, message) -> None:
    code, out, err = run(capsys, "align", "-m", str(tiny_model_dir), *args, str(pairs_tsv))
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err, err


def test_a_layer_for_a_reading_without_attention(tiny_trained, tmp_path: Path, pairs_tsv: Path, capsys) -> None:
    from nmt_desktop.core.formats.model_folder import save_model

    method = AlignMethod(reading="masking", attention_weight=0.0)
    model, tokenizers = tiny_trained
    folder = save_model(tmp_path / "masking-only", model, tokenizers, {"name": "tiny", "alignment": method.to_dict()})
    code, out, err = run(capsys, "align", "-m", str(folder), "--layer", "L1", str(pairs_tsv))
    assert code == 2 and out == "" and err.strip() == (
        "nmt-desktop: error: --layer applies only to readings that use attention (shift, predict, or masking with "
        "attention mixed in); this one reads none")
    code, out, _ = run(capsys, "align", "-m", str(folder), "--reading", "shift", "--layer", "L1", str(pairs_tsv))
    assert code == 0 and len(out.splitlines()) == len(PAIRS)


def test_a_missing_input_is_one_sentence(tiny_model_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("align", "-m", str(tiny_model_dir), str(tmp_path / "none.tsv"))
    assert f"cannot read {tmp_path / 'none.tsv'}" in assert_one_error_line(proc, 1)


def test_attribution_methods_as_readings(tiny_model_dir: Path, tiny_translator, pairs_tsv: Path) -> None:
    """`--reading saliency` and `--reading leave_one_out --grow 0` in real child processes: the core's links for
    that reading (its attribution's positive part as evidence), some links on every line."""
    default = default_method({}, 2)
    for flags, method in ((["--reading", "saliency"], replace(default, reading="saliency")),
                          (["--reading", "leave_one_out", "--grow", "0"],
                           replace(default, reading="leave_one_out", grow=0.0))):
        proc = run_cli("align", "-m", str(tiny_model_dir), "--threads", "1", *flags, str(pairs_tsv))
        assert proc.returncode == 0, proc.stderr
        lines = stdout_lines(proc)
        assert lines == expected_links(tiny_translator, method), flags
        assert len(lines) == len(PAIRS) and all(parse_pharaoh(line) for line in lines), flags


def test_growing_and_an_old_cards_entry(tiny_trained, tiny_model_dir: Path, tiny_translator, tmp_path: Path,
                                        pairs_tsv: Path, capsys) -> None:
    """--grow overrides the reading's growing; a card entry written before growing existed (no "grow") is read
    as it was chosen, not grown."""
    from nmt_desktop.core.formats.model_folder import save_model

    default = default_method({}, 2)
    assert default.grow > 0
    code, out, _ = run(capsys, "align", "-m", str(tiny_model_dir), "--grow", "0", str(pairs_tsv))
    assert code == 0 and out.splitlines() == expected_links(tiny_translator, replace(default, grow=0.0))
    old_entry = {"reading": "masking", "decision": "mutual", "prior": 1.0, "identical": True, "attention_weight": 0.5,
                 "layer": None}
    model, tokenizers = tiny_trained
    folder = save_model(tmp_path / "old-card", model, tokenizers, {"name": "tiny", "alignment": old_entry})
    code, out, _ = run(capsys, "align", "-m", str(folder), str(pairs_tsv))
    assert code == 0 and out.splitlines() == expected_links(tiny_translator, alignment.ISSUE23_METHOD)
