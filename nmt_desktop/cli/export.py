"""The `export` command: turn a training run's model into a shippable model folder.

    nmt-desktop export runs/en-de/best --out models/en-de --dtype float16 \
        --attribution "Tatoeba Project (tatoeba.org) via manythings.org/anki" --license "CC-BY 2.0 FR"

Writes the weights in half precision (sharded under --max-file-mb), the tokenizers, card.json with
the architecture, data attribution and training facts, and a README.md rendered from the card; the
model's glossary (core/formats/model_glossary.py) goes with it as glossary.tsv.
Given several models (snapshots of one run, e.g. runs/en-de/checkpoints/step-*), it exports their
average (see core/formats/averaging.py).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from nmt_desktop.cli.common import CLIError, UsageError, resolve_model

DTYPES = ("float16", "bfloat16", "float32")


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser("export", parents=[common], help="write a model folder for shipping (fp16, card, README)",
                       description="Copy a model (e.g. a training run's best checkpoint) into a new model "
                                   "folder with half-precision weights, sharded files, card.json and README.md.")
    p.add_argument("model", metavar="MODEL", nargs="+",
                   help="model folder, .zip or installed model name; several snapshots of one training run "
                        "are averaged weight by weight")
    p.add_argument("--out", required=True, metavar="DIR", help="the model folder to write (replaced if it exists)")
    p.add_argument("--dtype", default="float16", choices=DTYPES, help="stored weight type (default float16)")
    p.add_argument("--max-file-mb", type=float, default=16.0, metavar="MB",
                   help="largest weight file in MiB; bigger weights are sharded (default 16)")
    p.add_argument("--name", metavar="NAME", help="the model's name in its card (default: the folder name)")
    p.add_argument("--attribution", metavar="TEXT", help="training data attribution for the card and About box")
    p.add_argument("--license", metavar="TEXT", help="training data license for the card")
    p.add_argument("--retrain", metavar="COMMAND", help="the command that reproduces this model, for the README")
    return p


def run(args: argparse.Namespace) -> int:
    import torch

    from nmt_desktop.core.formats.averaging import AveragingError, average_models
    from nmt_desktop.core.formats.model_glossary import keep_parent_glossary
    from nmt_desktop.core.formats.model_card import export_card, write_card
    from nmt_desktop.core.formats.model_folder import human_size, load_model, model_size_bytes, save_model
    from nmt_desktop.core.model.transformer import count_parameters

    if args.max_file_mb <= 0:
        raise UsageError(f"--max-file-mb must be > 0, got {args.max_file_mb}")
    sources = [resolve_model(m) for m in args.model]
    out = Path(args.out)
    if any(out.resolve() == Path(s).resolve() for s in sources):
        raise UsageError(f"--out {out} is a model being exported; choose another folder")
    if len(sources) == 1:
        loaded = load_model(sources[0])
    else:
        try:
            loaded = average_models(sources)
        except AveragingError as exc:
            raise UsageError(str(exc)) from None
    name = args.name or out.name
    card = export_card(loaded.card, loaded.config, count_parameters(loaded.model), args.dtype, name,
                       args.attribution, args.license)
    if args.retrain:
        card["retrain"] = args.retrain
    tmp = out.with_name(out.name + ".export-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_model(tmp, loaded.model, loaded.tokenizers, card, dtype=getattr(torch, args.dtype),
               max_shard_bytes=int(args.max_file_mb * 1024 * 1024))
    try:  # the glossary the model uses (its own, or the user's saved one) goes with it
        kept = keep_parent_glossary(sources[0], tmp)
    except OSError as exc:
        raise CLIError(f"the glossary of {sources[0]} cannot be exported: {exc.strerror or exc}") from None
    if kept is not None:
        card.setdefault("glossary", kept.card_note())  # a fine-tuned model's card already names its parent
    write_card(tmp, card)
    load_model(tmp)  # refuse to replace `out` with a folder that does not load
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    largest = max(p.stat().st_size for p in out.iterdir())
    print(f"{out}: {human_size(model_size_bytes(out))} in {sum(1 for _ in out.iterdir())} files "
          f"(largest {human_size(largest)}), {card['parameters']:,} parameters as {args.dtype}"
          + (f", the average of {len(sources)} models" if len(sources) > 1 else ""))
    return 0
