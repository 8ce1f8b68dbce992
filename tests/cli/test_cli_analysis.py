"""CLI analysis options, run in-process on the tiny model: translate --prefix/--ablate/--align, heads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run

from nmt_desktop.core.analysis.pharaoh import parse_pharaoh
from tiny_models import synthetic_pairs


@pytest.fixture(scope="module")
def probe_tsv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("probe") / "probe.tsv"
    path.write_text("".join(f"{s}\t{t}\n" for s, t in synthetic_pairs(6, seed=3)), encoding="utf-8")
    return path


def test_translate_prefix_and_align(tiny_model_dir: Path, capsys) -> None:
    # the old reading (last layer, attention where a token is predicted, argmax) links the forced "hund" to
    # "red" by position; the model's default reading (issue 23) need not link a word the model did not choose
    old = ("--align-reading", "predict", "--align-layer", "L2", "--align-method", "argmax")
    for flags, expected in ((old, {(0, 0), (1, 1), (2, 2)}), ((), None)):
        code, out, _ = run(capsys, "translate", "-m", str(tiny_model_dir), "--json", "--align", "--prefix", "hund",
                           *flags, "red cat runs")
        assert code == 0
        obj = json.loads(out)
        assert obj["translation"].startswith("hund")
        links = parse_pharaoh(obj["alignment"])
        assert links == expected if expected else {(1, 1), (2, 2)} <= links <= {(0, 0), (1, 1), (2, 2)}, flags
    code, out, _ = run(capsys, "translate", "-m", str(tiny_model_dir), "--align", "--align-layer", "L1",
                       "--align-method", "threshold", "--align-threshold", "0.2", "red cat runs")
    assert code == 0
    text, alignment = out.rstrip("\n").split("\t")
    assert text == "rot katze rennt" and parse_pharaoh(alignment)


def test_a_line_of_two_sentences_is_aligned_sentence_by_sentence(tiny_model_dir: Path, capsys) -> None:
    """Translated sentence by sentence (core/decoding/document.py), aligned the same way: the second sentence's
    links count its words after the first sentence's, in the line and in its translation."""
    first, second = "red cat runs big dog.", "blue bird sleeps."
    code, out, _ = run(capsys, "translate", "-m", str(tiny_model_dir), "--align", f"{first} {second}", first, second)
    assert code == 0
    (line, line_links), (text1, links1), (text2, links2) = [row.split("\t") for row in out.splitlines()]
    assert line == f"{text1} {text2}"
    shift = len(first.split()), len(text1.split())
    expected = parse_pharaoh(links1) | {(i + shift[0], j + shift[1]) for i, j in parse_pharaoh(links2)}
    assert parse_pharaoh(line_links) == expected and parse_pharaoh(links2)


def test_align_layer_counts_from_1(tiny_model_dir: Path, tiny_translator, capsys) -> None:
    """--align-layer L1 is the first decoder layer (index 0), the attention the model's default reading reads
    or mixes in; without it, the model's default reading (issue 23: was the last layer)."""
    from dataclasses import replace

    from nmt_desktop.core.analysis.alignment import align, default_method
    from nmt_desktop.core.analysis.pharaoh import to_pharaoh
    from nmt_desktop.core.config import DecodeConfig

    translation = tiny_translator.translate("red cat runs big dog", DecodeConfig(attention=True))
    default = replace(default_method({}, 2), decision="threshold", threshold=0.2)
    args = ["translate", "-m", str(tiny_model_dir), "--align", "--align-method", "threshold", "--align-threshold",
            "0.2", "red cat runs big dog"]
    for flag, method in ((["--align-layer", "L1"], replace(default, layer=0, heads=None)),
                         (["--align-layer", "l2"], replace(default, layer=1, heads=None)), ([], default)):
        code, out, _ = run(capsys, *args, *flag)
        expected = to_pharaoh(align(translation, method, translator=tiny_translator))
        assert code == 0 and out.rstrip("\n").split("\t")[1] == expected, flag


@pytest.mark.parametrize("value, message", [
    ("0", "--align-layer 0: layers are now written like L3, counted from 1 (0 in the old 0-based spelling is L1)"),
    ("-1", "--align-layer -1: layers are now written like L3, counted from 1"),
    ("L3", "--align-layer L3: the model has 2 decoder layers (L1..L2)"),
    ("L1H2", "--align-layer L1H2: name a layer only, like L1 (its heads are averaged)"),
    ("L0", "--align-layer L0: layers and heads are counted from 1"),
])
def test_align_layer_bad_spellings(tiny_model_dir: Path, capsys, value, message) -> None:
    code, out, err = run(capsys, "translate", "-m", str(tiny_model_dir), "--align", "--align-layer", value, "x")
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("nmt-desktop: error: ")
    assert message in lines[0], lines[0]


def test_align_layer_needs_align(tiny_model_dir: Path, capsys) -> None:
    code, _, err = run(capsys, "translate", "-m", str(tiny_model_dir), "--align-layer", "L1", "x")
    assert code == 2 and "--align-layer applies only with --align" in err


def test_translate_ablate(tiny_model_dir: Path, capsys) -> None:
    model = str(tiny_model_dir)
    _, intact, _ = run(capsys, "translate", "-m", model, "red cat runs")
    heads = ",".join(f"L{l}H{h}" for l in (1, 2) for h in (1, 2, 3, 4))
    code, ablated, _ = run(capsys, "translate", "-m", model, "--ablate", heads, "red cat runs")
    assert code == 0 and ablated != intact
    code, by_layer, _ = run(capsys, "translate", "-m", model, "--ablate", "L1,l2", "red cat runs")
    assert code == 0 and by_layer == ablated  # a layer alone is all of its heads


def test_translate_ablate_counts_from_1(tiny_model_dir: Path, tiny_translator, capsys) -> None:
    """--ablate L2H3 zeroes head index (1, 2), as ablation_mask does."""
    from nmt_desktop.core.analysis.ablation import ablation_mask

    text = "red cat runs big dog"
    for spelt, pairs in (("L2H3", [(1, 2)]), ("L1 H1, L2H4", [(0, 0), (1, 3)])):
        code, out, _ = run(capsys, "translate", "-m", str(tiny_model_dir), "--ablate", spelt, text)
        expected = tiny_translator.translate(text, head_mask=ablation_mask(tiny_translator, pairs)).text
        assert code == 0 and out == expected + "\n", spelt


@pytest.mark.parametrize("value, message", [
    ("5:0", "--ablate 5:0: heads are now written like L3H2, counted from 1 (5:0 in the old 0-based spelling is L6H1)"),
    ("0:1,1:3", "(0:1,1:3 in the old 0-based spelling is L1H2,L2H4)"),
    ("L3H1", "--ablate L3H1: the model has 2 decoder layers (L1..L2)"),
    ("L1H5", "--ablate L1H5: the model has 4 heads per decoder layer (H1..H4)"),
    ("0-1", "--ablate '0-1': expected heads written like L3H2"),
    ("1", "--ablate 1: layers are now written like L3, counted from 1 (1 in the old 0-based spelling is L2)"),
])
def test_translate_ablate_bad_spellings(tiny_model_dir: Path, capsys, value, message) -> None:
    code, out, err = run(capsys, "translate", "-m", str(tiny_model_dir), "--ablate", value, "x")
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("nmt-desktop: error: ")
    assert message in lines[0], lines[0]


def test_heads_json_and_table(tiny_model_dir: Path, probe_tsv: Path, capsys) -> None:
    args = ["heads", "-m", str(tiny_model_dir), "--probe", str(probe_tsv), "--max-sentences", "4"]
    code, out, _ = run(capsys, *args, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["sentences"] == 4
    assert sorted((r["layer"], r["head"]) for r in report["heads"]) == [(l, h) for l in range(2) for h in range(4)]
    assert all(r["name"] == f"L{r['layer'] + 1} H{r['head'] + 1}" for r in report["heads"])  # arrays count from 0
    assert {"bleu", "bleu_drop", "entropy", "diagonality", "coverage"} <= set(report["heads"][0])
    code, again, _ = run(capsys, *args, "--json")
    assert again == out  # deterministic
    code, table, _ = run(capsys, *args)
    assert code == 0 and len(table.strip().splitlines()) == 2 + 8
    lines = table.strip().splitlines()
    assert lines[1].split("\t")[:3] == ["head", "bleu", "bleu_drop"]
    assert [line.split("\t")[0] for line in lines[2:]] == [r["name"] for r in report["heads"]]
