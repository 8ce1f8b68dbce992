"""The `import-marian` command: a local Hugging Face MarianMT folder -> an nmt-desktop model folder."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
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
    return p


def run(args: argparse.Namespace) -> int:
    from nmt_desktop.core.formats.marian import import_marian

    out = import_marian(args.hf_dir, args.out, src_lang=args.src_lang, tgt_lang=args.tgt_lang, int8=args.int8)
    print(f"imported {args.hf_dir} -> {out}")
    return 0

