"""The dataset report (core/analysis/dataset_report.py) gives, over a file, the numbers the `heads` command and the
direct calls (rank_heads, probe_head_stats, attribute + faithfulness) give for the same pairs: it reuses them,
it does not approximate them. Tiny seeded model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nmt_desktop.core.analysis import attribution
from nmt_desktop.core.analysis.ablation import ablation_mask, rank_heads
from nmt_desktop.core.analysis.dataset_report import (HEAD_CSV, ReportCancelled, dataset_report, head_csv_rows,
                                                      method_csv_rows, read_pairs, sentence_scores)
from nmt_desktop.core.analysis.head_statistics import probe_head_stats
from nmt_desktop.core.config import DecodeConfig
from tiny_models import synthetic_pairs, write_tsv


def pairs_with_noise(n: int) -> list[tuple[str, str]]:
    """Synthetic pairs whose every third reference loses a word: BLEU below 100, so drops can show."""
    out = []
    for i, (s, t) in enumerate(synthetic_pairs(n, seed=7)):
        out.append((s, " ".join(t.split()[:-1]) or t) if i % 3 == 0 else (s, t))
    return out


@pytest.fixture(scope="module")
def heads_report(tiny_translator):
    return dataset_report(tiny_translator, pairs_with_noise(12), methods=(), batch_size=16)


def test_head_numbers_are_the_heads_commands(tiny_translator, heads_report) -> None:
    from nmt_desktop.cli.heads import head_report

    pairs = pairs_with_noise(12)
    ranked = {(r.layer, r.head): r for r in rank_heads(tiny_translator, pairs, batch_size=16)}
    assert len(heads_report.heads) == len(ranked) == 8
    for row in heads_report.heads:
        assert row.bleu == ranked[(row.layer, row.head)].bleu
        assert row.bleu_drop == pytest.approx(ranked[(row.layer, row.head)].bleu_drop, abs=1e-9)
    cli = {(r["layer"], r["head"]): r for r in head_report(tiny_translator, pairs, None, 0, 16)["heads"]}
    stats = {(s.layer, s.head): s for s in probe_head_stats(tiny_translator, [s for s, _ in pairs], 16)}
    for row in heads_report.heads:
        assert round(row.bleu_drop, 4) == cli[(row.layer, row.head)]["bleu_drop"]
        for name in ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage"):
            assert getattr(row.stats, name) == pytest.approx(getattr(stats[(row.layer, row.head)], name), abs=1e-12)
            assert round(getattr(row.stats, name), 4) == cli[(row.layer, row.head)][name]


def test_telling_sentences_are_the_largest_chrf_drops(tiny_translator, heads_report) -> None:
    pairs = pairs_with_noise(12)
    sources = [s for s, _ in pairs]
    cfg = DecodeConfig(attention=False, alternatives=0)
    base = [t.text for t in tiny_translator.translate_batch(sources, cfg, 16)]
    assert heads_report.translations == base
    row = max(heads_report.heads, key=lambda r: r.changed)  # the head whose ablation changes most
    assert row.changed > 0
    ablated = [t.text for t in tiny_translator.translate_batch(
        sources, cfg, 16, head_mask=ablation_mask(tiny_translator, [(row.layer, row.head)]))]
    changed = [i for i in range(len(pairs)) if ablated[i] != base[i]]
    assert row.changed == len(changed) and [c.index for c in row.telling] == sorted(
        changed, key=lambda i: (-(sentence_scores(base[i], pairs[i][1])[1] - sentence_scores(ablated[i], pairs[i][1])[1]),
                                -(sentence_scores(base[i], pairs[i][1])[0] - sentence_scores(ablated[i], pairs[i][1])[0]),
                                i))[:10]
    for change in row.telling:
        assert change.translation == ablated[change.index]
        assert change.chrf == pytest.approx(sentence_scores(ablated[change.index], pairs[change.index][1])[1])
    drops = [c.chrf_drop for c in row.telling]
    assert drops == sorted(drops, reverse=True)


def test_method_faithfulness_is_the_mean_of_the_direct_calls(tiny_translator) -> None:
    pairs = pairs_with_noise(3)
    report = dataset_report(tiny_translator, pairs, methods=("saliency", "leave_one_out"), heads=False, seed=3)
    assert report.heads == [] and [m.method for m in report.methods] == ["saliency", "leave_one_out"]
    translations = tiny_translator.translate_batch([s for s, _ in pairs], DecodeConfig(alternatives=0), 16)
    for row in report.methods:
        direct = [attribution.faithfulness(tiny_translator, t, attribution.attribute(tiny_translator, t, row.method),
                                           seed=3) for t in translations]
        assert row.sentences == 3 and row.skipped == 0 and row.error is None
        assert row.comprehensiveness == pytest.approx(np.mean([f.aopc_comprehensiveness for f in direct]), abs=1e-6)
        assert row.sufficiency == pytest.approx(np.mean([f.aopc_sufficiency for f in direct]), abs=1e-6)
        assert row.random_comprehensiveness == pytest.approx(
            np.mean([f.random_aopc_comprehensiveness for f in direct]), abs=1e-6)
        assert row.random_sufficiency == pytest.approx(np.mean([f.random_aopc_sufficiency for f in direct]), abs=1e-6)
        assert row.seconds_per_sentence > 0
        margins = [s.margin for s in row.telling]
        assert margins == sorted(margins) and len(row.telling) == 3


def test_every_method_of_the_moment_and_progress_and_csv(tiny_translator) -> None:
    seen: list[tuple[int, int]] = []
    report = dataset_report(tiny_translator, pairs_with_noise(2), progress=lambda d, t: seen.append((d, t)))
    assert [m.method for m in report.methods] == list(attribution.METHODS)  # read when called
    total = 1 + 8 + 2 * len(attribution.METHODS)
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert [d for d, _ in seen] == list(range(total + 1))
    heads, methods = head_csv_rows(report), method_csv_rows(report)
    assert heads[0] == list(HEAD_CSV) and len(heads) == 9 and heads[1][0] == "L1 H1"
    assert len(methods) == 1 + len(attribution.METHODS)


def test_cancel_stops_between_units(tiny_translator) -> None:
    seen: list[int] = []
    with pytest.raises(ReportCancelled):
        dataset_report(tiny_translator, pairs_with_noise(4), methods=(), progress=lambda d, t: seen.append(d),
                       cancel=lambda: len(seen) > 3)
    assert seen == [0, 1, 2, 3]  # nothing ran after cancel() turned true


def test_an_unexplainable_sentence_is_counted_not_fatal(tiny_translator, monkeypatch) -> None:
    real = attribution.attribute

    def picky(translator, translation, method, **options):
        if translation.source.startswith(pairs[1][0]):
            raise ValueError("nothing to explain")
        return real(translator, translation, method, **options)

    pairs = pairs_with_noise(3)
    monkeypatch.setattr(attribution, "attribute", picky)
    row = dataset_report(tiny_translator, pairs, methods=("saliency",), heads=False).methods[0]
    assert (row.sentences, row.skipped) == (2, 1) and row.error == "pair 2: nothing to explain"
    none = dataset_report(tiny_translator, pairs[1:2], methods=("saliency",), heads=False).methods[0]
    assert none.sentences == 0 and math.isnan(none.comprehensiveness)
    assert method_csv_rows(type("R", (), {"methods": [none]})())[1][1] is None


def test_read_pairs_and_refusals(tmp_path, tiny_translator) -> None:
    path = write_tsv(tmp_path / "dev.tsv", pairs_with_noise(5))
    assert read_pairs(path, 3) == pairs_with_noise(5)[:3]
    assert read_pairs(path) == pairs_with_noise(5)
    with pytest.raises(ValueError, match="at least one"):
        dataset_report(tiny_translator, [])
    with pytest.raises(ValueError, match="unknown attribution method"):
        dataset_report(tiny_translator, pairs_with_noise(1), methods=("nope",))


def test_a_repeated_source_is_explained_once_and_told_once(tiny_translator, monkeypatch) -> None:
    """Dev sets repeat a source with other references: its translation is the same, so is its explanation."""
    calls: list[str] = []
    real = attribution.attribute

    def counted(translator, translation, method, **options):
        calls.append(translation.source)
        return real(translator, translation, method, **options)

    monkeypatch.setattr(attribution, "attribute", counted)
    (s0, r0), (s1, r1) = pairs_with_noise(2)
    pairs = [(s0, r0), (s1, r1), (s0, r0 + " x"), (s0, r1)]
    report = dataset_report(tiny_translator, pairs, methods=("saliency",))
    assert sorted(calls) == sorted([s0, s1])
    row = report.methods[0]
    assert row.sentences == 4 and sorted(s.index for s in row.telling) == [0, 1]
    for head in report.heads:
        told = [pairs[c.index][0] for c in head.telling]
        assert len(told) == len(set(told))
