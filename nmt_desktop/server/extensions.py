"""What our engine adds to LibreTranslate's answer, only when asked (`trust=true`, `alignment=true`), and
LibreTranslate's own `alternatives`; computed on the decode thread from a segment's sentence translations.

- trust: per segment the worst sentence's trust band and estimated chrF (core/analysis/quality.py, the
  signals the app shows) and the flagged words with their reasons.
- alignment: per segment Pharaoh links "i-j" (source word i, target word j, 0-based, whitespace words
  of the text as sent and of its translation, sentence after sentence) by the model's own reading of its
  attention (core/analysis/alignment.py), for a client that places tags itself. A URL, e-mail address or
  emoji the model read as a placeholder is one word either way, so the indices hold; an HTML <code> run of
  several words is one placeholder word to the model, and shifts them.
- alternatives: the beam's next-best hypotheses, sentence by sentence, decoded without placeholders
  (batcher.DecodeKey.keep_spans), whose names they would hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.decoding.translator import Translator

_BANDS = ("low", "medium", "high")


def trust(translator: "Translator", sentences: list["Translation"]) -> dict[str, Any]:
    """{"trust": band, "qe": estimated chrF, "flags": [...]} of a segment (its weakest sentence)."""
    from nmt_desktop.core.analysis.quality import estimate_translation

    estimates = [estimate_translation(translator, s) for s in sentences if s.target_ids]
    if not estimates:
        return {"trust": "high", "qe": 100.0, "flags": []}
    flags = [dict(f.to_dict(), sentence=n) for n, e in enumerate(estimates) for f in e.flags]
    return {"trust": min((e.trust for e in estimates), key=_BANDS.index), "qe": round(min(e.qe for e in estimates), 2),
            "flags": flags}


def alignment(translator: "Translator", sentences: list["Translation"]) -> str:
    """The segment's Pharaoh links, word indices counted across its sentences."""
    from nmt_desktop.core.analysis.alignment import align, default_method
    from nmt_desktop.core.analysis.pharaoh import to_pharaoh

    method = default_method(translator.card, translator.config.decoder_layers)
    links, source_offset, target_offset = [], 0, 0
    for s in sentences:
        source_words, target_words = s.source.split(), s.text.split()
        if source_words and target_words and s.attention is not None:
            try:
                found = align(s, method, source_words, target_words, translator=translator)
            except ValueError:  # pieces that cannot be matched to the words: no links for this sentence
                found = []
            links += [(i + source_offset, j + target_offset) for i, j in found]
        source_offset, target_offset = source_offset + len(source_words), target_offset + len(target_words)
    return to_pharaoh(links)


def alternatives(sentences: list["Translation"], count: int, best: str) -> list[str]:
    """Up to `count` other translations of the segment: the k-th hypothesis of each sentence (its best where
    it has fewer), distinct and unlike `best`, as LibreTranslate's filter_unique."""
    found: list[str] = []
    for k in range(1, count + 1):
        text = " ".join((s.nbest[k] if k < len(s.nbest) else s.best).text for s in sentences)
        if text and text != best and text not in found:
            found.append(text)
    return found
