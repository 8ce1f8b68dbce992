"""Subword vocabularies: a thin wrapper over Hugging Face `tokenizers`.

Tokenizers we train are byte-level BPE with no normaliser: every string encodes without `<unk>`
and `decode(encode(text)) == text` byte for byte (spaces, newlines, accents, CJK, emoji alike).
Text is not Unicode-normalised; NFC it before encoding if inputs may come decomposed.
Tokenizers loaded from JSON (e.g. SentencePiece/Metaspace ones from a Marian import) are used as is.

`pieces()` gives display strings for users: byte-level glyphs such as 'Ġ' or 'Ã©' are mapped back
to the text they stand for, a space becomes `WORD_START` ("▁"), and bytes that are not a complete
UTF-8 character on their own (part of an emoji split over several pieces) are shown in hex as
"<F0 9F>".
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tokenizers
from tokenizers import decoders, models, pre_tokenizers, trainers

SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>")  # ids 0, 1, 2, 3 in tokenizers we train
WORD_START = "▁"  # shown at the start of a piece that begins a new word
# Lattice marks of SentencePiece vocabularies imported by core/formats/marian.py, never shown in a piece:
RUN_MARK = "\ufdd0"  # around an entry matched only as a whole run of characters its .spm lacks
UNREACHABLE = " "  # after an entry no text may produce (pre-tokenized words hold no space)

_SURROGATES = re.compile("[\udc80-\udcff]+")  # undecodable bytes after errors="surrogateescape"


class TokenizerError(ValueError):
    """A tokenizer file is missing, unreadable or not a tokenizer."""


def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: byte-level glyph -> byte value."""
    keep = {*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)}
    glyphs, shift = {}, 0
    for b in range(256):
        if b in keep:
            glyphs[chr(b)] = b
        else:
            glyphs[chr(256 + shift)] = b
            shift += 1
    return glyphs


_BYTE_DECODER = _byte_decoder()


def _hex_bytes(match: re.Match[str]) -> str:
    return "<" + " ".join(f"{ord(c) - 0xDC00:02X}" for c in match.group()) + ">"


def _types(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ("type", component) pair nested anywhere in a tokenizer JSON fragment."""
    if isinstance(node, dict):
        if isinstance(node.get("type"), str):
            yield node["type"], node
        for value in node.values():
            yield from _types(value)
    elif isinstance(node, list):
        for value in node:
            yield from _types(value)


class Tokenizer:
    """One vocabulary: a thin wrapper over tokenizers.Tokenizer."""

    def __init__(self, hf: tokenizers.Tokenizer):
        self.hf = hf
        self._display: dict[int, str] = {}
        self._meta: _Meta | None = None  # read from the JSON config when first needed

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def train(cls, texts: Iterable[str] | None = None, files: Sequence[str | Path] | None = None,
              vocab_size: int = 8000, min_frequency: int = 2) -> "Tokenizer":
        """Train byte-level BPE on `texts` (any iterable, read once) and/or text `files` (one segment a line)."""
        if texts is None and not files:
            raise TokenizerError("no training data: pass texts or files.")
        for f in files or ():
            if not Path(f).is_file():
                raise TokenizerError(f"{f}: training file not found.")
        hf = tokenizers.Tokenizer(models.BPE(unk_token="<unk>"))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        hf.train_from_iterator(itertools.chain(() if texts is None else texts, _lines(files or ())), trainer)
        return cls(hf)

    @classmethod
    def from_file(cls, path: str | Path) -> "Tokenizer":
        """Load a tokenizers JSON file; TokenizerError names the file if it is missing or invalid."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise TokenizerError(f"{path}: file not found.") from None
        except UnicodeDecodeError:
            raise TokenizerError(f"{path}: not a valid tokenizers JSON file (not UTF-8 text).") from None
        except OSError as exc:
            raise TokenizerError(f"{path}: cannot read file ({exc.strerror or exc}).") from None
        return cls.from_str(text, name=str(path))

    @classmethod
    def from_str(cls, text: str, name: str = "tokenizer.json") -> "Tokenizer":
        """Load tokenizers JSON text; `name` stands for its file in error messages."""
        try:
            return cls(tokenizers.Tokenizer.from_str(text))
        except Exception as exc:  # the Rust side raises plain Exception
            reason = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
            raise TokenizerError(f"{name}: not a valid tokenizers JSON file ({reason}).") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_str(), encoding="utf-8")

    def to_str(self) -> str:
        return self.hf.to_str()

    # -- ids and text -------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Number of ids, added and special tokens included."""
        return self.hf.get_vocab_size(with_added_tokens=True)

    def token_to_id(self, token: str) -> int | None:
        return self.hf.token_to_id(token)

    def id_to_token(self, i: int) -> str | None:
        """The raw vocabulary string (byte-level glyphs and all); None if out of range."""
        return self.hf.id_to_token(i)

    def encode(self, text: str) -> list[int]:
        """Subword ids of `text`, without special tokens."""
        return self.hf.encode(_encodable(text), add_special_tokens=False).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.hf.encode_batch([_encodable(t) for t in texts], add_special_tokens=False)]

    def decode(self, ids: Sequence[int]) -> str:
        """Text of `ids`, special tokens skipped; `decode(encode(t)) == t` for trained tokenizers."""
        return self.hf.decode(list(ids), skip_special_tokens=True)

    # -- display ------------------------------------------------------------------------------

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """One display string per id.

        Special and added tokens show as themselves, spaces as WORD_START, bytes that are not a
        whole UTF-8 character as hex in angle brackets ("<F0 9F>"), unknown ids as "<id N>".
        Non-byte-level vocabularies (SentencePiece "▁", WordPiece "##") show their token strings.
        """
        cache = self._display
        return [cache[i] if i in cache else self._piece(i) for i in ids]

    @property
    def continuing_prefix(self) -> str | None:
        """A WordPiece vocabulary's continuing-subword prefix ("##"), else None (pieces mark word starts
        with WORD_START instead). Word boundaries themselves: core/analysis/words.py."""
        return self._info().continuing_prefix

    def _piece(self, i: int) -> str:
        token, meta = self.hf.id_to_token(i), self._info()
        if token is None:
            shown = f"<id {i}>"
        elif i in meta.added_ids or not meta.byte_level:
            shown = token.replace(RUN_MARK, "").removesuffix(UNREACHABLE) if token[-1:] in (RUN_MARK, UNREACHABLE) \
                else token
        else:
            raw = [_BYTE_DECODER.get(c) for c in token]
            if None in raw:  # not a byte-level string after all
                shown = token
            else:
                text = bytes(raw).decode("utf-8", errors="surrogateescape")  # type: ignore[arg-type]
                shown = _SURROGATES.sub(_hex_bytes, text.replace(" ", WORD_START))
        self._display[i] = shown
        return shown

    def _info(self) -> _Meta:
        if self._meta is None:
            self._meta = _Meta.of(self.hf)
        return self._meta


@dataclass(frozen=True)
class _Meta:
    """What display needs to know about a vocabulary, read once from its JSON config."""

    byte_level: bool  # a ByteLevel pre-tokenizer or decoder: tokens are GPT-2 byte glyphs
    continuing_prefix: str | None  # WordPiece decoder's "##", else None
    added_ids: frozenset[int]

    @classmethod
    def of(cls, hf: tokenizers.Tokenizer) -> "_Meta":
        cfg = json.loads(hf.to_str())
        decoder = list(_types(cfg.get("decoder")))
        byte_level = any(kind == "ByteLevel" for kind, _ in [*_types(cfg.get("pre_tokenizer")), *decoder])
        prefix = next((part.get("prefix", "##") for kind, part in decoder if kind == "WordPiece"), None)
        added = hf.get_added_tokens_decoder()
        return cls(byte_level, prefix, frozenset(added))


def _lines(files: Iterable[str | Path]) -> Iterator[str]:
    """Lines of UTF-8 text files, without their line ends."""
    for f in files:
        with open(f, encoding="utf-8") as handle:
            try:
                for line in handle:
                    yield line.rstrip("\n")
            except UnicodeDecodeError:
                raise TokenizerError(f"{f}: training file is not UTF-8 text.") from None


@dataclass
class TokenizerPair:
    """Source and target vocabularies; `joint` means one shared vocabulary (`source is target`)."""

    source: Tokenizer
    target: Tokenizer
    joint: bool

    FILE_JOINT = "tokenizer.json"
    FILE_SOURCE = "source.tokenizer.json"
    FILE_TARGET = "target.tokenizer.json"

    @classmethod
    def train(cls, src_texts: Iterable[str], tgt_texts: Iterable[str], vocab_size: int = 8000,
              joint: bool = True, min_frequency: int = 2) -> "TokenizerPair":
        """Train one vocabulary on both sides (joint) or one per side, each of `vocab_size`."""
        if joint:
            shared = Tokenizer.train(itertools.chain(src_texts, tgt_texts), vocab_size=vocab_size,
                                     min_frequency=min_frequency)
            return cls(shared, shared, True)
        return cls(Tokenizer.train(src_texts, vocab_size=vocab_size, min_frequency=min_frequency),
                   Tokenizer.train(tgt_texts, vocab_size=vocab_size, min_frequency=min_frequency), False)

    def save(self, folder: str | Path) -> list[str]:
        """Write this pair's layout into `folder` (created if needed), remove the other layout's
        files, and return the file names written."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        files = self._files()
        for name in {self.FILE_JOINT, self.FILE_SOURCE, self.FILE_TARGET} - set(files):
            (folder / name).unlink(missing_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        return list(files)

    @classmethod
    def load(cls, folder: str | Path) -> "TokenizerPair":
        """Read `tokenizer.json` (preferred) or `source.`/`target.tokenizer.json` from `folder`."""
        folder = Path(folder)
        if (folder / cls.FILE_JOINT).is_file():
            shared = Tokenizer.from_file(folder / cls.FILE_JOINT)
            return cls(shared, shared, True)
        if (folder / cls.FILE_SOURCE).is_file() and (folder / cls.FILE_TARGET).is_file():
            return cls(Tokenizer.from_file(folder / cls.FILE_SOURCE),
                       Tokenizer.from_file(folder / cls.FILE_TARGET), False)
        raise TokenizerError(f"{folder}: {cls._missing()}.")

    @classmethod
    def from_files(cls, files: dict[str, str]) -> "TokenizerPair":
        """Build from {file name: JSON text} (e.g. read from a zip) with the same layout rules as `load`."""
        if cls.FILE_JOINT in files:
            shared = Tokenizer.from_str(files[cls.FILE_JOINT], cls.FILE_JOINT)
            return cls(shared, shared, True)
        if cls.FILE_SOURCE in files and cls.FILE_TARGET in files:
            return cls(Tokenizer.from_str(files[cls.FILE_SOURCE], cls.FILE_SOURCE),
                       Tokenizer.from_str(files[cls.FILE_TARGET], cls.FILE_TARGET), False)
        raise TokenizerError(f"{cls._missing()}.")

    def _files(self) -> dict[str, str]:
        if self.joint:
            return {self.FILE_JOINT: self.source.to_str()}
        return {self.FILE_SOURCE: self.source.to_str(), self.FILE_TARGET: self.target.to_str()}

    @classmethod
    def _missing(cls) -> str:
        return f"no tokenizer found (expected {cls.FILE_JOINT}, or {cls.FILE_SOURCE} and {cls.FILE_TARGET})"


def _encodable(text: str) -> str:
    """`text` with lone surrogates (e.g. from surrogateescape-decoded bytes) replaced by U+FFFD;
    the Rust tokenizer refuses strings that are not valid Unicode scalar sequences."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
