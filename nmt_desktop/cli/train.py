"""The `train` command: train a model from scratch or fine-tune one.

`train` flags mirror the fields of `TrainConfig` one to one (`--warmup-steps` <-> `warmup_steps`);
a `--config FILE.toml` holds the same keys, and flags given on the command line override it. Each
flag's spelling is `train_flag` (core/training/train_flags.py), whose `train_command_line` is what the
Train tab shows as the run's command: the parser here and the GUI agree without the GUI importing the CLI.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
from typing import Any

from nmt_desktop.cli.common import UsageError
from nmt_desktop.core.config import ConfigError, TrainConfig
from nmt_desktop.core.training.train_flags import train_flag

_CHOICES = {"preset": ["tiny", "small", "base"], "schedule": ["inverse_sqrt", "constant", "cosine"],
            "freeze": ["none", "embeddings", "encoder"], "progress": ["bar", "json"],
            "activation": ["relu", "gelu", "silu"], "norm": ["post", "pre"], "precision": ["auto", "fp32", "bf16", "fp16"]}
_GROUPS = [
    ("data", ["train", "train_src", "train_tgt", "dev", "dev_src", "dev_tgt", "dev_fraction", "reverse", "src_lang",
              "tgt_lang", "max_tokens", "out"]),
    ("fine-tuning on a translation memory (with --from; the dev set is held out of the memory)",
     ["memory", "pair", "replay", "replay_ratio", "general_dev"]),
    ("model", ["from_model", "preset", "vocab_size", "joint_vocab", "d_model", "n_heads", "encoder_layers",
               "decoder_layers", "ffn_dim", "activation", "norm", "max_positions", "dropout", "attention_dropout",
               "freeze"]),
    ("optimisation", ["lr", "schedule", "warmup_steps", "min_lr", "label_smoothing", "weight_decay", "adam_beta1",
                      "adam_beta2", "adam_eps", "clip_norm", "batch_tokens", "accum_steps"]),
    ("limits (the first reached ends the run)", ["max_steps", "epochs", "max_time"]),
    ("evaluation", ["eval_every", "eval_sentences", "eval_beam", "patience", "keep_checkpoints", "samples", "probe",
                    "log_every"]),
    ("machine and output", ["device", "precision", "compile", "threads", "seed", "progress"]),
]


def _field_type(field: dataclasses.Field) -> type:
    text = str(field.type)
    for name, kind in (("bool", bool), ("int", int), ("float", float)):
        if text.startswith(name):
            return kind
    return str


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "train", parents=[common], help="train a model from scratch or fine-tune one",
        description="Train from scratch (BPE vocabulary learned from the data) or fine-tune a model folder "
                    "(--from). Writes OUT/last (resumable checkpoint), OUT/best (best dev BLEU), "
                    "OUT/train_config.toml and OUT/events.jsonl. Works under torchrun for data parallelism.")
    p.add_argument("--config", metavar="FILE.toml", help="TOML file with the same keys as these flags")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    defaults = TrainConfig()
    for title, names in _GROUPS:
        group = p.add_argument_group(title)
        for name in names:
            f = fields[name]
            kind = _field_type(f)
            default = getattr(defaults, name)
            help_text = f"(default {default})" if default not in (None, "") else None
            if kind is bool:
                group.add_argument(train_flag(name), dest=name, action=argparse.BooleanOptionalAction, default=None,
                                   help=help_text)
            else:
                group.add_argument(train_flag(name), dest=name, type=kind, default=None, choices=_CHOICES.get(name),
                                   metavar=None if name in _CHOICES else name.upper(), help=help_text)
    return p


def train_config_from_args(args: argparse.Namespace) -> TrainConfig:
    """Defaults, then the TOML file, then the flags that were given."""

    cfg = TrainConfig.from_toml(args.config) if args.config else TrainConfig()
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)
             if getattr(args, f.name, None) is not None}
    cfg = dataclasses.replace(cfg, **given)
    try:
        cfg.validate()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return cfg


class _BarReporter:
    """tqdm bar on stderr for the terminal; evaluation results as lines above it."""

    def __init__(self) -> None:
        self.bar = None

    def __call__(self, event: dict[str, Any]) -> None:
        from tqdm import tqdm

        kind = event["event"]
        if kind == "start":
            total = event.get("total_steps")
            self.bar = tqdm(total=total, initial=event["step"], unit="step", dynamic_ncols=True, file=sys.stderr)
            if event.get("precision_note"):
                tqdm.write(f"note: {event['precision_note']}", file=sys.stderr)
            tqdm.write(f"training {event['parameters']:,} parameters on {event['device']} ({event['precision']}): "
                       f"{event['train_pairs']:,} pairs, {event['dev_pairs']:,} dev pairs, "
                       f"{event['steps_per_epoch']} steps/epoch, padding {event['padding_fraction']:.1%}",
                       file=sys.stderr)
        elif kind == "step" and self.bar is not None:
            self.bar.update(event["step"] - self.bar.n)
            self.bar.set_postfix(loss=f"{event['loss']:.3f}", lr=f"{event['lr']:.2e}",
                                 tok_s=f"{event['tokens_per_s']:.0f}", epoch=event["epoch"])
        elif kind == "eval":
            from tqdm import tqdm as t

            t.write(f"step {event['step']}: dev loss {event['dev_loss']:.3f} ppl {event['dev_ppl']:.2f} "
                    f"BLEU {event['bleu']:.2f} chrF {event['chrf']:.2f}" + ("  (best)" if event["best"] else ""),
                    file=sys.stderr)
            for s in event.get("samples", []):
                t.write(f"  src: {s['source']}\n  ref: {s['reference']}\n  hyp: {s['hypothesis']}", file=sys.stderr)
        elif kind == "end":
            if self.bar is not None:
                self.bar.close()
            print(f"finished ({event['reason']}) at step {event['step']}: last checkpoint {event['last']}"
                  + (f", best model {event['best']} (BLEU {event['best_bleu']:.2f})" if event.get("best") else ""),
                  file=sys.stderr)
            for line in _memory_lines(event.get("memory")):
                print(line, file=sys.stderr)


def _memory_lines(memory: dict[str, Any] | None) -> list[str]:
    """A memory fine-tune's before/after scores (the best model's card.json "memory"), one line per domain."""
    if not memory:
        return []
    lines = []
    for domain, title in (("memory", "the memory's domain"), ("general", "general text")):
        scores = memory["scores"][domain]
        before, after = scores["before"], scores["after"]
        if before and after:
            lines.append(f"  {title} ({after['sentences']} sentences): BLEU {before['bleu']:.2f} -> {after['bleu']:.2f}"
                         f", chrF {before['chrf']:.2f} -> {after['chrf']:.2f}")
    return lines + [f"  note: {note}" for note in memory.get("notes", [])]


def _json_reporter(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    from nmt_desktop.core.training.train import Trainer

    cfg = train_config_from_args(args)
    report = _json_reporter if cfg.progress == "json" else _BarReporter()
    segments = None
    if cfg.memory:  # the training package reads a memory through this (core/memory/segments.py says why)
        from nmt_desktop.core.memory.segments import pair_segments as segments
    trainer = Trainer(cfg, report, resume=args.resume, segments=segments)

    def on_signal(signum: int, _frame: Any) -> None:
        trainer.request_stop("interrupted")
        signal.signal(signum, signal.SIG_DFL)  # a second signal ends the process at once

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        trainer.run()
    except Exception as exc:
        if cfg.progress == "json":
            _json_reporter({"event": "error", "message": " ".join(str(exc).split()), "type": type(exc).__name__})
        raise
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 0
