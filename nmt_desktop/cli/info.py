"""The `info` command: a model's architecture, size, vocabularies, languages and card."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from nmt_desktop.cli.common import MODEL_HELP, naming_model, resolve_model, utf8_stdout


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser("info", parents=[common], help="describe a model",
                       description="Show a model's architecture, parameter count, vocabularies, languages, "
                                   "size on disk and model card.")
    p.add_argument("-m", "--model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def model_info(path: Path) -> dict[str, Any]:
    """Everything `info` reports about the model at `path`, as JSON-ready data."""
    from nmt_desktop.core.formats.model_folder import load_model, model_size_bytes
    from nmt_desktop.core.model.transformer import count_parameters
    from nmt_desktop.core.decoding.translator import language_tokens

    with naming_model(path):
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
    from nmt_desktop.core.formats.model_folder import human_size

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


def run(args: argparse.Namespace) -> int:
    info = model_info(resolve_model(args.model))
    utf8_stdout()
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        print(_format_info(info))
    return 0

