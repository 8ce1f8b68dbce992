"""The `eval` command: translate a test set and score it with sacreBLEU and chrF (optionally into the
model's card). `evaluate_model` is the scoring itself, also used by resources/training/choose_average.py."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from nmt_desktop.cli.common import UsageError, resolve_model, set_threads


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser("eval", parents=[common], help="score a model on a test set (sacreBLEU, chrF)",
                       description="Translate a test set and score it with sacreBLEU (cased, detokenized, 13a), "
                                   "chrF, and BLEU on lowercased 13a-tokenized text (to compare with published "
                                   "numbers).")
    p.add_argument("-m", "--model", metavar="MODEL", help="model folder, .zip or installed model name")
    p.add_argument("--test", metavar="FILE", help="TSV (source<TAB>reference) or TMX test set")
    p.add_argument("--src", metavar="FILE", help="source sentences, one per line (with --ref)")
    p.add_argument("--ref", metavar="FILE", help="reference translations, one per line (with --src)")
    p.add_argument("--reverse", action="store_true", help="swap the TSV columns (test the other direction)")
    p.add_argument("--multi-ref", action="store_true",
                   help="rows that share a source are one sentence with several references: translate it once "
                        "and score against all of them (sacreBLEU multi-reference)")
    p.add_argument("--beam", type=int, default=5, metavar="N", help="beam size (default 5)")
    p.add_argument("--length-penalty", type=float, default=1.0, metavar="ALPHA", help="(default 1.0)")
    p.add_argument("--batch-size", type=int, default=32, metavar="N", help="sentences per batch (default 32)")
    p.add_argument("--max-sentences", type=int, default=0, metavar="N", help="score only the first N (0 = all)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="CPU threads for torch")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default cpu)")
    p.add_argument("--int8", action="store_true", help="int8 linear layers (CPU only; see translate --int8)")
    p.add_argument("--hyps-out", metavar="FILE", help="also write the translations, one per line")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--write-card", metavar="LABEL", nargs="?", const="", default=None,
                   help="record the scores in the model folder's card.json and README.md under LABEL "
                        "(default: the test file's name, e.g. 'dev')")
    return p


def evaluate_model(model_path: Path, pairs: list[tuple[str, str]], beam: int = 5, length_penalty: float = 1.0,
                   batch_size: int = 32, device: str = "cpu", progress: bool = False,
                   int8: bool = False, multi_ref: bool = False) -> dict[str, Any]:
    """Translate the sources of `pairs` and score against their references (with multi_ref, rows
    sharing a source are one sentence scored against all its references)."""
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.training.metrics import bleu, chrf, group_references, tokenized_lowercase_bleu
    from nmt_desktop.core.decoding.translator import Translator

    translator = Translator.load(model_path, device=device, int8=int8)
    cfg = DecodeConfig(beam_size=beam, length_penalty=length_penalty, attention=False, alternatives=1)
    if multi_ref:
        sources, refs = group_references(pairs)
    else:
        sources, refs = [s for s, _ in pairs], [r for _, r in pairs]
    hyps: list[str] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(sources), unit="sent", file=sys.stderr, dynamic_ncols=True)
    t0 = time.perf_counter()
    chunk = max(batch_size * 8, 1)
    for start in range(0, len(sources), chunk):
        part = translator.translate_batch(sources[start: start + chunk], cfg, batch_size=batch_size)
        hyps.extend(t.text for t in part)
        if bar is not None:
            bar.update(len(part))
    seconds = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    b, c = bleu(hyps, refs), chrf(hyps, refs)
    return {"model": str(model_path), "sentences": len(sources), "beam": beam, "int8": int8,
            "references": len(pairs), "multi_ref": multi_ref,
            "bleu": round(b.score, 2), "chrf": round(c.score, 2),
            "bleu_tok_lc": round(tokenized_lowercase_bleu(hyps, refs), 2),
            "sentences_per_s": round(len(sources) / max(seconds, 1e-9), 2), "seconds": round(seconds, 2),
            "bleu_signature": b.signature, "chrf_signature": c.signature, "hypotheses": hyps}


def _write_card(model_path: Path, args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Add this evaluation to the model folder's card (and README)."""
    from nmt_desktop.core.formats.model_card import add_evaluation, write_card
    from nmt_desktop.core.formats.model_folder import load_model

    if not Path(model_path).is_dir():
        raise UsageError(f"--write-card needs a model folder, not {model_path}")
    test = args.test or args.src
    label = args.write_card or Path(test).stem
    command = " ".join(["nmt-desktop", "eval", "-m", str(args.model or model_path)]
                       + (["--test", args.test] if args.test else ["--src", args.src, "--ref", args.ref])
                       + (["--reverse"] if args.reverse else []) + (["--multi-ref"] if args.multi_ref else [])
                       + ["--beam", str(args.beam)]
                       + (["--max-sentences", str(args.max_sentences)] if args.max_sentences else []))
    card = load_model(model_path).card
    write_card(model_path, add_evaluation(card, label, result, command))


def run(args: argparse.Namespace) -> int:
    from nmt_desktop.core.training.corpus import CorpusSpec, read_corpus

    if bool(args.test) == bool(args.src or args.ref) or bool(args.src) != bool(args.ref):
        raise UsageError("give either --test FILE, or --src FILE and --ref FILE")
    if args.beam < 1:
        raise UsageError(f"--beam must be >= 1, got {args.beam}")
    model_path = resolve_model(args.model)
    set_threads(args.threads)
    corpus = read_corpus(CorpusSpec(path=args.test, src_path=args.src, tgt_path=args.ref, reverse=args.reverse))
    pairs = corpus.pairs[: args.max_sentences] if args.max_sentences else corpus.pairs
    result = evaluate_model(model_path, pairs, args.beam, args.length_penalty, args.batch_size, args.device,
                            progress=sys.stderr.isatty(), int8=args.int8, multi_ref=args.multi_ref)
    hyps = result.pop("hypotheses")
    if args.write_card is not None:
        _write_card(model_path, args, result)
    if args.hyps_out:
        Path(args.hyps_out).write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    if args.json:
        print(json.dumps(result))
    else:
        refs = (f" ({result['references']} references)" if args.multi_ref else "")
        print(f"{result['model']}: {result['sentences']} sentences{refs}, beam {result['beam']}\n"
              f"  sacreBLEU        {result['bleu']:.2f}   ({result['bleu_signature']})\n"
              f"  chrF             {result['chrf']:.2f}   ({result['chrf_signature']})\n"
              f"  BLEU tok+lc      {result['bleu_tok_lc']:.2f}   (13a-tokenized, lowercased)\n"
              f"  speed            {result['sentences_per_s']:.1f} sentences/s")
    return 0
