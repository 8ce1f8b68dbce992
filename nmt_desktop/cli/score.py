"""The `score` command: how the model reads given translations (teacher forcing, `Translator.score_batch`).

One output line per input pair: a JSON object (the given target's tokens, their log-probabilities,
the model's top-k alternatives at each position and where its first choice differs, the sentence
log-probability and perplexity, attention on request), or with `--format score` a bare number, so
the command drops into pipelines (`paste pairs.tsv <(nmt-desktop score pairs.tsv --format score)`).
A bad line gives `{"source": ..., "target": ..., "error": ...}` or `nan` in its place (pairs.py).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from nmt_desktop.cli.common import (MODEL_HELP, UsageError, add_running_options, add_target_lang_option,
                                    load_translator, non_negative_int)
from nmt_desktop.cli.pairs import ScoredPair, add_pair_input, open_pairs, run_pairs

DEFAULT_ALTERNATIVES = 5
FAILED_SCORE = "nan"  # --format score's line for a pair that could not be scored (float("nan") reads it)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "score", parents=[common], help="score given translations: log-probabilities, alternatives, attention",
        description="How the model reads a given translation of each source (a reference, a draft, another "
                    "system's output): each target token's log-probability, the model's top-k alternatives at each "
                    "position, the positions where its first choice differs, the sentence log-probability and "
                    "perplexity (the target's final </s> is scored and counted). One output line per input pair; "
                    f"a bad line is reported on stderr and keeps its place ({{\"error\": ...}}, or {FAILED_SCORE} "
                    "with --format score); the exit status is 1 if any line failed.")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    add_pair_input(p)
    add_target_lang_option(p)
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=("json", "score"), default="json",
                   help="json: one object per pair with source, target, source_tokens, target_tokens (raw pieces), "
                        "token_logprobs, alternatives (per position: piece, id, prob), disagreements (index, given, "
                        "given_prob, preferred, preferred_prob), logprob, perplexity, tokens; score: the sentence "
                        "log-probability alone (default json)")
    o.add_argument("--per-token", action="store_true",
                   help="with --format score: the log-probability divided by the number of target tokens")
    o.add_argument("--alternatives", type=non_negative_int, default=DEFAULT_ALTERNATIVES, metavar="K",
                   help=f"the model's K most probable tokens at each position (default {DEFAULT_ALTERNATIVES}; "
                        "0: none, and no disagreements)")
    o.add_argument("--attention", action="store_true",
                   help="add cross-attention [layer][head][target][source], indexed from 0 (L3 H2 is "
                        "attention[2][1])")
    o.add_argument("--self-attention", action="store_true",
                   help="add decoder self-attention [layer][head][target][target]")
    add_running_options(p, "pairs scored")
    return p


def decode_config(args: argparse.Namespace) -> Any:
    """The DecodeConfig for the options; UsageError for options that do not go together."""
    from nmt_desktop.core.config import DecodeConfig

    if args.format == "score":
        extra = [flag for flag, on in (("--attention", args.attention), ("--self-attention", args.self_attention))
                 if on]
        if extra:
            raise UsageError(f"{' and '.join(extra)} appl{'ies' if len(extra) == 1 else 'y'} only to --format json")
    elif args.per_token:
        raise UsageError("--per-token applies only with --format score")
    alternatives = args.alternatives if args.format == "json" else 0
    return DecodeConfig(beam_size=1, alternatives=alternatives, attention=args.attention,
                        self_attention=args.self_attention)


def _rounded(array: Any) -> Any:
    """Attention as nested lists rounded like `translate --json`'s."""
    import numpy as np

    return None if array is None else np.round(np.asarray(array, dtype=np.float64), 5).tolist()


def pair_json(scored: ScoredPair, args: argparse.Namespace) -> dict[str, Any]:
    """The JSON object of one scored pair (or of a failed line: source, target and error)."""
    from nmt_desktop.core.decoding.scoring import disagreements

    line = scored.line
    if scored.error is not None:
        return {"source": line.source, "target": line.target, "error": scored.error}
    tr = scored.translations[0]
    hyp = tr.best
    out: dict[str, Any] = {
        "source": line.source, "target": line.target,
        "source_tokens": tr.source_tokens, "target_tokens": hyp.tokens,
        "token_logprobs": [round(float(x), 6) for x in hyp.token_logprobs],
        "alternatives": [[{"piece": a.piece, "id": int(a.token_id), "prob": round(float(a.prob), 6)} for a in alts]
                         for alts in hyp.alternatives] if args.alternatives else [[] for _ in hyp.tokens],
        "disagreements": [{"index": d.index, "given": d.given, "given_prob": round(d.given_prob, 6),
                           "preferred": d.preferred, "preferred_prob": round(float(d.preferred_prob), 6)}
                          for d in disagreements(hyp)] if args.alternatives else [],
        "logprob": round(hyp.logprob, 6), "perplexity": round(hyp.perplexity, 6), "tokens": len(hyp.tokens),
    }
    if args.attention:
        out["attention"] = _rounded(hyp.attention)
    if args.self_attention:
        out["self_attention"] = _rounded(hyp.self_attention)
    return out


def score_value(scored: ScoredPair, per_token: bool) -> str:
    """--format score's line: the sentence log-probability (per token with --per-token), `nan` for a failed line."""
    if scored.error is not None:
        return FAILED_SCORE
    hyp = scored.translations[0].best
    return f"{hyp.logprob / len(hyp.tokens) if per_token else hyp.logprob:.6f}"


def run(args: argparse.Namespace) -> int:
    cfg = decode_config(args)
    lines = open_pairs(args.input)
    translator = load_translator(args.model, args, args.target_lang)
    if args.format == "score":
        def emit(scored: ScoredPair) -> str:
            return score_value(scored, args.per_token)
    else:
        def emit(scored: ScoredPair) -> str:
            return json.dumps(pair_json(scored, args), ensure_ascii=False)
    failures = run_pairs(lines, [(translator, False, "")], cfg, args.batch_size, emit)
    return 1 if failures else 0
