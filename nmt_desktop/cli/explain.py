"""The `explain` command: token attributions of translations (core/analysis/attribution.py, issue 31).

Input as `score` and `align` read it (pairs.py: `source<TAB>target` or `source ||| target`, the target forced
through the decoder), or with `--translate` source lines only, explained on the model's own translation
(greedy, or `--beam N`). One JSON object per input line: the source and target tokens, per target token a
score for every source token (T x S) and every earlier target token (T x T), the teacher-forced
log-probabilities, and with `--faithfulness` comprehensiveness / sufficiency against a random ranking;
`--summary` adds their means over the whole file on stderr after the last line (the number a comparison of
methods needs; stdout stays one JSON object per line).
Numbers are rounded to 5 decimals, like `translate --json`'s attention. A bad line gives
`{"source": ..., "translation": ..., "error": ...}` in its place (pairs.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from nmt_desktop.cli.common import (MODEL_HELP, UsageError, add_running_options, add_target_lang_option,
                                    load_translator, positive_int)
from nmt_desktop.cli.pairs import (ATTRIBUTION_METHODS, INPUT_HELP, ScoredPair, open_pairs, run_pairs,
                                   source_line)

METHODS = ATTRIBUTION_METHODS
DEFAULT_METHOD = "leave_one_out"
DEFAULT_IG_STEPS = 16  # integrated_gradients' own default
DECIMALS = 5  # like `translate --json`'s attention


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "explain", parents=[common], help="token attributions: which source and earlier target tokens each "
                                          "target token owes its probability to",
        description="Explain each target token's log-probability log p(y_t | x, y_<t) (teacher-forced) by a score "
                    "for every source token and every earlier target token. Input: sentence pairs, as 'score' reads "
                    "them, or with --translate source lines, explained on the model's own translation. One JSON "
                    "object per input line: source, translation, source_tokens, target_tokens (T includes the final "
                    "</s>), method, level, source_attribution (T x S), prefix_attribution (T x T, row t scores "
                    "y_0..y_{t-1}), logprobs, seconds (and baseline_logprobs with integrated_gradients; start, the "
                    "decoder start token's share, with the attention methods, alti_plus and value_zeroing; "
                    "source_share with alti_plus and value_zeroing; faithfulness with --faithfulness), rounded to 5 decimals. A bad line is reported on stderr and keeps its "
                    "place ({\"error\": ...}); the exit status is 1 if any line failed.")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("input", nargs="?", metavar="FILE",
                   help=f"{INPUT_HELP}; with --translate: source sentences, one per line")
    add_target_lang_option(p)
    t = p.add_argument_group("what is explained")
    t.add_argument("--translate", action="store_true",
                   help="read source lines only and explain the model's own translation of each (greedy unless "
                        "--beam)")
    t.add_argument("--beam", type=positive_int, default=None, metavar="N",
                   help="with --translate: beam size of the translation (default 1, greedy)")
    a = p.add_argument_group("attribution")
    a.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                   help="saliency: gradient norm per token (>= 0); input_x_gradient: embedding x gradient (signed); "
                        f"integrated_gradients: from an all-zero embedding baseline, --ig-steps points (signed); "
                        "leave_one_out: the drop of log p(y_t) when the token is replaced by <unk> (signed); "
                        "attention_rollout: encoder attention rollout read through the last layer's cross-attention "
                        "(rows sum to 1); attention: cross-attention averaged over all layers and heads (the plain "
                        "baseline); alti_plus: ALTI+ (Ferrando et al. 2022), each attention block's output "
                        "decomposed per input token, rolled out through encoder, decoder and cross-attention; "
                        "value_zeroing: cosine distance of the final decoder state when a token's value vectors are "
                        "zeroed in every layer (Mohebbi et al. 2023). alti_plus and value_zeroing rows over source, "
                        "prefix and decoder start token sum to 1 (the start token's share is left out). Default {DEFAULT_METHOD}: it measures what it claims directly (no gradient "
                        "approximation), costs two batched forward passes and no backward pass, and hides tokens "
                        "the way --faithfulness does")
    a.add_argument("--words", action="store_true",
                   help="sum the scores into words (source columns summed, target rows summed; the rows of "
                        "attention_rollout, attention, alti_plus and value_zeroing averaged: they are shares); "
                        "tokens then name words")
    a.add_argument("--ig-steps", type=positive_int, default=None, metavar="N",
                   help=f"integrated_gradients: points of the path integral (default {DEFAULT_IG_STEPS})")
    f = p.add_argument_group("faithfulness")
    f.add_argument("--faithfulness", action="store_true",
                   help="add comprehensiveness and sufficiency (ferret; AOPC over removing/keeping the top 10%%..50%% "
                        "of the source tokens by each target token's scores, replaced by <unk>) beside a random "
                        "ranking's; several extra passes per line")
    f.add_argument("--seed", type=int, default=None, metavar="N",
                   help="with --faithfulness: seed of the random ranking (default 0)")
    f.add_argument("--summary", action="store_true",
                   help="with --faithfulness: after the last line, print to stderr the mean comprehensiveness and "
                        "sufficiency AOPC over all explained lines, the random ranking's, and the number of lines")
    add_running_options(p, "lines scored or translated")
    return p


def _check_options(args: argparse.Namespace) -> None:
    if args.int8:
        raise UsageError("--int8 does not apply: attributions need the float model (its gradients and exact "
                         "log-probabilities)")
    if args.beam is not None and not args.translate:
        raise UsageError("--beam applies only with --translate")
    if args.ig_steps is not None and args.method != "integrated_gradients":
        raise UsageError("--ig-steps applies only with --method integrated_gradients")
    if args.seed is not None and not args.faithfulness:
        raise UsageError("--seed applies only with --faithfulness")
    if args.summary and not args.faithfulness:
        raise UsageError("--summary applies only with --faithfulness")


class _Translating:
    """The translator as pairs.score_lines uses it, translating the source instead of scoring a target: its
    `score_batch` / `score` give the model's own translation of each whole line (`--translate`)."""

    def __init__(self, translator: Any):
        self.translator = translator

    def score_batch(self, pairs: Sequence[tuple[str, str]], cfg: Any, batch_size: int = 16) -> list[Any]:
        return self.translator.translate_batch([s for s, _ in pairs], cfg, batch_size=batch_size, whole_lines=True)

    def score(self, source: str, target: str, cfg: Any) -> Any:
        return self.score_batch([(source, target)], cfg)[0]


def _rounded(values: Any) -> Any:
    import numpy as np

    return np.round(np.asarray(values, dtype=np.float64), DECIMALS).tolist()


def _faithfulness_json(faith: Any) -> dict[str, Any]:
    return {
        "comprehensiveness_aopc": round(faith.aopc_comprehensiveness, DECIMALS),
        "sufficiency_aopc": round(faith.aopc_sufficiency, DECIMALS),
        "random_comprehensiveness_aopc": round(faith.random_aopc_comprehensiveness, DECIMALS),
        "random_sufficiency_aopc": round(faith.random_aopc_sufficiency, DECIMALS),
        "fractions": list(faith.fractions),
        "comprehensiveness": _rounded(faith.comprehensiveness), "sufficiency": _rounded(faith.sufficiency),
        "random_comprehensiveness": _rounded(faith.random_comprehensiveness),
        "random_sufficiency": _rounded(faith.random_sufficiency),
        "full_logprob": round(faith.full_logprob, DECIMALS), "seed": faith.seed,
        "seconds": round(faith.seconds, DECIMALS),
    }


def summary_text(method: str, faiths: Sequence[Any]) -> str:
    """--summary's stderr block: means over the lines' `Faithfulness` (unrounded), 5 decimals."""
    lines = [(f"faithfulness summary: {len(faiths)} lines (failed lines left out); comprehensiveness: higher is "
              "better, sufficiency: lower is better"),
             f"{'method':<22} {'comprehensiveness_aopc':>22} {'sufficiency_aopc':>16}"]
    if faiths:
        n = len(faiths)
        comp = sum(f.aopc_comprehensiveness for f in faiths) / n
        suff = sum(f.aopc_sufficiency for f in faiths) / n
        r_comp = sum(f.random_aopc_comprehensiveness for f in faiths) / n
        r_suff = sum(f.random_aopc_sufficiency for f in faiths) / n
        lines.append(f"{method:<22} {comp:>22.5f} {suff:>16.5f}")
        lines.append(f"{'random':<22} {r_comp:>22.5f} {r_suff:>16.5f}")
    return "\n".join(lines)


def explain_json(translator: Any, translation: Any, source: str, args: argparse.Namespace,
                 faiths: list[Any] | None = None) -> dict[str, Any]:
    """The JSON object of one explained translation; ValueError (a failed line) where the core refuses it.
    `faiths` collects each line's Faithfulness (for --summary)."""
    from nmt_desktop.core.analysis.attribution import attribute, faithfulness

    if translation.segments:
        raise ValueError("the line is too long for the model to translate whole; give it sentence by sentence")
    options = {"steps": args.ig_steps} if args.ig_steps is not None else {}
    att = attribute(translator, translation, args.method, **options)
    faith = faithfulness(translator, translation, att, seed=args.seed or 0) if args.faithfulness else None
    if args.words:
        att = att.words(translator.tokenizers.source.continuing_prefix)
    out: dict[str, Any] = {
        "source": source, "translation": translation.text,
        "source_tokens": att.source_tokens, "target_tokens": att.target_tokens,
        "method": att.method, "level": att.level, "signed": att.signed,
        "source_attribution": _rounded(att.source), "prefix_attribution": _rounded(att.prefix),
        "logprobs": _rounded(att.logprobs), "seconds": round(att.seconds, DECIMALS),
    }
    if att.baseline_logprobs is not None:
        out["baseline_logprobs"] = _rounded(att.baseline_logprobs)
    if att.start is not None:
        out["start"] = _rounded(att.start)
    if att.source_share is not None:
        out["source_share"] = _rounded(att.source_share)
    if faith is not None:
        out["faithfulness"] = _faithfulness_json(faith)
        if faiths is not None:
            faiths.append(faith)
    return out


def run(args: argparse.Namespace) -> int:
    _check_options(args)
    lines = open_pairs(args.input, source_line if args.translate else None)
    from nmt_desktop.core.config import DecodeConfig

    translator = load_translator(args.model, args, args.target_lang)
    if args.translate:
        model: Any = _Translating(translator)
        cfg = DecodeConfig(beam_size=args.beam or 1, nbest=1, alternatives=0, attention=False)
    else:
        model = translator
        cfg = DecodeConfig(beam_size=1, alternatives=0, attention=False)

    def emit(scored: ScoredPair) -> str:
        line = scored.line
        if scored.error is not None:
            return json.dumps({"source": line.source, "translation": line.target, "error": scored.error},
                              ensure_ascii=False)
        return json.dumps(explain_json(translator, scored.translations[0], line.source, args, faiths),
                          ensure_ascii=False)

    faiths: list[Any] = []
    failures = run_pairs(lines, [(model, False, "")], cfg, args.batch_size, emit)
    if args.summary:
        print(summary_text(args.method, faiths), file=sys.stderr)
    return 1 if failures else 0
