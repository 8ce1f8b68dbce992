"""Which files of a Marian repo on the Hub `pull` downloads, and how large that download is."""

from __future__ import annotations

from typing import Any

__all__ = ["OPTIONAL_FILES", "REQUIRED_FILES", "WEIGHT_FILES", "download_size", "wanted_files"]

REQUIRED_FILES = ("config.json", "vocab.json", "source.spm", "target.spm")  # config.json first: checked first
OPTIONAL_FILES = ("target_vocab.json",)  # separate source and target vocabularies
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")  # in order of preference


def wanted_files(names: set[str] | dict) -> list[str]:
    """The files `pull` downloads from a repo holding `names`: config.json, vocabularies, SentencePiece
    models, and model.safetensors (else pytorch_model.bin)."""
    wanted = [f for f in REQUIRED_FILES + OPTIONAL_FILES if f in names]
    weights = next((w for w in WEIGHT_FILES if w in names), None)
    return wanted + ([weights] if weights else [])


def download_size(info: Any) -> int | None:
    """Bytes `pull` would download for a `model_info(files_metadata=True)` result; None if unknown."""
    sizes = {s.rfilename: getattr(s, "size", None) for s in (getattr(info, "siblings", None) or [])}
    wanted = wanted_files(sizes)
    if not any(w in WEIGHT_FILES for w in wanted) or any(sizes[w] is None for w in wanted):
        return None
    return sum(int(sizes[w]) for w in wanted)
