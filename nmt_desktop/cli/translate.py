"""The `translate` command: text from arguments or stdin, one output line (or JSON object) per input.

Options map onto `DecodeConfig` (search), `Translator.load` (running) and the analysis helpers in
core/analysis/ (`--ablate`: ablation.py; `--align`: alignment.py, the model's default reading); one bad
input is reported on stderr and the rest go on. An input that looks like another language than the model
reads (core/decoding/source_language.py) is translated all the same, with a warning on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable

from nmt_desktop.cli.common import (BACKENDS, MODEL_HELP, PROG, CLIError, Progress, UsageError, add_running_options,
                                    add_target_lang_option, align_method, batches, checked_heads, fix_arg, head_name,
                                    head_names, load_translator, print_error, print_warning, stdin_lines, utf8_stdout)
from nmt_desktop.cli.document_options import add_document_options, document_options, glossary_summary
from nmt_desktop.core.config import ConfigError, DecodeConfig  # stdlib-only module: cheap to import

_DECODE_DEFAULTS = DecodeConfig()
LANGUAGE_WARNINGS = 5  # inputs named in a warning that they are in another language; the rest are counted
# core/analysis/alignment.READINGS, spelt out so that --help imports no numpy (tests keep them equal)
ALIGN_READINGS = ("masking", "shift", "predict")
__all__ = ["BACKENDS", "add_parser", "decode_config", "run"]  # BACKENDS: tests check it against the core's


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    d = _DECODE_DEFAULTS
    p = sub.add_parser(
        "translate", parents=[common], help="translate text given as arguments or on stdin",
        description="Translate each TEXT argument, or else each line of stdin (one output line per input "
                    "line; an empty line for an empty input). Plain output is the best translation only; "
                    "use --json for the n-best list, tokens, scores and attention.")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("text", nargs="*", metavar="TEXT", help="inputs to translate (default: read stdin)")
    add_target_lang_option(p)
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
    g.add_argument("--top-k", type=int, default=None, metavar="K",
                   help=f"sample from the K most likely tokens; 0 = all (default {d.top_k})")
    g.add_argument("--top-p", type=float, default=None, metavar="P",
                   help=f"nucleus sampling threshold in (0, 1]; 1 = off (default {d.top_p})")
    g.add_argument("--seed", type=int, default=None, metavar="S", help="random seed for reproducible sampling")
    g.add_argument("--min-len", type=int, default=d.min_length, metavar="N",
                   help="generate at least N target tokens before </s>")
    g.add_argument("--max-len-a", type=float, default=d.max_len_a, metavar="A",
                   help=f"max target tokens = A * source tokens + B (default A={d.max_len_a})")
    g.add_argument("--max-len-b", type=int, default=d.max_len_b, metavar="B", help=f"(default B={d.max_len_b})")
    add_running_options(p, "stdin lines translated")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true",
                   help="one JSON object per input (one line each), each hypothesis with its token_logprobs; its "
                        "attention is indexed from 0: [layer][head][target][source], so L3 H2 is attention[2][1]")
    o.add_argument("--no-attention", action="store_true",
                   help="do not compute attention (faster; omits 'attention' from --json)")
    o.add_argument("--attention-out", metavar="FILE.npz",
                   help="save attention_<i> (layers, heads, target, source; indexed from 0, so L3 H2 is "
                        "attention_<i>[2, 1]), source_tokens_<i>, target_tokens_<i> per input i (0-based)")
    add_document_options(p)
    m = p.add_argument_group("adaptation")
    m.add_argument("--memory", metavar="FILE",
                   help="adapt to a translation memory (nmt-desktop tm): each input's best matches in FILE are "
                        "force-decoded and their nearest decoder states mixed into every step (kNN-MT)")
    m.add_argument("--learn", action="store_true",
                   help="simulated post-editing (needs --memory): each input line is SOURCE<TAB>REFERENCE; it is "
                        "translated with the memory as it stands, printed, then the pair is confirmed into the "
                        "memory (created when missing)")
    m.add_argument("--learn-weights", action="store_true", default=None,
                   help="with --learn: the model also takes a learning step on each confirmed pair (online "
                        "learning, the default: see the adaptation guide); what it learned is kept beside FILE "
                        "per model, and later runs with --memory FILE (and the app) use it for text like the "
                        "memory's segments")
    m.add_argument("--no-learn-weights", action="store_false", dest="learn_weights",
                   help="with --learn: confirm the pairs into the memory only, the weights stay as they are")
    a = p.add_argument_group("analysis")
    a.add_argument("--prefix", metavar="TEXT",
                   help="force every translation to start with this target-side text, then decode freely")
    a.add_argument("--ablate", type=head_names("--ablate"), default=None, metavar="L3H2[,...]",
                   help="switch off (zero) these decoder cross-attention heads, counted from 1: L3H2 is decoder "
                        "layer 3, head 2; L3 alone is every head of layer 3; e.g. L1H2,L2H4")
    a.add_argument("--align", action="store_true",
                   help="word alignment from cross-attention in Pharaoh format ('i-j': source word i, target word "
                        "j, 0-based): an 'alignment' field with --json, else TRANSLATION<TAB>ALIGNMENT")
    a.add_argument("--align-layer", type=head_name("--align-layer", "layer"), default=None, metavar="L3",
                   help="decoder layer whose heads are averaged for the attention --align reads (or mixes in), "
                        "counted from 1 like L3 (default: the model's alignment reading, which 'align --help' "
                        "states)")
    a.add_argument("--align-reading", choices=ALIGN_READINGS, default=None,
                   help="masking: how much a target word's probability drops when a source word is hidden; shift: "
                        "its attention where its token is consumed as decoder input; predict: where it is "
                        "predicted (default: the model's)")
    a.add_argument("--align-method", choices=("argmax", "mutual", "threshold"), default=None,
                   help="link each target word to its best source word (argmax), only words that are each "
                        "other's best (mutual), or every pair whose evidence >= --align-threshold (default: the "
                        "model's)")
    a.add_argument("--align-threshold", type=float, default=None, metavar="X",
                   help="word attention needed for a link with --align-method threshold (default 0.3)")
    return p


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
    for flag, value in (("--align-layer", args.align_layer), ("--align-reading", args.align_reading),
                        ("--align-method", args.align_method), ("--align-threshold", args.align_threshold)):
        if value is not None and not args.align:
            raise UsageError(f"{flag} applies only with --align")
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


def _translate_inputs(translator: Any, texts: list[str], cfg: DecodeConfig, batch_size: int,
                      **options: Any) -> list[tuple[Any | None, str | None]]:
    """(Translation, None) or (None, error message) per input; one bad input does not stop the rest.

    options: passed on to translate_batch / translate (head_mask, prefix_text), or `document`: the
    glossary and do-not-translate options (core/documents/), which translate each input as a document line.
    """
    from nmt_desktop.core.decoding.document import InputTooLongError

    try:
        if "document" in options:
            return [(t, None) for t in _with_glossary(translator, texts, cfg, options["document"], options["report"])]
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


def _gated(translator: Any, parent: Any, learner: Any, texts: list[str], cfg: DecodeConfig, batch_size: int,
           **options: Any) -> list[tuple[Any | None, str | None]]:
    """`_translate_inputs` with what online learning kept: the inputs the gate gives the learned weights
    (`OnlineLearner.wants_learned`) by `translator`, the others by `parent`, a second copy of the model that keeps
    the parent's weights (so no batch swaps weights, which made the backend prepare them anew twice per batch);
    in input order."""
    if learner is None:
        return _translate_inputs(translator, texts, cfg, batch_size, **options)
    results: list[Any] = [None] * len(texts)
    with translator.adaptation.held_lookups():  # the gate's lookups serve the decoding too
        found = [translator.adaptation.lookup(t) for t in texts]
        learned = [learner.wants_learned(t, bool(m), any(match.exact for match in m)) for t, m in zip(texts, found)]
        for which, by in ((True, translator), (False, parent)):
            rows = [i for i, m in enumerate(learned) if m == which]
            for i, result in zip(rows, _translate_inputs(by, [texts[i] for i in rows], cfg, batch_size, **options)
                                 if rows else []):
                results[i] = result
    return results


def _parent_copy(translator: Any, args: argparse.Namespace) -> Any:
    """A second copy of the model, with the parent's weights and the same memory, for the inputs the online
    learning gate gives the parent (`_gated`)."""
    parent = load_translator(args.model, args, args.target_lang)
    parent.adaptation = translator.adaptation
    return parent


def _with_glossary(translator: Any, texts: list[str], cfg: DecodeConfig, options: Any, total: Any) -> list[Any]:
    """Each input's Translation with the glossary's terms forced in and do-not-translate spans kept (its
    text is the one the placeholders were put back into); `total` (a ConstraintReport) adds up what forcing did."""
    from dataclasses import replace

    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.documents.translate_document import translate_lines

    result = translate_lines(translator, texts, cfg, options)
    total.extend(result.report)
    out = []
    for text, block in zip(texts, result.blocks):
        translation = Translation.joined(text, block.sentences)
        best = replace(translation.best, text=block.target)
        out.append(replace(translation, nbest=[best, *translation.nbest[1:]]))
    return out


def _alignment(translator: Any, translation: Any, method: Any) -> str | None:
    """The --align Pharaoh string of a translation ("" for an empty one): a line translated sentence by
    sentence is aligned sentence by sentence, each sentence's word indices following the ones before."""
    from nmt_desktop.core.analysis.alignment import align
    from nmt_desktop.core.analysis.pharaoh import to_pharaoh
    from nmt_desktop.core.analysis.words import real_words

    prefix = translator.tokenizers.source.continuing_prefix
    links, source_words, target_words = [], 0, 0
    for part in translation.segments or [translation]:
        if part.attention is None:
            if part.target_ids:
                return None
            continue
        links += [(i + source_words, j + target_words)
                  for i, j in align(part, method, continuing_prefix=prefix, translator=translator)]
        source_words += len(real_words(part.source_tokens, prefix))
        target_words += len(real_words(part.target_tokens, prefix))
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


def _open_memory(args: argparse.Namespace) -> Any:
    """--memory's file (created by --learn when missing), opened before the model loads; CLIError in one sentence."""
    if not args.memory:
        return None
    from nmt_desktop.core.memory import TranslationMemory, TranslationMemoryError

    try:
        return TranslationMemory(Path(fix_arg(args.memory)), create=args.learn)
    except TranslationMemoryError as exc:
        raise CLIError(str(exc)) from None


def _adapt(translator: Any, memory: Any, learn: bool, learn_weights: bool | None) -> tuple[Any, Any]:
    """Switch the translator's adaptation to `memory` for the model's language pair, with what online learning
    kept beside the memory for this model loaded (learn: --learn, whose confirmed pairs the model learns from
    unless learn_weights is False, or when it is None and `OnlineLearning.enabled` says so); (the pair, the
    learner or None)."""
    from nmt_desktop.core.adaptation.settings import Adaptation
    from nmt_desktop.core.memory import Pair

    source = (translator.config.src_lang or "").strip("<>")
    target = (translator.target_language or translator.config.tgt_lang or "").strip("<>")
    if not source or not target:
        memory.close()
        raise CLIError("--memory needs the model's languages to find its memory entries, and the model names none")
    pair = Pair.of(source, target)
    adaptation = translator.adaptation = Adaptation(memory, pair)
    from nmt_desktop.core.adaptation.learned_weights import LearnedWeightsError, learned_beside
    from nmt_desktop.core.adaptation.online_learning import OnlineLearner

    learn = learn and (adaptation.learning.enabled if learn_weights is None else learn_weights)
    # the memory's pairs: what learning replays, and what the gate measures a text's length against
    earlier = [(e.source, e.target) for e in memory.entries(pair) if e.changed >= adaptation.since] \
        if learn or learned_beside(memory.path) else []
    learning = dataclasses.replace(adaptation.learning, enabled=learn)
    try:
        return pair, OnlineLearner.attach(translator, memory.path, earlier, learning)
    except LearnedWeightsError as exc:
        memory.close()
        raise CLIError(str(exc)) from None


def _keep_learned_states(translator: Any) -> None:
    """After a run that learned: the memory segments this run used (matched or confirmed) decoded once under the
    weights it ends with and kept beside the memory under their fingerprint (kept_states.py), so that the next
    `translate --memory` reads them instead of decoding again every segment its lines match (most of the 1.6x its
    decoding took, RESULTS round 9). Not the whole memory: one imported from a large TMX would take minutes and
    33 KB per segment on disk (the bundled model); the others are decoded, and kept, when a later run matches them."""
    used = translator.used_segments()
    translator.weights_replaced()
    translator.remember(used)


def _learn_pairs(lines: Iterable[str], what: str) -> Iterable[tuple[str, str | None]]:
    """--learn's input lines as (source, reference); a line without a tab as (line, None), reported where read."""
    for line in lines:
        source, tab, reference = line.partition("\t")
        yield (source, reference) if tab else (line, None)


def _confirm(translator: Any, memory: Any, pair: Any, learner: Any, source: str, reference: str) -> None:
    """The reference stands in for the post-edit: confirmed into the memory, so the next line adapts to it; the
    model learns from it (online_learning.py); its states are decoded now (`Translator.remember`), not when the
    next line matches it."""
    from nmt_desktop.core.adaptation.memory_use import MemorySource
    from nmt_desktop.core.memory import Entry

    source, reference = source.strip(), reference.strip()
    memory.add([Entry(source, reference, pair, origin="confirmed")])
    if learner is not None and learner.learn([(source, reference)]):
        translator.weights_changed()
    translator.remember([MemorySource(int(m.entry.id), m.entry.source, m.entry.target, 1.0)
                         for m in memory.exact(source, pair) if m.entry.target == reference])


def run(args: argparse.Namespace) -> int:
    cfg = decode_config(args)
    attention_out = None if args.attention_out is None else Path(args.attention_out)
    if attention_out is not None and not attention_out.parent.is_dir():
        raise CLIError(f"cannot write {attention_out}: folder {attention_out.parent} does not exist")
    if args.learn and not args.memory:
        raise UsageError("--learn needs --memory FILE (the memory the confirmed pairs go into)")
    if args.learn_weights and not args.learn:
        raise UsageError("--learn-weights needs --learn (the confirmed pairs it learns from)")
    memory = _open_memory(args)
    translator = load_translator(args.model, args, args.target_lang)
    pair, learner = (None, None) if memory is None else _adapt(translator, memory, args.learn, args.learn_weights)
    parent = None if learner is None or not learner.settings.gate else _parent_copy(translator, args)
    learned_before = 0 if learner is None else learner.learned
    layers, heads = translator.config.decoder_layers, translator.config.n_heads
    method = None
    if args.align:
        method = align_method(translator, args.align_reading, args.align_layer and ("--align-layer", args.align_layer),
                              decision=args.align_method, threshold=args.align_threshold)
    options: dict[str, Any] = {}
    if args.glossary or args.dnt:
        for flag, value in (("--prefix", args.prefix), ("--ablate", args.ablate), ("--align", args.align),
                            ("--attention-out", args.attention_out)):
            if value:
                raise UsageError(f"{flag} cannot be combined with --glossary or --dnt")
        from nmt_desktop.core.documents.constraints import ConstraintReport

        options["document"], options["report"] = document_options(args), ConstraintReport()
    if args.prefix is not None:
        options["prefix_text"] = fix_arg(args.prefix)
    if args.ablate:
        from nmt_desktop.core.analysis.head_names import expand_heads
        from nmt_desktop.core.analysis.ablation import ablation_mask

        checked_heads(args.ablate, "--ablate", layers, heads)
        options["head_mask"] = ablation_mask(translator, expand_heads(args.ablate, heads))
    utf8_stdout()

    if args.text:
        inputs: Iterable[str] = [fix_arg(t) for t in args.text]
        batch_size, what = args.batch_size, "input"
        progress = Progress(False)
    else:
        interactive = sys.stdin.isatty()
        inputs = stdin_lines(sys.stdin.buffer)
        batch_size, what = (1 if interactive else args.batch_size), "input line"
        progress = Progress(sys.stderr.isatty() and not interactive)

    from nmt_desktop.core.decoding.source_language import language_warning

    failures = other_language = 0
    arrays: dict[str, Any] = {}
    index = 0
    if args.learn:  # each line translated with the memory as it stands, then confirmed into it
        inputs, batch_size = _learn_pairs(inputs, what), 1
    try:
        for batch in batches(inputs, batch_size):
            references = [None] * len(batch)
            if args.learn:
                batch, references = [p[0] for p in batch], [p[1] for p in batch]
            results = _gated(translator, parent, learner, batch, cfg, batch_size, **options)
            for text, reference, (translation, error) in zip(batch, references, results):
                if reference is None and args.learn:
                    translation, error = None, "--learn needs SOURCE<TAB>REFERENCE, and this line has no tab"

                if error is not None:
                    failures += 1
                    sys.stdout.flush()
                    print_error(f"{what} {index + 1}: {error}")
                warning = language_warning(text, translator.config.src_lang)
                other_language += warning is not None
                if warning is not None and other_language <= LANGUAGE_WARNINGS:
                    sys.stdout.flush()
                    print_warning(f"{what} {index + 1}: {warning}")
                alignment = _alignment(translator, translation, method) if args.align and translation else None
                sys.stdout.write(_output_line(text, translation, error, args, alignment) + "\n")
                if args.learn and reference is not None and text.strip() and reference.strip():
                    sys.stdout.flush()
                    _confirm(translator, memory, pair, learner, text, reference)
                if attention_out is not None:
                    arrays.update(_attention_arrays(index, translation, layers, heads))
                index += 1
            sys.stdout.flush()
            progress.update(len(batch))
        if learner is not None and learner.learned > learned_before:
            _keep_learned_states(translator)
            learner.drop_loaded_states()  # the states of the learned weights this run started from
    finally:
        progress.close()
        if learner is not None:
            learner.save()
        if memory is not None:
            memory.close()
    if other_language > LANGUAGE_WARNINGS:
        print_warning(f"{other_language - LANGUAGE_WARNINGS} more {what}s look like another language than the model's")
    if attention_out is not None:
        _save_npz(attention_out, arrays)
    if "document" in options:
        print(f"{PROG}: {glossary_summary(options['report'])}", file=sys.stderr)
    return 1 if failures else 0

