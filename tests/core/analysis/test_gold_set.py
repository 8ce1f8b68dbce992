"""The hand-made English-German gold alignment set in benchmarks/align/ stays well-formed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from cli_runner import REPO_ROOT

_ALIGN = REPO_ROOT / "benchmarks" / "align"


def _checker():
    spec = importlib.util.spec_from_file_location("check_gold", _ALIGN / "check_gold.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_en_de_gold_set_is_well_formed():
    check_gold = _checker()
    prefix = _ALIGN / "en-de.dev"
    assert check_gold.check(prefix) == []
    pairs, sure, possible = check_gold.counts(prefix)
    assert pairs == 60 and sure > 0 and possible > 0


def test_checker_finds_problems(tmp_path):
    check_gold = _checker()
    prefix = tmp_path / "x"
    Path(f"{prefix}.src").write_text("The cat .\na dog\n", encoding="utf-8")
    Path(f"{prefix}.tgt").write_text("die katze .\n", encoding="utf-8")
    Path(f"{prefix}.gold").write_text("0-0 1-1 2-2 3-0 1?1\n0-0\n", encoding="utf-8")
    problems = "\n".join(check_gold.check(prefix))
    assert "line counts differ" in problems
    assert "source index 3 out of range" in problems
    assert "link 1,1 given twice" in problems
    assert "not lower-cased" in problems
