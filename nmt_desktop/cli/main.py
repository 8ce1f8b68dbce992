"""Command-line interface: ``nmt-desktop`` and ``python -m nmt_desktop``.

Each subcommand is one ``_add_<name>(subparsers, common)`` function that builds its parser and sets
``handler`` to a ``_cmd_<name>(args) -> int`` function; add new subcommands to ``_SUBCOMMANDS``.
Heavy imports (torch, the model code) happen inside handlers, so ``--help`` and ``--version`` are fast.

Exit codes: 0 success, 1 a bad model or input (one ``nmt-desktop: error: ...`` line on stderr),
2 a usage error (also one line). A traceback is printed only with ``--debug``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Sequence

from nmt_desktop import __version__
from nmt_desktop.cli_common import CLIError, UsageError, resolve_model, set_threads  # noqa: F401 (public here too)
from nmt_desktop.cli_export import add_export
from nmt_desktop.cli_models import add_models, add_pull
from nmt_desktop.cli_train import add_eval, add_train
from nmt_desktop.core.config import ConfigError, DecodeConfig  # stdlib-only module: cheap to import

PROG = "nmt-desktop"
DEFAULT_BATCH_SIZE = 16
PROGRESS_MIN_LINES = 50  # show a progress bar (stderr is a terminal) once this many lines are done
_DECODE_DEFAULTS = DecodeConfig()

# Exceptions meaning "bad model or input" (exit 1, message only); looked up lazily so that importing
# the CLI does not import torch. (module, class name)
_USER_ERRORS = (
    ("nmt_desktop.core.formats.model_dir", "ModelFolderError"),
    ("nmt_desktop.core.decoding.translator", "InputTooLongError"),
    ("nmt_desktop.core.tokenizer", "TokenizerError"),
    ("nmt_desktop.core.config", "ConfigError"),
    ("nmt_desktop.core.training.data", "CorpusError"),
    ("nmt_desktop.core.training.metrics", "MetricError"),
    ("nmt_desktop.core.training.train", "TrainingError"),
    ("nmt_desktop.core.locations", "ModelNotFoundError"),
    ("nmt_desktop.core.formats.marian", "MarianImportError"),
    ("nmt_desktop.core.hub.client", "HubError"),
)


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError (reported as one line) instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


# --- shared helpers ------------------------------------------------------------------------------

def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer >= `minimum`, else "expected a `what` integer, got ..."."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}")
        return value
    return parse


_positive_int = _int_at_least(1, "positive")
_non_negative_int = _int_at_least(0, "non-negative")


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "unknown error"


def _print_error(message: str) -> None:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr, flush=True)


def _utf8_stdout() -> None:
    """Write UTF-8 whatever the console's code page (never crash on a character)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def _fix_arg(text: str) -> str:
    """An argv string with undecodable bytes (surrogate-escaped on POSIX) -> valid Unicode."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


@contextlib.contextmanager
def _naming_model(path: Path) -> Iterator[None]:
    """Say which model a ModelFolderError is about when its message names only a file inside it."""
    from nmt_desktop.core.formats.model_dir import ModelFolderError

    try:
        yield
    except ModelFolderError as exc:
        if str(path) in str(exc):
            raise
        raise CLIError(f"model '{path}': {exc}") from exc


# --- translate -----------------------------------------------------------------------------------

def _add_translate(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    d = _DECODE_DEFAULTS
    p = sub.add_parser(
        "translate", parents=[common], help="translate text given as arguments or on stdin",
        description="Translate each TEXT argument, or else each line of stdin (one output line per input "
                    "line; an empty line for an empty input). Plain output is the best translation only; "
                    "use --json for the n-best list, tokens, scores and attention.")
    p.add_argument("-m", "--model", metavar="MODEL", help="model folder or .zip, or the name of an installed model (required)")
    p.add_argument("text", nargs="*", metavar="TEXT", help="inputs to translate (default: read stdin)")
    p.add_argument("--target-lang", metavar="CODE",
                   help="multilingual models (e.g. OPUS-MT en-ROMANCE): the target language, as fra or >>fra<<; "
                        "its token starts every input that does not start with one ('info' lists the codes)")
    g = p.add_argument_group("search")
    g.add_argument("--beam", type=int, default=d.beam_size, metavar="N",
                   help=f"beam size; 1 = greedy (default {d.beam_size})")
    g.add_argument("--nbest", type=int, default=d.nbest, metavar="K",
                   help="hypotheses kept, <= --beam; plain output prints only the best, --json all K")
    g.add_argument("--length-penalty", type=float, default=d.length_penalty, metavar="ALPHA",
                   help=f"GNMT length penalty alpha (default {d.length_penalty})")
    g.add_argument("--sample", action="store_true", help="sample instead of greedy search (needs --beam 1)")
    g.add_argument("--temperature", type=float, default=None, metavar="T",
                   help=f"sampling temperature (default {d.temperature})")
    g.add_argument("--top-k", type=int, default=None, metavar="K", help="sample from the K most likely tokens")
    g.add_argument("--top-p", type=float, default=None, metavar="P", help="nucleus sampling threshold in (0, 1]")
    g.add_argument("--seed", type=int, default=None, metavar="S", help="random seed for reproducible sampling")
    g.add_argument("--min-len", type=int, default=d.min_length, metavar="N",
                   help="generate at least N target tokens before </s>")
    g.add_argument("--max-len-a", type=float, default=d.max_len_a, metavar="A",
                   help=f"max target tokens = A * source tokens + B (default A={d.max_len_a})")
    g.add_argument("--max-len-b", type=int, default=d.max_len_b, metavar="B", help=f"(default B={d.max_len_b})")
    r = p.add_argument_group("running")
    r.add_argument("--batch-size", type=_positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"stdin lines translated together (default {DEFAULT_BATCH_SIZE}; 1 when stdin is a terminal)")
    r.add_argument("--threads", type=_positive_int, default=None, metavar="N", help="CPU threads for torch")
    r.add_argument("--int8", action="store_true",
                   help="int8 linear layers (CPU; faster, logits change by ~2%%; see README)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="one JSON object per input (one line each)")
    o.add_argument("--no-attention", action="store_true",
                   help="do not compute attention (faster; omits 'attention' from --json)")
    o.add_argument("--attention-out", metavar="FILE.npz",
                   help="save attention_<i>, source_tokens_<i>, target_tokens_<i> per input i (0-based)")
    a = p.add_argument_group("analysis")
    a.add_argument("--prefix", metavar="TEXT",
                   help="force every translation to start with this target-side text, then decode freely")
    a.add_argument("--ablate", type=_head_list, default=None, metavar="L:H[,L:H...]",
                   help="switch off (zero) these decoder cross-attention heads, 0-based layer:head, e.g. 0:1,1:3")
    a.add_argument("--align", action="store_true",
                   help="word alignment from cross-attention in Pharaoh format ('i-j': source word i, target word "
                        "j, 0-based): an 'alignment' field with --json, else TRANSLATION<TAB>ALIGNMENT")
    a.add_argument("--align-layer", type=int, default=-1, metavar="L",
                   help="decoder layer whose heads are averaged for --align (default -1: the last)")
    a.add_argument("--align-method", choices=("argmax", "threshold"), default="argmax",
                   help="link each target word to its most attended source word, or every pair >= "
                        "--align-threshold (default argmax)")
    a.add_argument("--align-threshold", type=float, default=0.3, metavar="X",
                   help="word attention needed for a link with --align-method threshold (default 0.3)")
    p.set_defaults(handler=_cmd_translate)


def _head_list(text: str) -> list[tuple[int, int]]:
    from nmt_desktop.core.analysis.heads import parse_heads  # numpy/torch imports: only when the flag is used

    try:
        return parse_heads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def decode_config(args: argparse.Namespace) -> DecodeConfig:
    """The DecodeConfig for translate's options; UsageError for values that make no sense."""
    sampling_opts = [name for name, value in (("--temperature", args.temperature), ("--top-k", args.top_k),
                                              ("--top-p", args.top_p), ("--seed", args.seed))
                     if value is not None]
    if sampling_opts and not args.sample:
        verb = "applies" if len(sampling_opts) == 1 else "apply"
        raise UsageError(f"{', '.join(sampling_opts)} only {verb} with --sample")
    if args.no_attention and args.attention_out:
        raise UsageError("--attention-out needs attention: drop --no-attention")
    if args.no_attention and args.align:
        raise UsageError("--align needs attention: drop --no-attention")
    d = _DECODE_DEFAULTS
    need_attention = not args.no_attention and (args.json or args.attention_out is not None or args.align)
    try:
        return DecodeConfig(
            beam_size=args.beam, nbest=args.nbest, length_penalty=args.length_penalty, sample=args.sample,
            temperature=d.temperature if args.temperature is None else args.temperature,
            top_k=d.top_k if args.top_k is None else args.top_k,
            top_p=d.top_p if args.top_p is None else args.top_p,
            seed=args.seed, min_length=args.min_len, max_len_a=args.max_len_a, max_len_b=args.max_len_b,
            attention=need_attention, alternatives=0)  # --json does not report alternatives
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _stdin_lines(stream: BinaryIO) -> Iterator[str]:
    """Lines of a byte stream as text: UTF-8 (bad bytes replaced), only the trailing newline removed."""
    for raw in stream:
        if raw.endswith(b"\r\n"):
            raw = raw[:-2]
        elif raw.endswith(b"\n"):
            raw = raw[:-1]
        yield raw.decode("utf-8", errors="replace")


def _batches(items: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Progress:
    """A tqdm bar on stderr, shown only on a terminal and only once enough lines were done."""

    def __init__(self, enabled: bool):
        self.enabled, self.count, self.bar = enabled, 0, None

    def update(self, n: int) -> None:
        self.count += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled and self.count > PROGRESS_MIN_LINES:
            from tqdm import tqdm

            self.bar = tqdm(initial=self.count, unit="line", file=sys.stderr, leave=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _translate_inputs(translator: Any, texts: list[str], cfg: DecodeConfig, batch_size: int,
                      **options: Any) -> list[tuple[Any | None, str | None]]:
    """(Translation, None) or (None, error message) per input; one bad input does not stop the rest.

    options: passed on to translate_batch / translate (head_mask, prefix_text).
    """
    from nmt_desktop.core.decoding.translator import InputTooLongError

    try:
        return [(t, None) for t in translator.translate_batch(texts, cfg, batch_size=batch_size, **options)]
    except InputTooLongError:
        pass
    results: list[tuple[Any | None, str | None]] = []
    for text in texts:  # find the culprits one by one
        try:
            results.append((translator.translate(text, cfg, **options), None))
        except InputTooLongError as exc:
            results.append((None, str(exc)))
    return results


def _alignment(translator: Any, translation: Any, args: argparse.Namespace) -> str | None:
    """The --align Pharaoh string of a translation; "" for an empty one, None for a split input."""
    from nmt_desktop.core.analysis.heads import align_words, to_pharaoh

    if translation.attention is None:
        return "" if not translation.target_ids and not translation.segments else None
    src, tgt = translator.tokenizers.source, translator.tokenizers.target
    links = align_words(translation, layer=args.align_layer, method=args.align_method,
                        threshold=args.align_threshold, source_starts=src.word_starts(translation.source_ids),
                        target_starts=tgt.word_starts(translation.target_ids))
    return to_pharaoh(links)


def _output_line(text: str, translation: Any | None, error: str | None, args: argparse.Namespace,
                 alignment: str | None = None) -> str:
    if args.json:
        if translation is None:
            return json.dumps({"source": text, "error": error}, ensure_ascii=False)
        out = translation.to_json(attention=not args.no_attention)
        if args.align:
            out["alignment"] = alignment
        return json.dumps(out, ensure_ascii=False)
    if translation is None:
        return ""
    # keep exactly one output line per input, whatever the model generated
    line = translation.text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return f"{line}\t{alignment or ''}" if args.align else line


def _attention_arrays(i: int, translation: Any | None, layers: int, heads: int) -> dict[str, Any]:
    """The --attention-out arrays of input i; empty ones for failed, empty or split inputs."""
    import numpy as np

    attn = None if translation is None else translation.attention
    src = [] if translation is None else list(translation.source_tokens)
    tgt = [] if translation is None else list(translation.target_tokens)
    if attn is None:
        attn = np.zeros((layers, heads, 0, 0), np.float32)
    return {f"attention_{i}": np.asarray(attn, dtype=np.float32),
            f"source_tokens_{i}": np.array(src, dtype=str),
            f"target_tokens_{i}": np.array(tgt, dtype=str)}


def _save_npz(path: Path, arrays: dict[str, Any]) -> None:
    import numpy as np

    for name, value in arrays.items():  # never write object arrays (they would need pickle to load)
        assert value.dtype != object, name
    tmp = path.with_name(path.name + ".part")
    try:
        with open(tmp, "wb") as f:  # a file object: np.savez would append ".npz" to a bare name
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None


def _choose_target_language(translator: Any, code: str) -> None:
    """Set --target-lang on the translator; a model without that code is a usage error."""
    from nmt_desktop.core.decoding.translator import TargetLanguageError

    try:
        translator.target_language = translator.language_token(code)
    except TargetLanguageError as exc:
        raise UsageError(f"--target-lang: {exc}") from None


def _cmd_translate(args: argparse.Namespace) -> int:
    cfg = decode_config(args)
    model_path = resolve_model(args.model)
    attention_out = None if args.attention_out is None else Path(args.attention_out)
    if attention_out is not None and not attention_out.parent.is_dir():
        raise CLIError(f"cannot write {attention_out}: folder {attention_out.parent} does not exist")
    set_threads(args.threads)

    from nmt_desktop.core.decoding.translator import Translator

    with _naming_model(model_path):
        translator = Translator.load(model_path, int8=args.int8)
    if args.target_lang is not None:
        _choose_target_language(translator, _fix_arg(args.target_lang))
    layers, heads = translator.config.decoder_layers, translator.config.n_heads
    if args.align and not -layers <= args.align_layer < layers:
        raise UsageError(f"--align-layer {args.align_layer}: the model has {layers} decoder layers (0..{layers - 1})")
    options: dict[str, Any] = {}
    if args.prefix is not None:
        options["prefix_text"] = _fix_arg(args.prefix)
    if args.ablate:
        from nmt_desktop.core.analysis.heads import ablation_mask

        try:
            options["head_mask"] = ablation_mask(translator, args.ablate)
        except ValueError as exc:
            raise UsageError(f"--ablate: {exc}") from None
    _utf8_stdout()

    if args.text:
        inputs: Iterable[str] = [_fix_arg(t) for t in args.text]
        batch_size, what = args.batch_size, "input"
        progress = _Progress(False)
    else:
        interactive = sys.stdin.isatty()
        inputs = _stdin_lines(sys.stdin.buffer)
        batch_size, what = (1 if interactive else args.batch_size), "input line"
        progress = _Progress(sys.stderr.isatty() and not interactive)

    failures = 0
    arrays: dict[str, Any] = {}
    index = 0
    try:
        for batch in _batches(inputs, batch_size):
            results = _translate_inputs(translator, batch, cfg, batch_size, **options)
            for text, (translation, error) in zip(batch, results):
                if error is not None:
                    failures += 1
                    sys.stdout.flush()
                    _print_error(f"{what} {index + 1}: {error}")
                alignment = _alignment(translator, translation, args) if args.align and translation else None
                sys.stdout.write(_output_line(text, translation, error, args, alignment) + "\n")
                if attention_out is not None:
                    arrays.update(_attention_arrays(index, translation, layers, heads))
                index += 1
            sys.stdout.flush()
            progress.update(len(batch))
    finally:
        progress.close()
    if attention_out is not None:
        _save_npz(attention_out, arrays)
    return 1 if failures else 0


# --- heads -----------------------------------------------------------------------------------------

def _add_heads(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "heads", parents=[common], help="rank cross-attention heads by importance on a probe set",
        description="For every decoder cross-attention head (0-based layer:head): the probe set's BLEU with that "
                    "head switched off (zeroed) and the drop from the intact model's BLEU (greedy decoding, "
                    "deterministic), sorted by drop, largest first; with the head's attention statistics "
                    "averaged over the probe set (entropy in nats, share on </s> and punctuation, "
                    "diagonality, monotonicity, coverage).")
    p.add_argument("-m", "--model", metavar="MODEL", help="model folder or .zip, or the name of an installed model (required)")
    p.add_argument("--probe", required=True, metavar="FILE.tsv", help="probe pairs: source<TAB>reference per line")
    p.add_argument("--max-sentences", type=_positive_int, default=None, metavar="N",
                   help="use a random subset of N probe pairs (drawn with --seed)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the probe subset (default 0)")
    p.add_argument("--batch-size", type=_positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"sentences translated together (default {DEFAULT_BATCH_SIZE})")
    p.add_argument("--threads", type=_positive_int, default=None, metavar="N", help="CPU threads for torch")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_heads)


_HEAD_COLUMNS = ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage")


def head_report(translator: Any, pairs: list[tuple[str, str]], max_sentences: int | None, seed: int,
                batch_size: int) -> dict[str, Any]:
    """What `heads` reports: one row per cross-attention head, largest BLEU drop first."""
    from nmt_desktop.core.analysis.heads import probe_head_stats, probe_subset, rank_heads

    probe = probe_subset(pairs, max_sentences, seed)
    ranking = rank_heads(translator, probe, batch_size=batch_size)
    stats = {(r.layer, r.head): r for r in probe_head_stats(translator, [s for s, _ in probe], batch_size)}
    rows = []
    for r in ranking:
        row: dict[str, Any] = {"layer": r.layer, "head": r.head, "bleu": round(r.bleu, 4),
                               "bleu_drop": round(r.bleu_drop, 4)}
        st = stats.get((r.layer, r.head))
        row.update({c: None if st is None else round(getattr(st, c), 4) for c in _HEAD_COLUMNS})
        rows.append(row)
    base = ranking[0].bleu + ranking[0].bleu_drop
    return {"sentences": len(probe), "bleu": round(base, 4), "heads": rows}


def _format_heads(report: dict[str, Any]) -> str:
    names = ("layer", "head", "bleu", "bleu_drop", *_HEAD_COLUMNS)
    lines = [f"probe: {report['sentences']} sentences, BLEU {report['bleu']:.2f} with every head on",
             "\t".join(names)]
    for row in report["heads"]:
        lines.append("\t".join(str(row[n]) if isinstance(row[n], int) or row[n] is None else f"{row[n]:.4f}"
                               for n in names))
    return "\n".join(lines)


def _cmd_heads(args: argparse.Namespace) -> int:
    model_path = resolve_model(args.model)
    set_threads(args.threads)
    from nmt_desktop.core.training.data import CorpusSpec, read_corpus
    from nmt_desktop.core.decoding.translator import Translator

    pairs = read_corpus(CorpusSpec(path=args.probe)).pairs
    with _naming_model(model_path):
        translator = Translator.load(model_path)
    report = head_report(translator, pairs, args.max_sentences, args.seed, args.batch_size)
    _utf8_stdout()
    print(json.dumps(report, ensure_ascii=False) if args.json else _format_heads(report))
    return 0


# --- info ----------------------------------------------------------------------------------------

def _add_info(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("info", parents=[common], help="describe a model",
                       description="Show a model's architecture, parameter count, vocabularies, languages, "
                                   "size on disk and model card.")
    p.add_argument("-m", "--model", metavar="MODEL", help="model folder or .zip, or the name of an installed model (required)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_info)


def model_info(path: Path) -> dict[str, Any]:
    """Everything `info` reports about the model at `path`, as JSON-ready data."""
    from nmt_desktop.core.formats.model_dir import load_model, model_size_bytes
    from nmt_desktop.core.model.transformer import count_parameters
    from nmt_desktop.core.decoding.translator import language_tokens

    with _naming_model(path):
        loaded = load_model(path)
    config = loaded.config
    pair = loaded.tokenizers
    files = [pair.FILE_JOINT] if pair.joint else [pair.FILE_SOURCE, pair.FILE_TARGET]
    return {
        "path": str(Path(loaded.path).resolve()),
        "name": loaded.name,
        "languages": {"source": config.src_lang, "target": config.tgt_lang},
        "target_languages": language_tokens(pair.source),  # >>fra<< tokens of a multilingual model
        "parameters": count_parameters(loaded.model),
        "size_bytes": model_size_bytes(path),
        "vocabulary": {"joint": pair.joint, "source_size": pair.source.vocab_size,
                       "target_size": pair.target.vocab_size, "tokenizer_files": files},
        "architecture": config.to_dict(),
        "card": loaded.card,
    }


def _target_languages_lines(tokens: list[str]) -> list[str]:
    """info's lines for a multilingual model's target languages (none for an ordinary model)."""
    import textwrap

    if not tokens:
        return []
    codes = ", ".join(token[2:-2] for token in tokens)
    return textwrap.wrap(f"targets:     {len(tokens)}, chosen with translate --target-lang: {codes}", width=100,
                         subsequent_indent=" " * 13, break_on_hyphens=False)


def _format_info(info: dict[str, Any]) -> str:
    from nmt_desktop.core.formats.model_dir import human_size

    voc, lang = info["vocabulary"], info["languages"]
    lines = [
        f"path:        {info['path']}",
        f"name:        {info['name'] or '-'}",
        f"languages:   {lang['source'] or '?'} -> {lang['target'] or '?'}"
        if lang["source"] or lang["target"] else "languages:   not set",
        *_target_languages_lines(info.get("target_languages") or []),
        f"parameters:  {info['parameters']:,}",
        f"size:        {human_size(info['size_bytes'])} ({info['size_bytes']:,} bytes)",
        f"vocabulary:  {'joint' if voc['joint'] else 'separate'}, source {voc['source_size']:,}, "
        f"target {voc['target_size']:,} ({', '.join(voc['tokenizer_files'])})",
        "architecture:",
    ]
    arch = info["architecture"]
    width = max(map(len, arch))
    lines += [f"  {k:<{width}}  {json.dumps(v)}" for k, v in arch.items()]
    card = info["card"]
    if card:
        lines.append("card:")
        for k, v in card.items():
            lines.append(f"  {k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}")
    else:
        lines.append("card:        -")
    return "\n".join(lines)


def _cmd_info(args: argparse.Namespace) -> int:
    info = model_info(resolve_model(args.model))
    _utf8_stdout()
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        print(_format_info(info))
    return 0


# --- gui ------------------------------------------------------------------------------------------

# the Analysis tab's views, in tab order (gui/screenshot.py maps each to its widget)
ANALYSIS_VIEWS = ("stats", "ablation", "alignments", "coverage", "forced", "beam-tree", "compare")


def _add_gui(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "gui", parents=[common], help="open the desktop app (the default without a subcommand)",
        description="Open the desktop app. With --screenshot it runs headless-friendly (QT_QPA_PLATFORM="
                    "offscreen works): loads the model, translates --text, waits until decoding has finished "
                    "and the attention view has painted, saves a PNG of the window and exits. With "
                    "--analysis-view it shows that view of the Analysis tab and first runs the view's job "
                    "(ablation: --ablate; forced: --force-step; beam-tree: --beam; compare: --compare) and "
                    "waits for its result.")
    p.add_argument("-m", "--model", metavar="MODEL",
                   help="model folder or .zip, or an installed model's name (default: last used or bundled en-de)")
    p.add_argument("--text", metavar="TEXT", help="text to translate on start")
    p.add_argument("--beam", type=_positive_int, default=None, metavar="N", help="beam size (1 = greedy)")
    p.add_argument("--int8", action="store_true", help="decode with int8 linear layers (the Decoding box's switch)")
    p.add_argument("--view", choices=("grid", "focus"), default=None, help="attention view: all heads or one")
    p.add_argument("--layer", type=_non_negative_int, default=None, metavar="L", help="focused decoder layer (0-based)")
    p.add_argument("--head", type=_non_negative_int, default=None, metavar="H", help="focused head (0-based)")
    p.add_argument("--tab", choices=("translate", "models", "train", "analysis"), default=None, help="tab to show")
    p.add_argument("--screenshot", metavar="FILE.png", help="save a PNG of the window and exit")
    g = p.add_argument_group("getting models (the Models tab's Get models… dialog)")
    g.add_argument("--get-models", metavar="QUERY", default=None,
                   help="open the Get models dialog and search for QUERY (e.g. 'en de'; '' lists every OPUS-MT model)")
    g.add_argument("--pull", metavar="REPO", default=None,
                   help="with --get-models: start downloading REPO in the dialog (with --screenshot, the PNG is "
                        "taken while the download is in progress)")
    a = p.add_argument_group("analysis tab (with --text)")
    a.add_argument("--analysis-view", choices=ANALYSIS_VIEWS, default=None,
                   help="show this view of the Analysis tab (implies --tab analysis)")
    a.add_argument("--ablate", type=_head_list, default=None, metavar="L:H[,L:H...]",
                   help="ablation: heads switched off (zeroed) before re-translating, 0-based layer:head "
                        "(default: every head of the last decoder layer)")
    a.add_argument("--force-step", type=_positive_int, default=None, metavar="N",
                   help="forced: re-decode with the most probable other token forced at target step N "
                        "(1-based, default 1)")
    a.add_argument("--compare", metavar="MODEL",
                   help="compare: the second model (folder, .zip or installed name), run on the same --text")
    p.set_defaults(handler=_cmd_gui)


def _cmd_gui(args: argparse.Namespace) -> int:
    if args.view == "grid" and (args.layer is not None or args.head is not None):
        raise UsageError("--layer/--head choose the focus view: drop --view grid")
    if args.pull is not None and args.get_models is None:
        raise UsageError("--pull needs --get-models QUERY (the dialog it runs in)")
    if args.screenshot is not None:
        shot = Path(args.screenshot)
        if not shot.parent.is_dir():
            raise CLIError(f"cannot write {shot}: folder {shot.parent} does not exist")
    for option in ("model", "compare"):
        if getattr(args, option) is not None:
            from nmt_desktop.core.formats.model_dir import read_config

            model_path = resolve_model(getattr(args, option))
            with _naming_model(model_path):
                read_config(model_path)  # a quick check, so a bad model is one line before any window opens
            setattr(args, option, str(model_path))
    if args.text is not None:
        args.text = _fix_arg(args.text)
    from nmt_desktop.gui.app import HeadlessError, run_gui

    try:
        return run_gui(args)
    except HeadlessError as exc:
        if exc.code == 2:
            raise UsageError(str(exc)) from None
        raise CLIError(str(exc)) from None


# --- import-marian -------------------------------------------------------------------------------

def _add_import_marian(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "import-marian", parents=[common], help="convert a Hugging Face MarianMT folder into a model folder",
        description="Convert a local Hugging Face MarianMT folder (config.json, model.safetensors or "
                    "pytorch_model.bin, source.spm, target.spm, vocab.json), e.g. an Opus-MT model, into an "
                    "nmt-desktop model folder (to download one from the Hub, use `pull`); "
                    "pytorch_model.bin is read with torch.load(weights_only=True), which refuses pickled code.")
    p.add_argument("hf_dir", metavar="HF_DIR", help="the Hugging Face MarianMT folder")
    p.add_argument("--out", required=True, metavar="MODEL_DIR", help="model folder to write (created if needed)")
    p.add_argument("--src-lang", default="", metavar="CODE", help="source language code stored in config.json")
    p.add_argument("--tgt-lang", default="", metavar="CODE", help="target language code stored in config.json")
    p.add_argument("--int8", action="store_true", help="store the weights as int8 (under half the float32 size)")
    p.set_defaults(handler=_cmd_import_marian)


def _cmd_import_marian(args: argparse.Namespace) -> int:
    from nmt_desktop.core.formats.marian import import_marian

    out = import_marian(args.hf_dir, args.out, src_lang=args.src_lang, tgt_lang=args.tgt_lang, int8=args.int8)
    print(f"imported {args.hf_dir} -> {out}")
    return 0


# --- no subcommand: the desktop app --------------------------------------------------------------

def _run_gui(parser: argparse.ArgumentParser) -> int:
    try:
        from nmt_desktop.gui.app import main as gui_main
    except ModuleNotFoundError as exc:
        if exc.name not in ("nmt_desktop.gui", "nmt_desktop.gui.app"):
            raise
        parser.print_help(sys.stderr)
        print(f"{PROG}: the desktop app is not part of this build yet; use '{PROG} translate' or "
              f"'{PROG} info'", file=sys.stderr)
        return 2
    return int(gui_main() or 0)


# --- parser and main -----------------------------------------------------------------------------

# One entry per subcommand: a function that adds its parser (with `handler` set).
_SUBCOMMANDS: list[Callable[[argparse._SubParsersAction, argparse.ArgumentParser], None]] = [
    _add_translate,
    _add_info,
    _add_heads,
    add_train,
    add_eval,
    add_export,
    _add_import_marian,
    add_models,
    add_pull,
    _add_gui,
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Encoder-decoder Transformer machine translation. "
                                            "Without a subcommand, opens the desktop app.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--self-test", action="store_true",
                        help="check this installation: load the default bundled model (or -m MODEL), translate "
                             "three sentences, render the attention grid offscreen; prints a JSON report, "
                             "exit 0 if all worked")
    parser.add_argument("-m", "--model", dest="self_test_model", metavar="MODEL", default=None,
                        help="with --self-test: the model folder or .zip to test")
    # --debug is also accepted after the subcommand; SUPPRESS keeps a subparser from resetting it
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks for errors")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for add in _SUBCOMMANDS:
        add(sub, common)
    parser.set_defaults(handler=None)
    return parser


def _debug_requested(argv: Sequence[str]) -> bool:
    args = list(argv)
    if "--" in args:
        args = args[: args.index("--")]
    return "--debug" in args


def _is_user_error(exc: BaseException) -> bool:
    if isinstance(exc, (CLIError, OSError, UnicodeError)):
        return True
    for module_name, class_name in _USER_ERRORS:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (the console script passes it to sys.exit)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(argv)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        debug = bool(args.debug)
        if args.self_test:
            if args.handler is not None:
                raise UsageError("--self-test takes no subcommand")
            from nmt_desktop.self_test import main as self_test_main

            return self_test_main(args.self_test_model)
        if args.self_test_model is not None:
            raise UsageError("-m before a subcommand applies only with --self-test")
        if args.handler is None:
            return _run_gui(parser)
        return args.handler(args)
    except UsageError as exc:
        if debug:
            traceback.print_exc()
        _print_error(str(exc))
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, and keep Python from complaining at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except Exception as exc:  # noqa: BLE001 - the one place that turns any failure into one line
        if debug:
            traceback.print_exc()
        if _is_user_error(exc):
            _print_error(str(exc))
        else:
            _print_error(f"{type(exc).__name__}: {exc} (run with --debug for details)")
        return 1
