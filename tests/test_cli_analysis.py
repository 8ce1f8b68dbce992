"""CLI analysis options, run in-process on the tiny model: translate --prefix/--ablate/--align, heads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nmt_desktop.cli.main import main
from nmt_desktop.core.analysis.heads import parse_pharaoh
from tiny_models import synthetic_pairs


def run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def probe_tsv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("probe") / "probe.tsv"
    path.write_text("".join(f"{s}\t{t}\n" for s, t in synthetic_pairs(6, seed=3)), encoding="utf-8")
    return path


def test_translate_prefix_and_align(tiny_model_dir: Path, capsys) -> None:
    code, out, _ = run(capsys, "translate", "-m", str(tiny_model_dir), "--json", "--align", "--prefix", "hund",
                       "red cat runs")
    assert code == 0
    obj = json.loads(out)
    assert obj["translation"].startswith("hund")
    assert parse_pharaoh(obj["alignment"]) == {(0, 0), (1, 1), (2, 2)}
    code, out, _ = run(capsys, "translate", "-m", str(tiny_model_dir), "--align", "--align-layer", "0",
                       "--align-method", "threshold", "--align-threshold", "0.2", "red cat runs")
    assert code == 0
    text, alignment = out.rstrip("\n").split("\t")
    assert text == "rot katze rennt" and parse_pharaoh(alignment)


def test_translate_ablate(tiny_model_dir: Path, capsys) -> None:
    model = str(tiny_model_dir)
    _, intact, _ = run(capsys, "translate", "-m", model, "red cat runs")
    heads = ",".join(f"{l}:{h}" for l in range(2) for h in range(4))
    code, ablated, _ = run(capsys, "translate", "-m", model, "--ablate", heads, "red cat runs")
    assert code == 0 and ablated != intact
    code, _, err = run(capsys, "translate", "-m", model, "--ablate", "5:0", "x")
    assert code == 2 and "--ablate" in err
    code, _, err = run(capsys, "translate", "-m", model, "--ablate", "0-1", "x")
    assert code == 2 and "LAYER:HEAD" in err


def test_heads_json_and_table(tiny_model_dir: Path, probe_tsv: Path, capsys) -> None:
    args = ["heads", "-m", str(tiny_model_dir), "--probe", str(probe_tsv), "--max-sentences", "4"]
    code, out, _ = run(capsys, *args, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["sentences"] == 4
    assert sorted((r["layer"], r["head"]) for r in report["heads"]) == [(l, h) for l in range(2) for h in range(4)]
    assert {"bleu", "bleu_drop", "entropy", "diagonality", "coverage"} <= set(report["heads"][0])
    code, again, _ = run(capsys, *args, "--json")
    assert again == out  # deterministic
    code, table, _ = run(capsys, *args)
    assert code == 0 and len(table.strip().splitlines()) == 2 + 8
