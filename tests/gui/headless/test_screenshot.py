"""`nmt-desktop gui --analysis-view VIEW --screenshot FILE.png` (gui/screenshot.py) with the tiny model.

Each view is shot in-process through `cli_main` (the same code path as the console script, without a
new interpreter per view); a spy on `prepare_analysis_view` records the window's state just before the
PNG is saved: the view shown and, for the job views, the job's result, checked against the core.
One run goes through a real child process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage  # noqa: E402

from nmt_desktop.cli import gui as gui_command  # noqa: E402
from nmt_desktop.cli.main import main as cli_main  # noqa: E402
from nmt_desktop.core.analysis import ablation as analysis  # noqa: E402
from nmt_desktop.core.analysis.alignment import align, default_method  # noqa: E402
from nmt_desktop.core.analysis.words import display_piece  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.gui.headless import screenshot  # noqa: E402

TEXT = "red cat runs big dog"
LAST_LAYER = "L2H1,L2H2,L2H3,L2H4"  # every head of the tiny model's last decoder layer
LAST_HEADS = [(1, 0), (1, 1), (1, 2), (1, 3)]  # the same as 0-based indices


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    image = QImage(str(path))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500


def shoot(monkeypatch, model: Path, out: Path, view: str, *extra: str) -> dict:
    """Run `gui --analysis-view VIEW --screenshot OUT` in-process; the window's state when the PNG was taken."""
    seen: dict = {}
    real = screenshot.prepare_analysis_view

    def spy(window, args) -> None:
        real(window, args)
        panel = window.analysis_panel
        seen.update(tab=window.tabs.currentWidget() is panel, view=panel.tabs.currentWidget(),
                    expected_view=getattr(panel, screenshot.VIEWS[view]), panel=panel)
        seen.update(CHECKS[view](panel))

    monkeypatch.setattr(screenshot, "prepare_analysis_view", spy)
    assert cli_main(["gui", "-m", str(model), "--text", TEXT, "--analysis-view", view, *extra,
                     "--screenshot", str(out)]) == 0
    assert seen["tab"] and seen["view"] is seen["expected_view"]
    assert_png(out)
    return seen


CHECKS = {
    "stats": lambda p: {"rows": p.stats.table.rowCount(), "images": len(p.stats.grid_images)},
    "ablation": lambda p: {"original": p.ablation.translation.target_ids, "ablated": p.ablation.ablated.target_ids,
                           "heads": p.ablation.selected_heads(), "shown": p.ablation.result.toPlainText(),
                           "ablated_text": p.ablation.ablated.target_tokens, "cfg": p.ablation.cfg},
    "alignments": lambda p: {"links": list(p.alignment.links), "lines": len(p.alignment.lines),
                             "method": p.alignment.method(), "said": p.alignment.picker.description.text(),
                             "expected": align(p.translation, default_method(None, p.translation.attention.shape[0]),
                                               translator=p.translator)},
    "coverage": lambda p: {"items": [p.coverage.list.item(i).text() for i in range(p.coverage.list.count())]},
    "forced": lambda p: {"old": p.forced.old, "new": p.forced.new.target_ids,
                         "prefix": list(p.forced.prefix), "diff_rows": p.forced.diff.matrix().shape[0]},
    "beam-tree": lambda p: {"nodes": len(p.beam_tree.state.tree), "items": len(p.beam_tree.items),
                            "selected": p.beam_tree.state.tree[p.beam_tree.selected].status,
                            "beam": p.beam_tree.beam.value(), "best": p.beam_tree.result.target_ids,
                            "focus": p.beam_tree.focus.matrix().shape},
    "compare": lambda p: {"texts": p.compare.texts.toPlainText(), "a": p.compare.a.text, "b": p.compare.b.text,
                          "diff": p.compare.view_diff.matrix().shape, "status": p.compare.status.text()},
}


def test_every_cli_view_name_has_a_view() -> None:
    assert gui_command.ANALYSIS_VIEWS == tuple(screenshot.VIEWS)  # both from the registry, in tab order


@pytest.mark.parametrize("view", ["stats", "alignments", "coverage"])
def test_plain_views(monkeypatch, app_dirs, tiny_model_dir, tiny_translator, view) -> None:
    seen = shoot(monkeypatch, tiny_model_dir, app_dirs / f"{view}.png", view)
    cfg = tiny_translator.config
    if view == "stats":
        assert seen["rows"] == seen["images"] == cfg.decoder_layers * cfg.n_heads
    elif view == "alignments":
        assert seen["links"] == seen["expected"] and seen["lines"] == len(seen["links"]) > 0  # the card names none
        assert seen["method"].describe(cfg.decoder_layers) in seen["said"]
    else:
        assert seen["items"]  # warnings, or "No coverage warnings."


def test_ablation_view_shows_the_changed_translation(monkeypatch, app_dirs, tiny_model_dir, tiny_translator) -> None:
    seen = shoot(monkeypatch, tiny_model_dir, app_dirs / "ablation.png", "ablation", "--ablate", LAST_LAYER)
    heads = LAST_HEADS
    assert sorted(seen["heads"]) == heads
    expected = tiny_translator.translate(TEXT, seen["cfg"], head_mask=analysis.ablation_mask(tiny_translator, heads))
    assert seen["ablated"] == expected.target_ids != seen["original"]
    assert all(display_piece(token) in seen["shown"] for token in seen["ablated_text"])


def test_ablation_defaults_to_the_last_layer(monkeypatch, app_dirs, tiny_model_dir) -> None:
    seen = shoot(monkeypatch, tiny_model_dir, app_dirs / "ablation.png", "ablation")
    assert sorted(seen["heads"]) == LAST_HEADS


def test_forced_view_forces_the_second_best_token(monkeypatch, app_dirs, tiny_model_dir) -> None:
    seen = shoot(monkeypatch, tiny_model_dir, app_dirs / "forced.png", "forced", "--force-step", "2")
    old = seen["old"]
    second = next(a for a in old.best.alternatives[1] if a.token_id != old.target_ids[1])
    assert seen["prefix"] == old.target_ids[:1] + [second.token_id] == seen["new"][:2]
    assert seen["new"] != old.target_ids
    assert seen["diff_rows"] == min(len(seen["new"]), len(old.target_ids))


def test_beam_tree_view_has_nodes_and_the_best_finished_node_selected(monkeypatch, app_dirs, tiny_model_dir,
                                                                      tiny_translator) -> None:
    seen = shoot(monkeypatch, tiny_model_dir, app_dirs / "beam.png", "beam-tree", "--beam", "3")
    assert seen["beam"] == 3 and seen["nodes"] == seen["items"] > 0
    assert seen["selected"] == "finished" and seen["focus"][0] > 0
    assert seen["best"] == tiny_translator.translate(TEXT, DecodeConfig(beam_size=3, attention=True)).target_ids


def test_compare_view_shows_both_translations(monkeypatch, app_dirs, tiny_model_dir) -> None:
    seen = shoot(monkeypatch, tiny_model_dir, app_dirs / "compare.png", "compare", "--compare", str(tiny_model_dir))
    assert f"A (tiny-en-xx): {seen['a']}" in seen["texts"] and f"B (tiny-en-xx): {seen['b']}" in seen["texts"]
    assert seen["a"] == seen["b"] and seen["diff"][0] > 0 and "B − A" in seen["status"]


def test_child_process_beam_tree_screenshot(tiny_model_dir, tmp_path) -> None:
    from cli_runner import run_gui_cli

    out = tmp_path / "tree.png"
    proc = run_gui_cli("-m", str(tiny_model_dir), "--text", TEXT, "--analysis-view", "beam-tree", "--screenshot",
                       str(out), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert_png(out)


@pytest.mark.parametrize("args, message", [
    (["--analysis-view", "nope"], "--analysis-view: invalid choice: 'nope'"),
    (["--ablate", "L2H1"], "--ablate needs --analysis-view ablation"),
    (["--force-step", "2", "--analysis-view", "ablation"], "--force-step needs --analysis-view forced"),
    (["--analysis-view", "compare"], "needs --compare MODEL"),
    (["--analysis-view", "beam-tree", "--beam", "1"], "needs --beam 2 or more"),
    (["--analysis-view", "stats", "--tab", "train"], "drop --tab train"),
    (["--analysis-view", "ablation", "--ablate", "L8H1"], "--ablate L8H1: the model has 2 decoder layers (L1..L2)"),
    (["--analysis-view", "ablation", "--ablate", "L1H5"], "--ablate L1H5: the model has 4 heads per decoder layer"),
    (["--analysis-view", "ablation", "--ablate", "7:0"], "--ablate 7:0: heads are now written like L3H2, counted "
                                                         "from 1 (7:0 in the old 0-based spelling is L8H1)"),
    (["--focus", "L3"], "--focus L3: the model has 2 decoder layers (L1..L2)"),
    (["--analysis-view", "forced", "--force-step", "99"], "--force-step 99 is out of range"),
    (["--analysis-view", "ablation", "--ablate", "x"], "--ablate"),
])
def test_usage_errors_are_one_line_exit_2(args, message, capsys, app_dirs, tiny_model_dir) -> None:
    out = app_dirs / "x.png"
    assert cli_main(["gui", "-m", str(tiny_model_dir), "--text", TEXT, *args, "--screenshot", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("nmt-desktop: error: ") and message in err[0], err
    assert not out.exists()


def test_missing_text_is_a_usage_error(capsys, app_dirs) -> None:
    assert cli_main(["gui", "--analysis-view", "stats", "--screenshot", str(app_dirs / "x.png")]) == 2
    assert "--analysis-view needs --text" in capsys.readouterr().err
