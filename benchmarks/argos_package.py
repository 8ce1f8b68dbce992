"""Build an Argos Translate package (.argosmodel) from an nmt-desktop model folder, so LibreTranslate's own
server can run our weights (issue 43's peer in benchmarks/serve_load.py).

Run with the Python of a separate venv that has LibreTranslate (never the project's .venv):

    python3 -m venv /tmp/lt-venv && /tmp/lt-venv/bin/pip install libretranslate safetensors tokenizers
    /tmp/lt-venv/bin/python benchmarks/argos_package.py models/en-de --out /tmp/en_de.argosmodel

An .argosmodel is a zip of one folder: `model/` (a CTranslate2 model), a tokenizer and `metadata.json`.

* The model: written here from model.safetensors through CTranslate2's own `TransformerSpec` (post-norm,
  ReLU, sqrt(d) embedding scale, our sinusoidal table given as the position encodings, one shared vocabulary,
  output tied to the embedding, `</s>` added to every source as our tokenizer does, layer-norm eps from config).
* The tokenizer: argos-translate-lt reads only `sentencepiece.model` (SentencePiece) or `bpe.model`
  (subword-nmt codes after Moses tokenization, `@@` joints) (argostranslate/package.py, Package.__init__).
  Ours is a Hugging Face byte-level BPE (GPT-2's byte alphabet, `Ġ` for a space, a regex pre-split), which is
  neither. The nearest SentencePiece model is written by hand: each piece's bytes decoded as UTF-8 with
  the space as `▁` (a piece that is not whole UTF-8 is kept under a `<0x..>` name no text produces), scored
  by the rank of the merge that made it (SentencePiece's BPE merges the highest score first), no dummy
  prefix (ours adds no space before the first word), identity normalisation. It is an approximation:
  `--check FILE` counts the sentences it splits exactly as our tokenizer does.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

SPECIALS = {"<pad>": 3, "<s>": 3, "</s>": 3, "<unk>": 2}  # SentencePiece piece types: 2 UNKNOWN, 3 CONTROL


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet read back: character -> byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, n = printable[:], 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def pieces_and_scores(tokenizer_json: dict) -> tuple[list[str], list[float], list[int]]:
    """Our vocabulary as SentencePiece pieces (id order), their scores, and their SentencePiece types."""
    model = tokenizer_json["model"]
    vocab: dict[str, int] = model["vocab"]
    rank: dict[str, int] = {}
    for n, merge in enumerate(model["merges"]):
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        rank.setdefault(left + right, n)
    to_byte = byte_decoder()
    pieces: list[str] = [""] * len(vocab)
    scores: list[float] = [0.0] * len(vocab)
    types: list[int] = [1] * len(vocab)  # 1 NORMAL
    used: set[str] = set()
    for token, index in sorted(vocab.items(), key=lambda kv: kv[1]):
        if token in SPECIALS:
            piece = token
            types[index] = SPECIALS[token]
        else:
            raw = bytes(to_byte[c] for c in token)
            try:
                piece = raw.decode("utf-8").replace(" ", "▁")
            except UnicodeDecodeError:
                piece = "<0x" + raw.hex().upper() + ">"
            if piece in used or not piece or any(not c.isprintable() for c in piece):  # NUL, tab: not pieces
                piece = "<0x" + raw.hex().upper() + ">"
        used.add(piece)
        pieces[index] = piece
        scores[index] = -float(rank.get(token, 0))
    return pieces, scores, types


def write_sentencepiece(path: Path, pieces: list[str], scores: list[float], types: list[int]) -> None:
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    for piece, score, kind in zip(pieces, scores, types):
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece, score, kind
    spec = proto.trainer_spec
    spec.model_type = pb.TrainerSpec.BPE
    spec.vocab_size = len(pieces)
    spec.pad_id, spec.bos_id, spec.eos_id, spec.unk_id = pieces.index("<pad>"), pieces.index("<s>"), \
        pieces.index("</s>"), pieces.index("<unk>")
    spec.byte_fallback = False
    norm = proto.normalizer_spec
    norm.name = "identity"
    norm.add_dummy_prefix = False
    norm.remove_extra_whitespaces = False
    norm.escape_whitespaces = True
    path.write_bytes(proto.SerializeToString())


def sinusoidal(n: int, dim: int, layout: str) -> np.ndarray:
    """The model's position table (core/model/layers.py sinusoidal_positions), (n, dim) float32."""
    angles = np.arange(n, dtype=np.float64)[:, None] * np.exp(np.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    table = np.zeros((n, dim))
    if layout == "interleaved":
        table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    else:
        table[:, : dim // 2], table[:, dim // 2:] = np.sin(angles), np.cos(angles)
    return table.astype(np.float32)


def ct2_spec(folder: Path, pieces: list[str]):
    """CTranslate2's TransformerSpec holding the folder's weights."""
    from ctranslate2.specs import common_spec, transformer_spec
    from safetensors.numpy import load_file

    cfg = json.loads((folder / "config.json").read_text())
    if not cfg.get("shared_vocab") or cfg.get("norm") != "post" or cfg.get("activation") != "relu":
        raise SystemExit("only shared-vocabulary post-norm ReLU models are written (as the bundled ones are)")
    w = {k: v.astype(np.float32) for k, v in load_file(str(folder / "model.safetensors")).items()}
    spec = transformer_spec.TransformerSpec.from_config(
        (cfg["encoder_layers"], cfg["decoder_layers"]), cfg["n_heads"], pre_norm=False,
        activation=common_spec.Activation.RELU)
    scale = math.sqrt(cfg["d_model"]) if cfg["scale_embedding"] else 1.0
    table = sinusoidal(cfg["max_positions"], cfg["d_model"], cfg["pos_layout"])
    embed = w["tgt_embed.weight"]  # (V, D), shared by source, target and output

    def linear(target, name: str) -> None:
        target.weight = w[f"{name}.weight"]
        target.bias = w[f"{name}.bias"]

    def norm(target, name: str) -> None:
        target.gamma, target.beta = w[f"{name}.weight"], w[f"{name}.bias"]

    for side, part in (("encoder", spec.encoder), ("decoder", spec.decoder)):
        part.scale_embeddings = scale
        part.position_encodings.encodings = table
        (part.embeddings[0] if isinstance(part.embeddings, list) else part.embeddings).weight = embed
    def self_attention_and_ffn(layer, p: str, attn_norm: str) -> None:
        linear(layer.self_attention.linear[0], f"{p}.self_attn.qkv_proj")  # fused (3D, D): q, k, v
        linear(layer.self_attention.linear[1], f"{p}.self_attn.out_proj")
        norm(layer.self_attention.layer_norm, f"{p}.{attn_norm}.norm")
        linear(layer.ffn.linear_0, f"{p}.ffn.fc1")
        linear(layer.ffn.linear_1, f"{p}.ffn.fc2")
        norm(layer.ffn.layer_norm, f"{p}.ffn_res.norm")

    for i, layer in enumerate(spec.encoder.layer):
        self_attention_and_ffn(layer, f"encoder_layers.{i}", "attn_res")
    for i, layer in enumerate(spec.decoder.layer):
        p = f"decoder_layers.{i}"
        self_attention_and_ffn(layer, p, "self_res")
        linear(layer.attention.linear[0], f"{p}.cross_attn.q_proj")
        linear(layer.attention.linear[1], f"{p}.cross_attn.kv_proj")  # fused (2D, D): k, v
        linear(layer.attention.linear[2], f"{p}.cross_attn.out_proj")
        norm(layer.attention.layer_norm, f"{p}.cross_res.norm")
    spec.decoder.projection.weight = embed
    spec.register_source_vocabulary(pieces)
    spec.register_target_vocabulary(pieces)
    spec.config.bos_token, spec.config.eos_token, spec.config.unk_token = "<s>", "</s>", "<unk>"
    spec.config.decoder_start_token = pieces[cfg["decoder_start_id"]]
    spec.config.add_source_eos = bool(cfg.get("src_add_eos", True))
    spec.config.layer_norm_epsilon = cfg.get("layer_norm_eps", 1e-5)
    return spec, cfg


def build(folder: Path, out: Path, names: tuple[str, str]) -> Path:
    import ctranslate2

    tokenizer_json = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    pieces, scores, types = pieces_and_scores(tokenizer_json)
    spec, cfg = ct2_spec(folder, pieces)

    class Loaded(ctranslate2.converters.Converter):
        def _load(self):
            return spec

    src, tgt = cfg["src_lang"], cfg["tgt_lang"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / f"translate-{src}_{tgt}-nmt-desktop"
        root.mkdir()
        Loaded().convert(str(root / "model"), force=True)
        write_sentencepiece(root / "sentencepiece.model", pieces, scores, types)
        (root / "metadata.json").write_text(json.dumps({
            "package_version": "1.0", "argos_version": "1.9.0", "from_code": src, "from_name": names[0],
            "to_code": tgt, "to_name": names[1], "type": "translate",
            "note": f"nmt-desktop {folder.name} written by benchmarks/argos_package.py"}, indent=2))
        (root / "README.md").write_text(f"nmt-desktop's {folder.name} model as an Argos package (benchmarks only).\n")
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(root.rglob("*")):
                z.write(path, path.relative_to(Path(tmp)))
    return out


def check(folder: Path, package: Path, sentences: list[str]) -> dict:
    """How many sentences the SentencePiece stand-in splits into exactly our tokenizer's pieces."""
    import sentencepiece as spm
    from tokenizers import Tokenizer

    ours = Tokenizer.from_file(str(folder / "tokenizer.json"))
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(package) as z:
        z.extractall(tmp)
        model = next(Path(tmp).rglob("sentencepiece.model"))
        sp = spm.SentencePieceProcessor(model_file=str(model))
        same, first = 0, None
        for s in sentences:
            a = ours.encode(s, add_special_tokens=False).ids
            b = sp.encode(s)
            same += a == b
            if a != b and first is None:
                first = {"sentence": s, "ours": ours.encode(s, add_special_tokens=False).tokens,
                         "sentencepiece": sp.encode(s, out_type=str)}
    return {"sentences": len(sentences), "same_pieces": same, "first_difference": first}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="an nmt-desktop model folder (models/en-de)")
    parser.add_argument("--out", type=Path, required=True, help="the .argosmodel to write")
    parser.add_argument("--names", default="English,German", help="source and target language names")
    parser.add_argument("--check", type=Path, metavar="TSV", help="count exact tokenizations on its first column")
    parser.add_argument("--check-lines", type=int, default=300)
    args = parser.parse_args(argv)
    out = build(args.model, args.out, tuple(args.names.split(",", 1)))  # type: ignore[arg-type]
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
    if args.check:
        lines = [line.split("\t", 1)[0] for line in args.check.read_text(encoding="utf-8").splitlines()]
        unique = list(dict.fromkeys(s for s in lines if s.strip()))[: args.check_lines]
        print(json.dumps(check(args.model, out, unique), ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
