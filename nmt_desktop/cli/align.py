"""The `align` command: word alignments of given sentence pairs, read from the model's attention.

The interface of fast_align and awesome-align, so it drops into their pipelines: `source<TAB>target`
(or `source ||| target`) lines in, words are each side's whitespace tokens, one Pharaoh line out per
pair (`0-0 1-2`: source word i, target word j, 0-based). The target is forced through the decoder
(`Translator.score_batch`) and read by an `AlignMethod` (core/analysis/alignment.py): the model's
default reading unless options override it (`--reading` also takes any attribution method of
core/analysis/attribution.py: its source attribution's positive part is the evidence); a model of the reverse direction adds target->source
links, symmetrised. A side written in lower case (as gold sets are) is truecased for the model first.
`--gold` compares the links with gold links (AER, precision, recall).
A bad line gives an empty output line in its place (pairs.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from dataclasses import replace
from typing import Any, Iterator

from nmt_desktop.cli.common import (MODEL_HELP, CLIError, UsageError, add_running_options, add_target_lang_option,
                                    align_method, head_name, head_names, load_translator)
from nmt_desktop.cli.pairs import ATTRIBUTION_METHODS, PairLine, ScoredPair, add_pair_input, open_pairs, run_pairs

# core/analysis/alignment.py's READINGS, DECISIONS, SYMMETRISATIONS, spelt out so that --help imports no numpy
# (the attribution methods: pairs.py's copy, for the help only; --reading checks the core's tuple when used)
READINGS = ("masking", "shift", "predict")
DECISIONS = ("argmax", "mutual", "threshold")
SYMMETRISATIONS = ("grow-diag-final", "intersection", "union")
_EPILOG = "(the default reading of each bundled model)"  # replaced when the help is shown (_Help)


class _Help(argparse.HelpFormatter):
    """Help whose epilog states the default reading, computed only when the help is shown (it reads the
    bundled models' card.json and config.json)."""

    def add_text(self, text: str | None) -> None:
        super().add_text(default_reading_text() if text == _EPILOG else text)


def default_reading_text() -> str:
    """"Default reading: ... en-de: <describe>; en-fr: <describe>", from each bundled model's files."""
    from nmt_desktop.core.analysis.alignment import default_method
    from nmt_desktop.core.locations import bundled_models

    found: dict[str, list[str]] = {}  # description -> bundled model names
    for folder in bundled_models():
        try:
            card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
            layers = int(json.loads((folder / "config.json").read_text(encoding="utf-8"))["decoder_layers"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        found.setdefault(default_method(card, layers).describe(layers), []).append(folder.name)
    bundled = "".join(f" For the bundled {' and '.join(names)}: {text}." for text, names in found.items())
    return ("Default reading: the one the model's card.json names in its 'alignment' entry, else the best one on "
            f"the development sets (benchmarks/RESULTS.md); --gold prints the reading used.{bundled}")


def reading(name: str) -> str:
    """--reading's type: a reading of the core, or a name of `attribution.METHODS` as it is when the command runs
    (other methods may have been added since this file's help was written)."""
    if name in READINGS:
        return name
    from nmt_desktop.core.analysis.alignment import attribution_methods

    methods = attribution_methods()
    if name not in methods:
        raise argparse.ArgumentTypeError(f"invalid choice: {name!r} (choose from {', '.join(READINGS + methods)})")
    return name


def ratio(text: str) -> float:
    """--grow's type: a number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 (0: not grown), got {text}")
    return value


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "align", parents=[common], help="word alignments of given sentence pairs (Pharaoh links, like fast_align)",
        formatter_class=_Help, epilog=_EPILOG,
        description="Word alignments from the model as it reads each given pair (the target forced through the "
                    "decoder): by default how much each target word's probability drops when a source word is hidden, "
                    "with its cross-attention; see the reading below. Words are the whitespace tokens of each side, as fast_align "
                    "and awesome-align count them; one line per pair in Pharaoh format ('0-0 1-2': source word i, "
                    "target word j, 0-based). A bad line is reported on stderr and gives an empty line in its place; "
                    "the exit status is 1 if any line failed.")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    add_pair_input(p)
    add_target_lang_option(p)
    r = p.add_argument_group("reading (default: the model's; see below)")
    r.add_argument("--reading", type=reading, default=None, metavar="READING",
                   help="masking: how much a target word's probability drops when a source word is hidden (one "
                        "more pass per source word); shift: its attention where its token is consumed as decoder "
                        "input (Chen et al. 2020); predict: its attention where it is predicted; or an attribution "
                        f"method ({', '.join(ATTRIBUTION_METHODS)}; see `explain`): its attribution of each target "
                        "token to the source tokens, negative scores counted as 0, merged to words, with the "
                        "reading's prior, identical words and decision (no attention mixed in)")
    which = r.add_mutually_exclusive_group()
    which.add_argument("--layer", type=head_name("--layer", "layer"), default=None, metavar="L2",
                       help="the decoder layer whose heads are averaged for the attention the reading reads (or "
                            "mixes in), counted from 1")
    which.add_argument("--heads", type=head_names("--heads", "head"), default=None, metavar="L2H1[,...]",
                       help="instead of a layer: the cross-attention heads averaged, counted from 1, e.g. L2H1,L3H4")
    r.add_argument("--decision", choices=DECISIONS, default=None,
                   help="argmax: each target word to its best source word; mutual: only words that are each "
                        "other's best; threshold: every pair whose evidence >= --threshold")
    r.add_argument("--threshold", type=float, default=None, metavar="X",
                   help="evidence needed for a link with --decision threshold (default 0.3)")
    r.add_argument("--grow", type=ratio, default=None, metavar="X",
                   help="after the decision, also link a pair next to a link when it is one word's best and at "
                        "least X times the other word's best evidence (0: no growing; default: the reading's, "
                        "0.4 unless the model's card says otherwise): one word may then link to several")
    s = p.add_argument_group("symmetrisation")
    s.add_argument("--reverse-model", metavar="MODEL",
                   help="a model of the reverse direction (target -> source): it aligns each pair the other way "
                        "(with the same reading options) and the two are combined")
    s.add_argument("--symmetrise", choices=SYMMETRISATIONS, default=None,
                   help="how the two directions are combined (default grow-diag-final, as in Moses)")
    g = p.add_argument_group("evaluation")
    g.add_argument("--gold", metavar="FILE",
                   help="gold links, one line per pair ('i-j' sure, 'i?j' possible, 0-based): prints AER, precision "
                        "and recall on stderr once all pairs are aligned (lines that failed are left out)")
    g.add_argument("--json-summary", metavar="FILE",
                   help="with --gold: also write the scores to FILE as JSON (fractions, not percent)")
    p.add_argument("--no-truecase", action="store_true",
                   help="read each side's case as given; by default a side that starts in lower case (a lower-cased "
                        "gold set) is truecased for the model first: a word gets its capital where the model's "
                        "vocabulary knows that form better, and the first word is capitalised (only case changes, "
                        "so word indices stay)")
    add_running_options(p, "pairs read")
    return p


def _check_options(args: argparse.Namespace) -> None:
    if args.symmetrise is not None and args.reverse_model is None:
        raise UsageError("--symmetrise applies only with --reverse-model")
    if args.json_summary is not None and args.gold is None:
        raise UsageError("--json-summary applies only with --gold")


def read_gold(path: str) -> list[Any]:
    """The gold file's lines as GoldLinks; CLIError naming the file and line of a bad link."""
    from nmt_desktop.core.analysis.alignment import parse_gold

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeError:
        raise CLIError(f"cannot read {path}: it is not UTF-8 text") from None
    try:
        return [parse_gold(line, f"{path} line {n}") for n, line in enumerate(text.splitlines(), 1)]
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _method(translator: Any, args: argparse.Namespace, which: str = "") -> Any:
    """The reading for one model: its default with the options applied; UsageError for a bad combination."""
    from nmt_desktop.core.analysis.alignment import READINGS as MODEL_READINGS

    if args.reading is not None and args.reading not in MODEL_READINGS and (args.layer or args.heads):
        raise UsageError(f"{'--layer' if args.layer else '--heads'} does not apply to --reading {args.reading} "
                         "(an attribution method reads no attention heads)")
    method = align_method(translator, args.reading, args.layer and (f"--layer{which}", args.layer),
                          args.heads and (f"--heads{which}", args.heads), args.decision, args.threshold)
    if args.grow is not None:
        method = replace(method, grow=args.grow)
    if args.threshold is not None and method.decision != "threshold":
        raise UsageError(f"--threshold applies only with --decision threshold (the reading{which} decides by "
                         f"{method.decision})")
    return method


class _Aligner:
    """Links of each scored pair (forward, or symmetrised with the reverse model's), kept for --gold."""

    def __init__(self, translators: list[Any], methods: list[Any], how: str, keep: bool):
        self.translators, self.methods, self.how, self.keep = translators, methods, how, keep
        self.links: dict[int, list[tuple[int, int]]] = {}  # line number -> links, with --gold
        self.lines = 0

    def __call__(self, scored: ScoredPair) -> str:
        from nmt_desktop.core.analysis.alignment import align, symmetrise
        from nmt_desktop.core.analysis.pharaoh import to_pharaoh

        self.lines = max(self.lines, scored.line.number)
        if scored.error is not None:
            return ""
        src, tgt = scored.line.source.split(), scored.line.target.split()
        links = align(scored.translations[0], self.methods[0], src, tgt, translator=self.translators[0])
        if len(scored.translations) > 1:
            backward = align(scored.translations[1], self.methods[1], tgt, src, translator=self.translators[1])
            links = symmetrise(links, [(i, j) for j, i in backward], self.how)
        if self.keep:
            self.links[scored.line.number] = links
        return to_pharaoh(links)


def truecased(lines: tuple[str, Iterator[PairLine], bool], translator: Any) -> tuple[str, Iterator[PairLine], bool]:
    """The pair lines with each side truecased for the model (core/analysis/truecase.py) when it starts in
    lower case: a cased model aligns lower-cased text worse (benchmarks/RESULTS.md)."""
    from nmt_desktop.core.analysis.truecase import truecaser

    source, target = truecaser(translator.tokenizers.source), truecaser(translator.tokenizers.target)
    where, pair_lines, interactive = lines
    cased = (line if line.error is not None else replace(line, source=source(line.source), target=target(line.target))
             for line in pair_lines)
    return where, cased, interactive


def gold_report(gold: list[Any], aligner: _Aligner, gold_path: str, where: str, method: str) -> dict[str, Any]:
    """The --gold scores over the lines that were aligned; CLIError when the line counts differ."""
    from nmt_desktop.core.analysis.alignment import alignment_error

    if len(gold) != aligner.lines:
        raise CLIError(f"{gold_path} has {len(gold)} lines but {where} has {aligner.lines} pairs; the gold file "
                       "needs one line per pair")
    numbers = sorted(aligner.links)
    score = alignment_error([aligner.links[n] for n in numbers], [gold[n - 1] for n in numbers])
    return {**score.to_dict(), "left_out": aligner.lines - len(numbers), "reading": method}


def _summary_line(report: dict[str, Any]) -> str:
    left = f"; {report['left_out']} failed lines left out" if report["left_out"] else ""
    return (f"AER {100 * report['aer']:.2f}%, precision {100 * report['precision']:.2f}%, recall "
            f"{100 * report['recall']:.2f}% ({report['links']} links predicted, {report['sure']} sure and "
            f"{report['possible']} possible gold links, {report['sentences']} sentences{left}; reading: "
            f"{report['reading']})")


def run(args: argparse.Namespace) -> int:
    _check_options(args)
    gold = read_gold(args.gold) if args.gold is not None else None
    lines = open_pairs(args.input)
    from nmt_desktop.core.config import DecodeConfig

    translator = load_translator(args.model, args, args.target_lang)
    models = [(translator, False, "")]
    methods = [_method(translator, args)]
    if args.reverse_model is not None:
        reverse = load_translator(args.reverse_model, args)
        models.append((reverse, True, "the reverse model: "))
        methods.append(_method(reverse, args, " (reverse model)"))
    layers = [m.config.decoder_layers for m, _, _ in models]
    described = " / reverse model: ".join(m.describe(n) for m, n in zip(methods, layers))
    if args.reverse_model is not None:
        described += f"; symmetrised by {args.symmetrise or 'grow-diag-final'}"
    aligner = _Aligner([m for m, _, _ in models], methods, args.symmetrise or "grow-diag-final", keep=gold is not None)
    cfg = DecodeConfig(beam_size=1, alternatives=0, attention=True)
    failures = run_pairs(lines if args.no_truecase else truecased(lines, translator), models, cfg, args.batch_size,
                         aligner)
    if gold is not None:
        report = gold_report(gold, aligner, args.gold, lines[0], described)
        print(_summary_line(report), file=sys.stderr, flush=True)
        if args.json_summary is not None:
            try:
                Path(args.json_summary).write_text(json.dumps(report, ensure_ascii=False) + "\n", encoding="utf-8")
            except OSError as exc:
                raise CLIError(f"cannot write {args.json_summary}: {exc.strerror or exc}") from None
    return 1 if failures else 0
