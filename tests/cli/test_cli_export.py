"""`nmt-desktop export` (ship a model: half precision, shards, card, README) and `eval --write-card`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch
from safetensors import safe_open

from nmt_desktop.core.formats.model_folder import load_model
from nmt_desktop.core.decoding.translator import Translator
from cli_runner import assert_one_error_line, run_cli
from tiny_models import synthetic_pairs, write_tsv

ATTRIBUTION = "Tatoeba Project (tatoeba.org) via manythings.org/anki"


def _export(source: Path, out: Path, *extra: str, extra_models: list[Path] = ()):
    return run_cli("export", str(source), *map(str, extra_models), "--out", str(out), "--attribution", ATTRIBUTION,
                   "--license", "CC-BY 2.0 FR", "--retrain", "bash resources/training/retrain.sh xx", *extra)


def test_export_half_precision_sharded_with_card_and_readme(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "shipped"
    (out).mkdir()
    (out / "stale.txt").write_text("from an older export", encoding="utf-8")
    proc = _export(tiny_model_dir, out, "--max-file-mb", "0.05")
    assert proc.returncode == 0, proc.stderr
    assert "float16" in proc.stdout
    assert not (out / "stale.txt").exists()  # the folder is replaced, not merged
    shards = sorted(out.glob("model-*.safetensors"))
    assert len(shards) > 1 and all(p.stat().st_size <= 0.05 * 1024 * 1024 for p in shards)
    for shard in shards:
        with safe_open(str(shard), framework="pt") as f:
            assert {str(f.get_slice(k).get_dtype()) for k in f.keys()} == {"F16"}

    original, shipped = load_model(tiny_model_dir), load_model(out)
    card = shipped.card
    assert card["name"] == "shipped" and card["attribution"] == ATTRIBUTION and card["license"] == "CC-BY 2.0 FR"
    assert card["weights_dtype"] == "float16"
    assert card["parameters"] == sum(p.numel() for p in original.model.parameters())
    assert card["architecture"]["d_model"] == original.config.d_model
    assert card["data"] == original.card["data"]  # what training wrote is kept
    for name, value in original.model.state_dict().items():
        torch.testing.assert_close(shipped.model.state_dict()[name], value.half().float())
    sentence = "red cat runs"
    assert Translator.load(out).translate(sentence).text == Translator.load(tiny_model_dir).translate(sentence).text
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert ATTRIBUTION in readme and "bash resources/training/retrain.sh xx" in readme


def test_eval_write_card_records_scores(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "shipped"
    assert _export(tiny_model_dir, out).returncode == 0
    test = write_tsv(tmp_path / "dev.tsv", synthetic_pairs(30, seed=11))
    proc = run_cli("eval", "-m", str(out), "--test", str(test), "--beam", "2", "--json", "--write-card")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    recorded = card["eval"]["dev"]
    assert (recorded["bleu"], recorded["chrf"], recorded["sentences"], recorded["beam"]) == \
           (result["bleu"], result["chrf"], 30, 2)
    assert recorded["command"] == f"nmt-desktop eval -m {out} --test {test} --beam 2"
    assert card["attribution"] == ATTRIBUTION  # the rest of the card is kept
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert f"| dev | 30 | 2 | {result['bleu']} | {result['chrf']} |" in readme
    # a second set goes beside the first under its own label
    assert run_cli("eval", "-m", str(out), "--test", str(test), "--beam", "1", "--write-card", "greedy").returncode == 0
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert set(card["eval"]) == {"dev", "greedy"} and card["eval"]["greedy"]["beam"] == 1


def test_export_errors_are_one_line(tiny_model_dir: Path, tmp_path: Path) -> None:
    assert "is a model being exported" in assert_one_error_line(_export(tiny_model_dir, tiny_model_dir), 2)
    assert "--max-file-mb" in assert_one_error_line(_export(tiny_model_dir, tmp_path / "x", "--max-file-mb", "0"), 2)
    assert "missing" in assert_one_error_line(_export(tmp_path / "missing", tmp_path / "y"), 1)
    zipped = tmp_path / "m.zip"
    zipped.write_bytes(b"not a zip")
    test = write_tsv(tmp_path / "dev.tsv", synthetic_pairs(3, seed=1))
    line = assert_one_error_line(run_cli("eval", "-m", str(zipped), "--test", str(test), "--write-card"), 1)
    assert "m.zip" in line


def test_export_averages_several_snapshots(tiny_model_dir: Path, tmp_path: Path) -> None:
    import shutil

    from nmt_desktop.core.formats.model_folder import save_model

    a, b = tmp_path / "step-0000100", tmp_path / "step-0000200"
    shutil.copytree(tiny_model_dir, a)
    loaded = load_model(tiny_model_dir)
    with torch.no_grad():
        for p in loaded.model.parameters():
            p.mul_(3.0)  # b = 3 a, so the average is 2 a
    save_model(b, loaded.model, loaded.tokenizers, loaded.card)
    out = tmp_path / "averaged"
    proc = _export(a, out, "--dtype", "float32", extra_models=[b])
    assert proc.returncode == 0, proc.stderr
    assert "the average of 2 models" in proc.stdout
    shipped, original = load_model(out), load_model(tiny_model_dir)
    for name, value in original.model.state_dict().items():
        torch.testing.assert_close(shipped.model.state_dict()[name], 2 * value)
    assert shipped.card["averaged_from"] == ["step-0000100", "step-0000200"]
    assert "average of 2 checkpoints" in (out / "README.md").read_text(encoding="utf-8")

    other = tmp_path / "other"
    loaded.model.config = dataclasses.replace(loaded.config, tgt_lang="xx")
    save_model(other, loaded.model, loaded.tokenizers, loaded.card)
    line = assert_one_error_line(_export(a, tmp_path / "bad", extra_models=[other]), 2)
    assert "other: its architecture differs" in line
    assert not (tmp_path / "bad").exists()


def test_eval_multi_ref_scores_each_source_once_against_all_its_references(tiny_model_dir: Path,
                                                                           tmp_path: Path) -> None:
    from tiny_models import reference

    sources = [s for s, _ in synthetic_pairs(20, seed=12)]
    rows = [(s, "wrong words here entirely") for s in sources] + [(s, reference(s)) for s in sources]
    test = write_tsv(tmp_path / "multi.tsv", rows)  # each source twice: a bad and a good reference
    single = json.loads(run_cli("eval", "-m", str(tiny_model_dir), "--test", str(test), "--beam", "1",
                                "--json").stdout)
    out = tmp_path / "m"
    assert _export(tiny_model_dir, out, "--dtype", "float32").returncode == 0
    proc = run_cli("eval", "-m", str(out), "--test", str(test), "--beam", "1", "--json", "--multi-ref",
                   "--write-card", "multi")
    assert proc.returncode == 0, proc.stderr
    multi = json.loads(proc.stdout)
    assert single["sentences"] == 40 and (multi["sentences"], multi["references"]) == (20, 40)
    assert multi["bleu"] > 80 and single["bleu"] < multi["bleu"] - 20  # the bad references no longer count
    assert multi["bleu_signature"].startswith("nrefs:2")
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))["eval"]["multi"]
    assert card["multi_ref"] and card["references"] == 40 and "--multi-ref" in card["command"]
    assert "| multi | 20 (40 references) |" in (out / "README.md").read_text(encoding="utf-8")
