"""Word alignments from the model, and how well they agree with people (AER).

A reading (`AlignMethod`) says what evidence stands for "target word j is aligned to source word i":

- `reading`: "masking" (the default) is the drop in the model's probability of target token t when
  source word i is hidden (masking.py: prediction difference, one extra pass per source word); the
  attention readings are "shift", target token t read from the step that *consumes* it as decoder input
  (the step predicting t+1; Chen et al. 2020), and "predict", the step that predicts it (the old reading);
  any name of `attribution.METHODS` ("saliency", "leave_one_out", ...) reads that method's source attribution
  (T, S), its positive part (a source token that lowers log p(y_t) is no evidence that it translates y_t; a
  no-op for the unsigned methods), merged to words as masking is; it mixes in no attention;
- `heads` (attention readings): the cross-attention heads averaged, as 0-based (layer, head) pairs;
  None: every head of `layer` (0-based, negative counts from the end; None: all layers);
- `prior`: a diagonal prior, the evidence times exp(-prior * |j/Wt - i/Ws|) (positions as fractions of
  the sentence; 0: none): between two similar candidates, the one in the expected place wins;
- `attention_weight` (masking): the predict reading's word attention of `layer` / `heads`, added with this
  weight to the masking evidence (the two disagree in different places; together they err least);
- `identical`: words spelled the same on both sides (numbers, names, punctuation) get evidence 1 added;
- `decision`: "argmax" links each target word to its best source word; "mutual" keeps only the links that
  are also the best of their source word's column (SimAlign's ArgMax: fewer, surer links); "threshold"
  links every pair whose evidence reaches `threshold`;
- `grow` (> 0): the decision's links grown to neighbouring pairs that are one word's best and at least `grow`
  of the other word's best evidence (alignment_decision.py says how and why): one word may then link to
  several (German compounds, separable verbs), which "mutual" alone never allows. 0: not grown.

Evidence is merged to words before the decision (a source word receives what its pieces receive, a
target word is the mean of its pieces) and special tokens (</s>, >>fra<<) are left out and each target
word's row renormalised, so the attention sink on </s> decides nothing.

The default (`BEST_METHOD`: masking plus 0.75 of all layers' attention, prior 1.5, identical words, mutual grown
at 0.4) was chosen on the development sets in benchmarks/RESULTS.md. Issue 23 chose masking (under half the
error of the old reading: last layer, predict, argmax) with mutual links (`ISSUE23_METHOD`); issue 31 found
that on long sentences its recall falls (the masking evidence gets noisier with length: a word's best is more
often wrong, and mutual then links neither word) and added the growing step and a stronger prior and attention
share (en-de.long: AER 31.4 -> 26.6%, recall 57 -> 66%; "Alignments for long sentences (issue 31)"). A model's card can record another reading under "alignment";
an entry written before `grow` existed has none (it is read as 0, as it was chosen).

Words are either the model's own (`words.word_ids`: from the pieces) or given: whitespace tokens of a
pre-tokenized text, as fast_align and the gold sets count them (`given_words`, `piece_word_ids`).

`symmetrise` (alignment_decision.py) combines a forward alignment with one from a model of the reverse
direction (intersection, union, grow-diag-final as in Moses). `parse_gold` / `alignment_error` read gold links
(`i-j` sure, `i?j` possible) and compute AER, precision and recall (Och & Ney 2003).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Sequence

import numpy as np

# DECISIONS, SYMMETRISATIONS and symmetrise were defined here before: still imported from here (GUI, CLI, tests)
from nmt_desktop.core.analysis.alignment_decision import (  # noqa: F401
    DECISIONS, SYMMETRISATIONS, Links, decide_links, symmetrise)
from nmt_desktop.core.analysis.head_names import head_name, layer_name
from nmt_desktop.core.analysis.masking import prediction_difference
from nmt_desktop.core.analysis.words import WORD_START, is_special, merge_attention, piece_bytes, real_words

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

Reading = str  # one of READINGS, or an attribution method's name (`attribution_methods()`)
Decision = Literal["argmax", "mutual", "threshold"]
READINGS: tuple[str, ...] = ("masking", "shift", "predict")  # the model's own readings (the GUI offers these)
ATTENTION_READINGS: tuple[str, ...] = ("shift", "predict")


def attribution_methods() -> tuple[str, ...]:
    """The attribution methods a reading may name: `attribution.METHODS`, read when asked (it grows; it imports
    torch)."""
    from nmt_desktop.core.analysis.attribution import METHODS

    return tuple(METHODS)


@dataclass(frozen=True)
class AlignMethod:
    """One way to read word alignments from attention (see the module docstring)."""

    reading: Reading = "masking"
    layer: int | None = None
    heads: tuple[tuple[int, int], ...] | None = None
    decision: Decision = "mutual"
    threshold: float = 0.3
    prior: float = 1.5
    identical: bool = True
    attention_weight: float = 0.75  # masking: add this much of the predict reading's word attention (0: none)
    grow: float = 0.4  # grow the decision's links to neighbouring best pairs this strong (0: not grown)

    @property
    def uses_attention(self) -> bool:
        return self.reading in ATTENTION_READINGS

    @property
    def uses_attribution(self) -> bool:
        """Whether the reading is an attribution method's (anything but READINGS)."""
        return self.reading not in READINGS

    def __post_init__(self) -> None:
        if self.reading not in READINGS and self.reading not in attribution_methods():
            raise ValueError(f"unknown alignment reading {self.reading!r}: use {', '.join(READINGS)} or an "
                             f"attribution method ({', '.join(attribution_methods())})")
        if self.decision not in DECISIONS:
            raise ValueError(f"unknown alignment decision {self.decision!r}: use {', '.join(DECISIONS)}")
        if not self.prior >= 0:
            raise ValueError(f"the alignment prior must be >= 0, got {self.prior!r}")
        if not self.grow >= 0:
            raise ValueError(f"the alignment's grow ratio must be >= 0, got {self.grow!r}")

    def which_heads(self, layers: int) -> str:
        """"L2 H1 + L3 H4", "L2 (heads averaged)" or "all layers", counted from 1 like every view."""
        if self.heads is not None:
            return " + ".join(head_name(l, h) for l, h in self.heads)
        if self.layer is None:
            return "all layers (heads averaged)"
        return f"{layer_name(self.layer % layers)} (heads averaged)"

    def describe(self, layers: int) -> str:
        """One line for the user guide (docs/guide/scoring.md), the Alignments view and `align --help`."""
        mixed = f" plus attention ({self.which_heads(layers)})" if self.attention_weight else ""
        parts = [{"masking": "masking (how much a target word's probability drops when a source word is hidden)"
                             + mixed,
                  "shift": f"attention where a token is read (shift), {self.which_heads(layers)}",
                  "predict": f"attention where a token is predicted, {self.which_heads(layers)}"}.get(
                      self.reading, f"{self.reading} attribution of each target word to the source words (its "
                                    "positive part)")]
        if self.prior:
            parts.append(f"diagonal prior {self.prior:g}")
        if self.identical:
            parts.append("identical words linked")
        parts.append({"argmax": "each target word to its best source word",
                      "mutual": "words that are each other's best",
                      "threshold": f"evidence ≥ {self.threshold:g}"}[self.decision]
                     + (f", grown to neighbouring pairs that are one word's best (≥ {self.grow:g} of the other's best)"
                        if self.grow else ""))
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The card's "alignment" entry: heads as "L2 H1" names."""
        out: dict[str, Any] = {"reading": self.reading, "decision": self.decision, "grow": self.grow,
                               "prior": self.prior, "identical": self.identical,
                               "attention_weight": self.attention_weight}  # read by masking only; kept to round-trip
        if self.heads is not None:
            out["heads"] = [head_name(l, h) for l, h in self.heads]
        else:
            out["layer"] = self.layer
        if self.decision == "threshold":
            out["threshold"] = self.threshold
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "AlignMethod":
        """The reading a model card records (`to_dict`); ValueError naming the bad field. A field left out takes
        its value of before issue 31 (mutual, prior 1, attention 0.5, not grown): what entries written then,
        which have no "grow", were chosen against."""
        from nmt_desktop.core.analysis.head_names import parse_head_refs

        heads = data.get("heads")
        refs = None
        if heads is not None:
            parsed = parse_head_refs(",".join(heads), "alignment.heads", want="head")
            refs = tuple((r.layer, int(r.head)) for r in parsed if r.head is not None)
        return cls(reading=data.get("reading", "masking"), layer=data.get("layer"), heads=refs,
                   attention_weight=float(data.get("attention_weight", 0.5)),
                   decision=data.get("decision", "mutual"), threshold=float(data.get("threshold", 0.3)),
                   prior=float(data.get("prior", 1.0)), identical=bool(data.get("identical", True)),
                   grow=float(data.get("grow", 0.0)))


# The best reading on the development sets (module docstring); a card's "alignment" entry overrides it.
BEST_METHOD = AlignMethod()
GENERIC_METHOD = BEST_METHOD
# The default issue 23 chose (masking + half the attention, prior 1, mutual links, not grown).
ISSUE23_METHOD = AlignMethod(prior=1.0, attention_weight=0.5, grow=0.0)
# What `translate --align` and the Alignments view did before issue 23: last layer, predict, argmax.
OLD_METHOD = AlignMethod(reading="predict", layer=-1, decision="argmax", prior=0.0, identical=False, grow=0.0)


def default_method(card: dict[str, Any] | None, layers: int) -> AlignMethod:
    """The reading a model's card recommends, else `BEST_METHOD`."""
    entry = (card or {}).get("alignment")
    if isinstance(entry, dict):
        try:
            method = AlignMethod.from_dict(entry)
            if method.heads is None or all(0 <= l < layers for l, _ in method.heads):
                return method
        except (ValueError, TypeError):
            pass
    return BEST_METHOD


# --- words ------------------------------------------------------------------------------------------


def _text_bytes(pieces: Sequence[str]) -> list[int]:
    """How many UTF-8 bytes of the text each piece stands for, whitespace left out as the words leave it out:
    any Unicode whitespace (str.split cuts words at a no-break space, a thin space, U+3000...), found in the
    pieces' bytes joined, so a space character split over two byte pieces ("<E2 80>", "<89>") is still one."""
    raw = [b"" if is_special(p) else piece_bytes(p) for p in pieces]
    counted = bytearray()  # per byte of the joined pieces: 1 unless it belongs to a whitespace character
    for ch in b"".join(raw).decode("utf-8", errors="surrogateescape"):
        counted.extend([0 if ch.isspace() else 1] * len(ch.encode("utf-8", errors="surrogateescape")))
    sizes, at = [], 0
    for r in raw:
        sizes.append(sum(counted[at: at + len(r)]))
        at += len(r)
    return sizes


def piece_word_ids(pieces: Sequence[str], words: Sequence[str]) -> list[int | None]:
    """Which of the given `words` (whitespace tokens of the text that was tokenized) each piece belongs to;
    None for special tokens.

    Matches UTF-8 bytes, so a word split into several pieces, or into bytes of one character (an emoji in a
    byte-level vocabulary, shown "<F0 9F>"), still lands in its word. Where bytes cannot match (a tokenizer
    that normalises "ﬁ" to "fi", an <unk> piece), the pieces' own word starts are used when they count as
    many words; else ValueError."""
    try:
        return _by_bytes(pieces, words)
    except ValueError:
        groups = real_words(pieces)
        if len(groups) != len(words):
            raise
        out: list[int | None] = [None] * len(pieces)
        for w, group in enumerate(groups):
            for i in group:
                out[i] = w
        return out


def _by_bytes(pieces: Sequence[str], words: Sequence[str]) -> list[int | None]:
    owner: list[int] = []  # word index of each byte of the words, spaces left out
    for w, word in enumerate(words):
        owner.extend([w] * len("".join(word.split()).encode("utf-8")))
    out: list[int | None] = []
    pos = 0
    for piece, size in zip(pieces, _text_bytes(pieces)):
        if is_special(piece):
            out.append(None)
            continue
        if not size:  # a blank piece: belongs to the next word, if any
            out.append(owner[pos] if pos < len(owner) else None)
            continue
        if pos >= len(owner):
            raise ValueError(f"the tokens do not match the words: piece {piece!r} is past the last word")
        out.append(owner[pos])
        pos = min(pos + size, len(owner))
    if pos < len(owner):
        raise ValueError(f"the tokens do not match the words: {len(owner) - pos} bytes left over")
    return out


def given_words(pieces: Sequence[str], words: Sequence[str]) -> list[list[int]]:
    """Piece indices of each given word (a word with no piece gets an empty group)."""
    groups: list[list[int]] = [[] for _ in words]
    for i, w in enumerate(piece_word_ids(pieces, words)):
        if w is not None:
            groups[w].append(i)
    return groups


# --- readings ---------------------------------------------------------------------------------------


def _heads_mean(attn: np.ndarray, method: AlignMethod) -> np.ndarray:
    """(L, H, T, S) -> (T, S): the mean of the method's heads."""
    if method.heads is not None:
        if not method.heads:
            raise ValueError("an alignment reading needs at least one head")
        for l, h in method.heads:
            if not (0 <= l < attn.shape[0] and 0 <= h < attn.shape[1]):
                raise ValueError(f"no head {head_name(l, h)}: the attention has {attn.shape[0]} layers of "
                                 f"{attn.shape[1]} heads")
        return np.mean([attn[l, h] for l, h in method.heads], axis=0)
    if method.layer is None:
        return attn.mean(axis=(0, 1))
    if not -attn.shape[0] <= method.layer < attn.shape[0]:
        raise ValueError(f"no decoder layer {layer_name(method.layer)}: the attention has {attn.shape[0]} layers")
    return attn[method.layer].mean(axis=0)


def _shifted(rows: np.ndarray, finished: bool) -> np.ndarray:
    """(T, S) rows by predicting step -> rows by consuming step: row t becomes row t + 1; the last token of
    an unfinished hypothesis is never consumed and keeps its own row."""
    out = rows.copy()
    out[:-1] = rows[1:]
    if not finished and len(rows):
        out[-1] = rows[-1]
    return out


def word_evidence(translation: "Translation", method: AlignMethod = BEST_METHOD,
                  source_words: Sequence[str] | None = None, target_words: Sequence[str] | None = None,
                  continuing_prefix: str | None = None, translator: "Translator | None" = None,
                  attribution_options: dict[str, Any] | None = None) -> np.ndarray:
    """Word evidence (target words, source words) under `method`, each row summing to 1 over real source
    words (before the prior and identical-word bonus, which are added after).

    source_words / target_words: the whitespace tokens the pieces came from (pre-tokenized input, gold
    sets); None: the words the pieces form (`words.real_words`). translator: the model that made or scored
    `translation`, needed by the masking and attribution readings; attribution_options go to
    `attribution.attribute` (`steps` of integrated gradients)."""
    src_pieces, tgt_pieces = translation.source_tokens, translation.target_tokens
    src_groups = (given_words(src_pieces, source_words) if source_words is not None
                  else real_words(src_pieces, continuing_prefix))
    tgt_groups = (given_words(tgt_pieces, target_words) if target_words is not None
                  else real_words(tgt_pieces, continuing_prefix))
    if method.uses_attention:
        attn = translation.attention
        if attn is None:
            raise ValueError("attention readings need a translation decoded with attention")
        rows = _heads_mean(np.asarray(attn, dtype=np.float64), method)  # (T, S)
        if method.reading == "shift":
            rows = _shifted(rows, translation.best.finished)
        matrix = merge_attention(rows, src_groups, [g or [0] for g in tgt_groups])  # (Wt, Ws)
    elif method.uses_attribution:
        if translator is None:
            raise ValueError(f"the {method.reading} reading needs the model (pass the translator)")
        from nmt_desktop.core.analysis.attribution import attribute

        scores = attribute(translator, translation, method.reading, **(attribution_options or {})).source  # (T, S)
        matrix = merge_attention(np.clip(scores.astype(np.float64), 0.0, None), src_groups,
                                 [g or [0] for g in tgt_groups])  # (Wt, Ws)
    else:
        if translator is None:
            raise ValueError("the masking reading needs the model (pass the translator)")
        drops = prediction_difference(translator, translation, src_groups)  # (T, Ws)
        matrix = _row_normalised(merge_attention(drops, [[i] for i in range(len(src_groups))],
                                                 [g or [0] for g in tgt_groups]))
        if method.attention_weight and translation.attention is not None:
            rows = _heads_mean(np.asarray(translation.attention, dtype=np.float64), method)  # (T, S)
            attention = merge_attention(rows, src_groups, [g or [0] for g in tgt_groups])  # (Wt, Ws)
            matrix = matrix + method.attention_weight * _row_normalised(attention)
    for j, g in enumerate(tgt_groups):
        if not g:
            matrix[j] = 0.0
    matrix = _row_normalised(matrix)
    if method.prior and matrix.size:
        Wt, Ws = matrix.shape
        i, j = (np.arange(Ws) + 0.5) / Ws, (np.arange(Wt) + 0.5) / Wt
        matrix = matrix * np.exp(-method.prior * np.abs(j[:, None] - i[None, :]))  # (Wt, Ws)
    if method.identical and matrix.size:
        src_text = _texts(src_pieces, src_groups, source_words)
        tgt_text = _texts(tgt_pieces, tgt_groups, target_words)
        same = np.array([[t == s_ and t != "" for s_ in src_text] for t in tgt_text], dtype=np.float64)
        matrix = matrix + same
    return matrix


def _row_normalised(matrix: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (rows of zeros stay zero)."""
    total = matrix.sum(axis=1, keepdims=True)
    return np.divide(matrix, total, out=np.zeros_like(matrix), where=total > 0)


def _texts(pieces: Sequence[str], groups: Sequence[Sequence[int]], given: Sequence[str] | None) -> list[str]:
    """Each word's lower-cased text (the given word, else its pieces joined) for the identical-word bonus."""
    if given is not None:
        return [w.lower() for w in given]
    return ["".join(pieces[i] for i in g).replace(WORD_START, "").strip().lower() for g in groups]


def decide(matrix: np.ndarray, method: AlignMethod) -> Links:
    """Links (i, j) from word evidence (Wt, Ws) by the method's decision, grown by its `grow`."""
    return decide_links(matrix, method.decision, method.threshold, method.grow)


def align(translation: "Translation", method: AlignMethod = BEST_METHOD,
          source_words: Sequence[str] | None = None, target_words: Sequence[str] | None = None,
          continuing_prefix: str | None = None, translator: "Translator | None" = None,
          attribution_options: dict[str, Any] | None = None) -> Links:
    """Word alignment links (source word i, target word j), 0-based, sorted (see the module docstring);
    `translator` (the model of `translation`) is needed by the masking and attribution readings."""
    return decide(word_evidence(translation, method, source_words, target_words, continuing_prefix, translator,
                                attribution_options), method)


# --- agreement with gold links ---------------------------------------------------------------------


@dataclass
class GoldLinks:
    sure: set[tuple[int, int]] = field(default_factory=set)
    possible: set[tuple[int, int]] = field(default_factory=set)  # sure links included


def parse_gold(line: str, where: str = "gold") -> GoldLinks:
    """One gold line, `i-j` sure and `i?j` possible (source i, target j, 0-based) -> GoldLinks;
    ValueError naming `where` (e.g. "gold.txt line 3") and the bad item."""
    gold = GoldLinks()
    for item in line.split():
        sep = "-" if "-" in item else "?" if "?" in item else None
        parts = item.split(sep) if sep else []
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"{where}: {item!r} is not a link (i-j sure or i?j possible, 0-based word indices)")
        link = (int(parts[0]), int(parts[1]))
        gold.possible.add(link)
        if sep == "-":
            gold.sure.add(link)
    return gold


@dataclass
class AlignmentScore:
    """Corpus-level agreement of predicted links with gold links (Och & Ney 2003)."""

    aer: float
    precision: float
    recall: float
    sentences: int
    links: int  # predicted
    sure: int
    possible: int

    def to_dict(self) -> dict[str, float | int]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def alignment_error(predicted: Sequence[Sequence[tuple[int, int]]], gold: Sequence[GoldLinks]) -> AlignmentScore:
    """AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|), precision |A∩P| / |A|, recall |A∩S| / |S|, summed over sentences."""
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted alignments but {len(gold)} gold lines")
    a = s = p = a_s = a_p = 0
    for links, g in zip(predicted, gold):
        links = set(map(tuple, links))
        a, s, p = a + len(links), s + len(g.sure), p + len(g.possible)
        a_s += len(links & g.sure)
        a_p += len(links & g.possible)
    aer = 1.0 - (a_s + a_p) / (a + s) if a + s else 0.0
    return AlignmentScore(aer, a_p / a if a else 0.0, a_s / s if s else 0.0, len(gold), a, s, p)
