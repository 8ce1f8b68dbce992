"""The `heads` command: rank decoder cross-attention heads by the BLEU lost when each is switched off."""

from __future__ import annotations

import argparse
import json
from typing import Any

from nmt_desktop.cli.common import (DEFAULT_BATCH_SIZE, MODEL_HELP, naming_model, positive_int, resolve_model,
                                    set_threads, utf8_stdout)
from nmt_desktop.core.analysis.head_names import head_name


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "heads", parents=[common], help="rank cross-attention heads by importance on a probe set",
        description="For every decoder cross-attention head (written L3 H2: decoder layer 3, head 2, counted "
                    "from 1): the probe set's BLEU with that head switched off (zeroed) and the drop from the "
                    "intact model's BLEU (greedy decoding, deterministic), sorted by drop, largest first; with the "
                    "head's attention statistics averaged over the probe set (entropy in nats, share on </s> and "
                    "punctuation, diagonality, monotonicity, coverage).")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("--probe", required=True, metavar="FILE.tsv", help="probe pairs: source<TAB>reference per line")
    p.add_argument("--max-sentences", type=positive_int, default=None, metavar="N",
                   help="use a random subset of N probe pairs (drawn with --seed)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the probe subset (default 0)")
    p.add_argument("--batch-size", type=positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"sentences translated together (default {DEFAULT_BATCH_SIZE})")
    p.add_argument("--threads", type=positive_int, default=None, metavar="N", help="CPU threads for torch")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object; each head's 'name' is L3 H2 and its 'layer' and 'head' are array "
                        "indices, counted from 0 like the attention arrays (L3 H2: layer 2, head 1)")
    return p


_HEAD_COLUMNS = ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage")


def head_report(translator: Any, pairs: list[tuple[str, str]], max_sentences: int | None, seed: int,
                batch_size: int) -> dict[str, Any]:
    """What `heads` reports: one row per cross-attention head, largest BLEU drop first."""
    from nmt_desktop.core.analysis.ablation import probe_subset, rank_heads
    from nmt_desktop.core.analysis.head_statistics import probe_head_stats

    probe = probe_subset(pairs, max_sentences, seed)
    ranking = rank_heads(translator, probe, batch_size=batch_size)
    stats = {(r.layer, r.head): r for r in probe_head_stats(translator, [s for s, _ in probe], batch_size)}
    rows = []
    for r in ranking:
        row: dict[str, Any] = {"name": head_name(r.layer, r.head), "layer": r.layer, "head": r.head,
                               "bleu": round(r.bleu, 4),
                               "bleu_drop": round(r.bleu_drop, 4)}
        st = stats.get((r.layer, r.head))
        row.update({c: None if st is None else round(getattr(st, c), 4) for c in _HEAD_COLUMNS})
        rows.append(row)
    base = ranking[0].bleu + ranking[0].bleu_drop
    return {"sentences": len(probe), "bleu": round(base, 4), "heads": rows}


def _format_heads(report: dict[str, Any]) -> str:
    names = ("bleu", "bleu_drop", *_HEAD_COLUMNS)
    lines = [f"probe: {report['sentences']} sentences, BLEU {report['bleu']:.2f} with every head on",
             "\t".join(("head", *names))]
    for row in report["heads"]:
        lines.append("\t".join([row["name"], *("None" if row[n] is None else f"{row[n]:.4f}" for n in names)]))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    model_path = resolve_model(args.model)
    set_threads(args.threads)
    from nmt_desktop.core.training.corpus import CorpusSpec, read_corpus
    from nmt_desktop.core.decoding.translator import Translator

    pairs = read_corpus(CorpusSpec(path=args.probe)).pairs
    with naming_model(model_path):
        translator = Translator.load(model_path)
    report = head_report(translator, pairs, args.max_sentences, args.seed, args.batch_size)
    utf8_stdout()
    print(json.dumps(report, ensure_ascii=False) if args.json else _format_heads(report))
    return 0

