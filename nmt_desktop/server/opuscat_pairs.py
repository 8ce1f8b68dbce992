"""OPUS-CAT's TranslationPair (what TranslateJson and TranslatePost answer), made beside the model: the
pieces of source and translation and their alignment read from the attention."""

from __future__ import annotations

from typing import Any


def _pieces(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t != "</s>"]


def translation_pair(translator: Any, text: str, said: list) -> dict[str, Any]:
    """OPUS-CAT's TranslationPair: the translation (both spellings), the SentencePiece pieces of source and
    translation, and piece alignments read from the attention (each target piece to its most attended source
    piece, the heads and layers averaged)."""
    source_pieces: list[str] = []
    target_pieces: list[str] = []
    links: list[tuple[int, int]] = []
    for s in said:
        src = _pieces(s.source_tokens)
        tgt = _pieces(s.target_tokens)
        attention = s.attention  # (L, H, T, S)
        if attention is not None and src and tgt:
            mean = attention.mean(axis=(0, 1))[: len(tgt), : len(src)]  # (T, S) without </s>
            links += [(int(mean[j].argmax()) + len(source_pieces), j + len(target_pieces)) for j in range(len(tgt))]
        source_pieces += src
        target_pieces += tgt
    to_target: dict[str, list[int]] = {}
    to_source: dict[str, list[int]] = {}
    for i, j in links:
        to_target.setdefault(str(i), []).append(j)
        to_source.setdefault(str(j), []).append(i)
    return {"translation": text, "Translation": text, "SegmentedSourceSentence": source_pieces,
            "SegmentedTranslation": target_pieces, "SegmentedAlignmentSourceToTarget": to_target,
            "SegmentedAlignmentTargetToSource": to_source,
            "AlignmentString": " ".join(f"{i}-{j}" for i, j in links), "RawTranslation": " ".join(target_pieces),
            "Segmentation": 1}  # SegmentationMethod.SentencePiece
