"""Import a Hugging Face MarianMT folder (Opus-MT and friends) as an nmt-desktop model folder.

The HF folder holds config.json, model.safetensors (or pytorch_model.bin, read only with
`torch.load(weights_only=True)`, which refuses pickled code), source.spm / target.spm and
vocab.json (plus target_vocab.json when the two sides have separate vocabularies).

Marian maps to `ModelConfig` exactly: post-norm layers, sin-half/cos-half sinusoidal positions
from 0 (`pos_layout="concat"`), no embedding layer norm, `scale_embedding` as configured, a final
logits bias, `<pad>` as the decoder start token and no `<s>`. Anything else is refused with a
`MarianImportError` of one sentence.

Tokenisation: MarianTokenizer segments text with a SentencePiece model and maps each piece to an
id through vocab.json (pieces it lacks become `<unk>`), appending `</s>` to the source. Each .spm
is converted here into a `tokenizers` Unigram model over the whole vocab.json id space: pieces keep
their SentencePiece scores and the normaliser is the .spm's own precompiled character map
(nmt_nfkc) with SentencePiece's whitespace handling. A run of characters the .spm lacks is one
unknown piece that MarianTokenizer looks up by its surface: the normaliser marks such runs, and
vocab.json entries made only of such characters match a whole marked run; other entries the .spm
lacks (the other side's pieces of a shared vocabulary) are never produced from text. The written
model folder needs nothing beyond `tokenizers`; `sentencepiece` (a dependency of nmt-desktop) is
read only here.

Multilingual models (e.g. opus-mt-en-ROMANCE) choose the target language by a token such as
`>>fra<<` at the start of the source. MarianTokenizer takes a leading `>>...<<` off the text as one
token and segments the rest; its supported codes are the vocab.json entries of that form. Those
entries become special tokens here (matched before normalisation), so `>>fra<< text` gets
MarianTokenizer's ids; `Translator.target_language` prepends the chosen one.

Generation: Hugging Face generation configs of Marian models ban `<pad>` (`bad_words_ids`);
nmt-desktop's search never generates `<pad>` either (core/decoding/search.py), so outputs agree.

Known limits: pieces of a .spm that vocab.json lacks are left out of the segmentation lattice
(MarianTokenizer would still segment with them and map them to `<unk>`; real Opus-MT vocab.json
files hold every piece of both .spm files). A language code anywhere but at the start of the text
is still one token here, where MarianTokenizer segments its characters. The optional Moses
punctuation normaliser that MarianTokenizer applies when `sacremoses` is installed is not
reproduced.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from nmt_desktop.core.config import ConfigError, ModelConfig
from nmt_desktop.core.model.layers import sinusoidal_positions
from nmt_desktop.core.tokenizer import RUN_MARK, UNREACHABLE, Tokenizer, TokenizerPair
from nmt_desktop.core.model.transformer import Transformer

__all__ = ["MarianImportError", "convert_spm", "import_marian", "is_language_token", "marian_config",
           "split_language_code"]

WORD_START = "▁"
_LOW_SCORE = -1e6  # score of special tokens in the segmentation lattice: never chosen there
_ACTIVATIONS = {"swish": "silu", "silu": "silu", "gelu": "gelu", "relu": "relu"}


class MarianImportError(ValueError):
    """A Hugging Face Marian folder is missing a file or uses something nmt-desktop cannot express."""

    def __init__(self, message: str):
        super().__init__(" ".join(message.split()).rstrip(".") + ".")


# -- target-language codes of multilingual models -----------------------------------------------


def is_language_token(piece: str) -> bool:
    """True for a `>>fra<<`-style target-language token (MarianTokenizer's supported_language_codes test)."""
    return len(piece) > 4 and piece.startswith(">>") and piece.endswith("<<")


def split_language_code(text: str) -> tuple[str | None, str]:
    """(leading `>>...<<` code, rest of the text), or (None, text): how MarianTokenizer reads a source."""
    if text.startswith(">>"):
        end = text.find("<<")
        if end != -1:
            return text[:end + 2], text[end + 2:]
    return None, text


# -- config ---------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MarianImportError(f"{path}: file not found; a Marian folder needs config.json, model.safetensors "
                                "or pytorch_model.bin, source.spm, target.spm and vocab.json") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MarianImportError(f"{path}: not readable JSON ({exc})") from None


def marian_config(hf: dict[str, Any], src_vocab_size: int, tgt_vocab_size: int, unk_id: int) -> ModelConfig:
    """The ModelConfig of a Hugging Face MarianConfig dict; refuses what it cannot express."""
    def get(key: str, default: Any) -> Any:
        return hf.get(key, default)

    if get("model_type", "marian") != "marian":
        raise MarianImportError(f"config.json: model_type is {hf.get('model_type')!r}, but only 'marian' can be imported")
    # flags of old (BART-style) Marian configs that change the architecture
    for key, supported in (("normalize_before", False), ("add_final_layer_norm", False),
                           ("normalize_embedding", False), ("static_position_embeddings", True),
                           ("add_bias_logits", False), ("is_encoder_decoder", True)):
        if key in hf and bool(hf[key]) != supported:
            raise MarianImportError(f"config.json: {key}={json.dumps(hf[key])} is not supported (Marian models "
                                    f"have {json.dumps(supported)})")
    for a, b, default in (("encoder_attention_heads", "decoder_attention_heads", 8),
                          ("encoder_ffn_dim", "decoder_ffn_dim", 2048)):
        if get(a, default) != get(b, default):
            raise MarianImportError(f"config.json: {a} ({hf.get(a)}) differs from {b} ({hf.get(b)}), which "
                                    "nmt-desktop does not support")
    act = get("activation_function", "swish")
    if act not in _ACTIVATIONS:
        raise MarianImportError(f"config.json: activation_function {act!r} is not supported "
                                f"(supported: {', '.join(_ACTIVATIONS)})")
    shared = bool(get("share_encoder_decoder_embeddings", True))
    pad = get("pad_token_id", src_vocab_size - 1)
    try:
        return ModelConfig(
            src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size,
            d_model=get("d_model", 512), n_heads=get("encoder_attention_heads", 8),
            encoder_layers=get("encoder_layers", 6), decoder_layers=get("decoder_layers", 6),
            ffn_dim=get("encoder_ffn_dim", 2048),
            dropout=float(get("dropout", 0.1)), attention_dropout=float(get("attention_dropout", 0.0)),
            activation_dropout=float(get("activation_dropout", 0.0)),
            activation=_ACTIVATIONS[act], norm="post", layer_norm_eps=1e-5, bias=True,
            max_positions=get("max_position_embeddings", 512), pos_layout="concat",
            scale_embedding=bool(get("scale_embedding", False)),
            shared_vocab=shared, tie_output=bool(get("tie_word_embeddings", True)),
            final_logits_bias=True,
            pad_id=pad, bos_id=get("decoder_start_token_id", pad), eos_id=get("eos_token_id", 0), unk_id=unk_id,
            decoder_start_id=get("decoder_start_token_id", pad), src_add_eos=True,
        )
    except (ConfigError, TypeError, ValueError) as exc:  # e.g. a list or a string where a number belongs
        raise MarianImportError(f"config.json: {exc}") from None


# -- weights --------------------------------------------------------------------------------------


def load_hf_weights(folder: Path) -> dict[str, torch.Tensor]:
    """The state dict of model.safetensors, or of pytorch_model.bin read with weights_only=True."""
    st, pt = folder / "model.safetensors", folder / "pytorch_model.bin"
    if st.is_file():
        from safetensors.torch import load_file

        try:
            return load_file(str(st), device="cpu")
        except Exception as exc:  # SafetensorError and friends
            raise MarianImportError(f"{st}: not a valid safetensors file ({exc})") from None
    if pt.is_file():
        try:
            state = torch.load(pt, weights_only=True, map_location="cpu")
        except Exception as exc:  # pickle.UnpicklingError for anything but plain tensors
            first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
            raise MarianImportError(f"{pt}: refused, it is not a plain PyTorch weights file ({first})") from None
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise MarianImportError(f"{pt}: does not hold a dictionary of tensors")
        return state
    raise MarianImportError(f"{folder}: no model.safetensors or pytorch_model.bin found")


def convert_weights(hf: dict[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    """Hugging Face Marian parameter names and layouts -> ours (q, k, v fused)."""
    sd = {k.removeprefix("model."): v.float() for k, v in hf.items()}
    used: set[str] = set()

    def take(*names: str) -> torch.Tensor:
        for n in names:
            if n in sd:
                used.add(n)
                return sd[n]
        raise MarianImportError(f"weights: tensor {names[0]!r} is missing")

    out: dict[str, torch.Tensor] = {}
    if config.shared_vocab:
        out["tgt_embed.weight"] = take("shared.weight", "decoder.embed_tokens.weight", "encoder.embed_tokens.weight",
                                       "lm_head.weight")
    else:
        out["src_embed.weight"] = take("encoder.embed_tokens.weight", "shared.weight")
        out["tgt_embed.weight"] = take("decoder.embed_tokens.weight")
    if not config.tie_output:
        out["out_proj.weight"] = take("lm_head.weight")
    out["logits_bias"] = take("final_logits_bias").reshape(-1)

    def lin(ours: str, theirs: list[str]) -> None:
        out[f"{ours}.weight"] = torch.cat([take(f"{t}.weight") for t in theirs], 0)
        out[f"{ours}.bias"] = torch.cat([take(f"{t}.bias") for t in theirs], 0)

    def norm(ours: str, theirs: str) -> None:
        out[f"{ours}.weight"], out[f"{ours}.bias"] = take(f"{theirs}.weight"), take(f"{theirs}.bias")

    def self_attention(p: str, q: str, residual: str) -> None:  # ours p.<...>, theirs q.<...>
        lin(f"{p}.self_attn.qkv_proj", [f"{q}.self_attn.{x}_proj" for x in "qkv"])
        lin(f"{p}.self_attn.out_proj", [f"{q}.self_attn.out_proj"])
        norm(f"{p}.{residual}.norm", f"{q}.self_attn_layer_norm")

    def feed_forward(p: str, q: str) -> None:
        lin(f"{p}.ffn.fc1", [f"{q}.fc1"])
        lin(f"{p}.ffn.fc2", [f"{q}.fc2"])
        norm(f"{p}.ffn_res.norm", f"{q}.final_layer_norm")

    for i in range(config.encoder_layers):
        p, q = f"encoder_layers.{i}", f"encoder.layers.{i}"
        self_attention(p, q, "attn_res")
        feed_forward(p, q)
    for i in range(config.decoder_layers):
        p, q = f"decoder_layers.{i}", f"decoder.layers.{i}"
        self_attention(p, q, "self_res")
        lin(f"{p}.cross_attn.q_proj", [f"{q}.encoder_attn.q_proj"])
        lin(f"{p}.cross_attn.kv_proj", [f"{q}.encoder_attn.k_proj", f"{q}.encoder_attn.v_proj"])
        lin(f"{p}.cross_attn.out_proj", [f"{q}.encoder_attn.out_proj"])
        norm(f"{p}.cross_res.norm", f"{q}.encoder_attn_layer_norm")
        feed_forward(p, q)
    # the fixed sinusoid tables, when stored, must be the ones the model builds
    table = sinusoidal_positions(config.max_positions, config.d_model, "concat")
    for side in ("encoder", "decoder"):
        stored = sd.get(f"{side}.embed_positions.weight")
        if stored is not None and (stored.shape != table.shape or (stored - table).abs().max().item() > 1e-4):
            raise MarianImportError(f"weights: {side}.embed_positions.weight is not Marian's fixed sinusoidal "
                                    "table (learned positions are not supported)")
    # tied copies, the fixed sinusoid tables and the (tied) lm_head are not needed
    ignorable = {"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight",
                 "encoder.embed_positions.weight", "decoder.embed_positions.weight"}
    extra = sorted(set(sd) - used - ignorable)
    if extra:
        raise MarianImportError(f"weights: tensor {extra[0]!r} has no counterpart in nmt-desktop's model "
                                f"({len(extra)} unexpected tensor{'s' if len(extra) > 1 else ''})")
    return out


# -- tokenizers -----------------------------------------------------------------------------------


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _proto_fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of a protobuf message; length-delimited values as bytes."""
    fields, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _varint(data, pos)
            value, pos = data[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        fields.append((number, wire, value))
    return fields


def _normalizer_spec(model_proto: bytes) -> dict[str, Any]:
    """The .spm's NormalizerSpec: precompiled_charsmap, add_dummy_prefix, remove_extra_whitespaces."""
    spec = {"charsmap": b"", "add_dummy_prefix": True, "remove_extra_whitespaces": True, "name": ""}
    for number, wire, value in _proto_fields(model_proto):
        if number == 3 and wire == 2:  # ModelProto.normalizer_spec
            for n, w, v in _proto_fields(value):
                if n == 1 and w == 2:
                    spec["name"] = v.decode("utf-8", "replace")
                elif n == 2 and w == 2:
                    spec["charsmap"] = bytes(v)
                elif n == 3 and w == 0:
                    spec["add_dummy_prefix"] = bool(v)
                elif n == 4 and w == 0:
                    spec["remove_extra_whitespaces"] = bool(v)
    return spec


def convert_spm(spm_path: Path, vocab: dict[str, int], vocab_size: int, unk_id: int,
                special: dict[str, int]) -> Tokenizer:
    """A `tokenizers` Unigram tokenizer giving MarianTokenizer's ids for the pieces of `spm_path`.

    Ids are those of `vocab` (piece -> id, covering 0..vocab_size-1); `special` names the special
    tokens: </s>, <unk>, <pad> and `>>lang<<` codes, matched as written in the text, never segmented.
    """
    try:
        import sentencepiece as spm
    except ImportError:
        raise MarianImportError("importing Marian models needs the sentencepiece package, a dependency of "
                                "nmt-desktop that is missing here (pip install sentencepiece)") from None
    import tokenizers
    from tokenizers import Regex, decoders, normalizers, pre_tokenizers

    sp = spm.SentencePieceProcessor()
    try:
        sp.Load(str(spm_path))
    except Exception as exc:
        raise MarianImportError(f"{spm_path}: not a SentencePiece model ({exc})") from None
    if _is_bpe(sp):
        raise MarianImportError(f"{spm_path}: only unigram SentencePiece models are supported")
    scores: dict[str, float] = {}
    for i in range(sp.get_piece_size()):
        if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i):
            continue
        scores[sp.id_to_piece(i)] = float(sp.get_score(i))
    known = {c for piece in scores for c in piece} | {" ", WORD_START}
    by_id: list[tuple[str, float] | None] = [None] * vocab_size
    for piece, i in vocab.items():
        if not 0 <= i < vocab_size:
            raise MarianImportError(f"vocab.json: id {i} of {piece!r} is outside the model's vocabulary "
                                    f"of {vocab_size}")
        by_id[i] = _lattice_entry(piece, scores, known, special)
    for i, entry in enumerate(by_id):
        if entry is None:  # a gap in vocab.json's ids: a placeholder that never matches text
            by_id[i] = (f"<unused_{i}>{UNREACHABLE}", _LOW_SCORE)
    model = tokenizers.models.Unigram([e for e in by_id if e is not None], unk_id=unk_id, byte_fallback=False)
    tok = tokenizers.Tokenizer(model)
    spec = _normalizer_spec(sp.serialized_model_proto())
    parts = []
    if spec["charsmap"]:
        parts.append(normalizers.Precompiled(spec["charsmap"]))
    if spec["remove_extra_whitespaces"]:
        parts += [normalizers.Strip(left=True, right=True), normalizers.Replace(Regex(" {2,}"), " ")]
    if any(e is not None and e[0].startswith(RUN_MARK) for e in by_id):
        unknown = _negated_class(known)  # mark both ends of each run of characters the .spm lacks
        parts.append(normalizers.Replace(Regex(f"(?<!{unknown})(?={unknown})|(?<={unknown})(?!{unknown})"),
                                         RUN_MARK))
    if parts:
        tok.normalizer = normalizers.Sequence(parts)
    scheme = "always" if spec["add_dummy_prefix"] else "never"
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=WORD_START, prepend_scheme=scheme)
    tok.decoder = decoders.Sequence([decoders.Replace(RUN_MARK, ""), decoders.Replace(UNREACHABLE, ""),
                                     decoders.Metaspace(replacement=WORD_START, prepend_scheme=scheme)])
    tok.add_special_tokens([tokenizers.AddedToken(t, special=True, normalized=False)
                            for t, _ in sorted(special.items(), key=lambda kv: kv[1])])
    return Tokenizer(tok)


def _lattice_entry(piece: str, scores: dict[str, float], known: set[str],
                   special: dict[str, int]) -> tuple[str, float]:
    """The Unigram (string, score) of a vocab.json entry, so that segmentation is MarianTokenizer's.

    MarianTokenizer maps the .spm's pieces through vocab.json, and a run of characters the .spm
    lacks (one unknown piece) by its surface: an entry made only of such characters is matched
    only as a whole run (marked with RUN_MARK by the normaliser). Any other entry the .spm lacks
    (the other side's pieces of a shared vocabulary) is never produced from text.
    """
    if piece in scores:
        return piece, scores[piece]
    if piece in special:
        return piece, _LOW_SCORE
    if piece and not known.intersection(piece):
        return f"{RUN_MARK}{piece}{RUN_MARK}", 0.0  # beats the run's unknown nodes, which score below any piece
    return piece + UNREACHABLE, _LOW_SCORE


def _negated_class(chars: set[str]) -> str:
    """An Oniguruma character class matching any character not in `chars` (as code-point ranges)."""
    ranges: list[list[int]] = []
    for point in sorted(map(ord, chars)):
        if ranges and point == ranges[-1][1] + 1:
            ranges[-1][1] = point
        else:
            ranges.append([point, point])
    body = "".join(f"\\x{{{a:x}}}" + (f"-\\x{{{b:x}}}" if b > a else "") for a, b in ranges)
    return f"[^{body}]"


def _is_bpe(sp: Any) -> bool:
    """True for BPE SentencePiece models (ModelProto.trainer_spec.model_type == BPE)."""
    for number, wire, value in _proto_fields(sp.serialized_model_proto()):
        if number == 2 and wire == 2:  # trainer_spec
            for n, w, v in _proto_fields(value):
                if n == 3 and w == 0:  # model_type: 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR
                    return v != 1
    return False


def _vocab(path: Path) -> dict[str, int]:
    data = _read_json(path)
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                             for k, v in data.items()):
        raise MarianImportError(f"{path}: must be a JSON object mapping pieces to integer ids")
    if len(set(data.values())) != len(data):
        raise MarianImportError(f"{path}: two pieces share one id")
    return data


# -- the import -----------------------------------------------------------------------------------


def import_marian(hf_dir: str | os.PathLike, out: str | os.PathLike, src_lang: str = "",
                  tgt_lang: str = "", int8: bool = False, card: dict[str, Any] | None = None) -> Path:
    """Convert the Hugging Face MarianMT folder `hf_dir` into the nmt-desktop model folder `out`.

    int8: store the weight matrices as int8 with per-row scales (under half the float32 size;
    loading gives float32 back). card: entries added to (and overriding) the written model card.
    """
    from nmt_desktop.core.formats.model_folder import save_model

    hf_dir, out = Path(hf_dir), Path(out)
    if not hf_dir.is_dir():
        raise MarianImportError(f"{hf_dir}: not a folder")
    hf = _read_json(hf_dir / "config.json")
    if not isinstance(hf, dict):
        raise MarianImportError(f"{hf_dir / 'config.json'}: must be a JSON object")
    shared = bool(hf.get("share_encoder_decoder_embeddings", True))
    src_vocab = _vocab(hf_dir / "vocab.json")
    tgt_vocab = src_vocab if shared else _vocab(hf_dir / "target_vocab.json")
    try:
        src_size = int(hf.get("vocab_size", len(src_vocab)))
        tgt_size = src_size if shared else int(hf.get("decoder_vocab_size") or len(tgt_vocab))
    except (TypeError, ValueError):
        raise MarianImportError(f"{hf_dir / 'config.json'}: vocab_size and decoder_vocab_size must be integers") from None
    if "<unk>" not in src_vocab or "</s>" not in src_vocab:
        raise MarianImportError(f"{hf_dir / 'vocab.json'}: has no '<unk>' or '</s>' entry")
    unk = src_vocab["<unk>"]
    if not shared and tgt_vocab.get("<unk>") != unk:
        raise MarianImportError("target_vocab.json: '<unk>' must have the same id as in vocab.json")
    config = marian_config(hf, src_size, tgt_size, unk)
    config.src_lang, config.tgt_lang = src_lang, tgt_lang

    def specials(vocab: dict[str, int]) -> dict[str, int]:
        """Tokens never segmented from text: </s>, <unk>, <pad> and the >>lang<< codes."""
        return {t: i for t, i in vocab.items() if t in ("</s>", "<unk>", "<pad>") or is_language_token(t)}

    for name in ("source.spm", "target.spm"):
        if not (hf_dir / name).is_file():
            raise MarianImportError(f"{hf_dir / name}: file not found")
    source = convert_spm(hf_dir / "source.spm", src_vocab, src_size, unk, specials(src_vocab))
    target = convert_spm(hf_dir / "target.spm", tgt_vocab, tgt_size, unk, specials(tgt_vocab))
    pair = TokenizerPair(source, target, joint=False)

    weights = convert_weights(load_hf_weights(hf_dir), config)
    model = Transformer(config)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    for key, shape in expected.items():
        if tuple(weights[key].shape) != shape:
            raise MarianImportError(f"weights: tensor {key!r} has shape {list(weights[key].shape)}, but config.json "
                                    f"implies {list(shape)}")
    model.load_state_dict(weights, strict=True)
    written = {"source": "Hugging Face MarianMT import", "hf_folder": hf_dir.name,
               "note": "Imported with nmt-desktop import-marian; see the original model's license.", **(card or {})}
    if shared and source.to_str() == target.to_str():
        pair = TokenizerPair(source, source, joint=True)
    return save_model(out, model.eval(), pair, written, dtype=torch.int8 if int8 else None)

