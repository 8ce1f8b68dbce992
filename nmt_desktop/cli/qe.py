"""The `qe` command: can this translation be trusted, and where not (core/analysis/quality.py, issue 31).

Input as `score` reads it (pairs.py: `source<TAB>target` or `source ||| target`), or with `--translate`
source lines only, estimated on the model's own greedy translation. One JSON object per input line: `qe`
(an estimate of the target's sentence chrF, 0..100, higher is better), `trust` (high / medium / low), the
plain `perplexity` beside it, the features it is made of, `untranslated` (source words the target seems to
leave out) and `flags` (each flagged word with its kind and the reason). A bad line gives
`{"source": ..., "target": ..., "error": ...}` in its place, like every pair command.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Sequence

from nmt_desktop.cli.common import MODEL_HELP, add_running_options, add_target_lang_option, load_translator
from nmt_desktop.cli.pairs import INPUT_HELP, ScoredPair, open_pairs, run_pairs, source_line


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "qe", parents=[common], help="trust signals: an estimated sentence quality and flagged words, no reference "
                                     "needed",
        description="Estimate how good each translation is without a reference, and where it may be wrong. Input: "
                    "sentence pairs (source<TAB>target, as 'score' reads them), or with --translate source lines, "
                    "estimated on the model's own translation. One JSON object per input line: qe (an estimate of "
                    "the target's sentence chrF against a human reference, 0..100, higher is better; use it to rank "
                    "and to triage), trust (high >= 60, medium >= 40, low), perplexity (the plain baseline), "
                    "features, untranslated (source words the target seems to leave out) and flags (words marked "
                    "doubted, untranslated, unsupported by the source, or repeated, each with its reason). The "
                    "recipe and how it was measured: benchmarks/RESULTS.md, 'Trust signals'.")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("input", nargs="?", metavar="FILE",
                   help=f"{INPUT_HELP}; with --translate: source sentences, one per line")
    add_target_lang_option(p)
    p.add_argument("--translate", action="store_true",
                   help="read source lines only and estimate the model's own (greedy) translation of each")
    add_running_options(p, "lines estimated")
    return p


class _Estimating:
    """The translator as pairs.run_pairs uses it: `score_batch` gives each pair's QualityEstimate instead of
    its scored Translation (the model's own translation when `own`)."""

    def __init__(self, translator: Any, own: bool):
        self.translator, self.own = translator, own

    def score_batch(self, pairs: Sequence[tuple[str, str]], cfg: Any, batch_size: int = 16) -> list[Any]:
        from nmt_desktop.core.analysis.quality import estimate_pairs

        return estimate_pairs(self.translator, [(s, None if self.own else t) for s, t in pairs], batch_size)

    def score(self, source: str, target: str, cfg: Any) -> Any:
        return self.score_batch([(source, target)], cfg)[0]


def run(args: argparse.Namespace) -> int:
    lines = open_pairs(args.input, source_line if args.translate else None)
    translator = load_translator(args.model, args, args.target_lang)

    def emit(scored: ScoredPair) -> str:
        line = scored.line
        if scored.error is not None:
            return json.dumps({"source": line.source, "target": line.target, "error": scored.error},
                              ensure_ascii=False)
        return json.dumps(scored.translations[0].to_dict(), ensure_ascii=False)

    failures = run_pairs(lines, [(_Estimating(translator, args.translate), False, "")], None, args.batch_size, emit)
    return 1 if failures else 0
