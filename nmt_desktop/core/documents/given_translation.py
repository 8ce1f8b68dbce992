"""A translation that is given, not decoded (a translation memory's target, a translator's confirmed text), and
the runs of its block placed on its words (issue 44).

The model still says which words go together: it reads the given text as if it had written it (teacher forcing,
Translator.score), and its word alignment (core/analysis/alignment.py, the reading translate_document uses for
its own output) cuts the text into the block's runs (inline_transfer.py). Where the model cannot read a pair
(longer than it takes, pieces that do not match the words) or no model is given, words are aligned by their
relative position.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Sequence

import numpy as np

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock
from nmt_desktop.core.documents.inline_transfer import RunInfo, transfer

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator

Links = list[tuple[int, int]]  # (source word i, target word j)


def position_alignment(n_s: int, n_t: int) -> tuple[np.ndarray, Links]:
    """Evidence (target words, source words) and links of target word j to the source word at its relative
    position: the alignment when the model's cannot be had."""
    matrix = np.zeros((n_t, n_s))  # (Wt, Ws)
    links = [(min(n_s - 1, round(j * n_s / max(1, n_t))), j) for j in range(n_t)] if n_s else []
    for i, j in links:
        matrix[j, i] = 1.0
    return matrix, links


def given_alignments(translator: "Translator | None", pairs: Sequence[tuple[list[str], list[str]]]
                     ) -> list[tuple[np.ndarray, Links, bool]]:
    """Per (source words, target words) pair: evidence (Wt, Ws), links, and whether the model aligned it
    (False: by position). The pairs are scored in the translator's length-sorted batches."""
    out = [(*position_alignment(len(s), len(t)), False) for s, t in pairs]
    if translator is None:
        return out
    from nmt_desktop.core.analysis.alignment import BEST_METHOD, decide, word_evidence

    todo = [k for k, (s, t) in enumerate(pairs) if s and t]
    texts = [(" ".join(pairs[k][0]), " ".join(pairs[k][1])) for k in todo]
    try:
        scored = translator.score_batch(texts)
    except ValueError:  # one pair too long for the model: each on its own
        scored = [_scored(translator, s, t) for s, t in texts]
    for k, translation in zip(todo, scored):
        if translation is None:
            continue
        try:
            matrix = word_evidence(translation, BEST_METHOD, pairs[k][0], pairs[k][1], translator=translator)
        except ValueError:  # pieces that cannot be matched to the words
            continue
        out[k] = (matrix, list(decide(matrix, BEST_METHOD)), True)
    return out


def _scored(translator: "Translator", source: str, target: str):
    try:
        return translator.score(source, target)
    except ValueError:
        return None


def source_words(text: str, start: int, owners: Sequence[int]) -> tuple[list[str], list[int]]:
    """A text's whitespace words and the run each comes from (the run of most of its characters; owners[k]:
    the run of character start + k)."""
    words, runs = [], []
    for m in re.finditer(r"\S+", text):
        chars = [owners[start + k] for k in range(m.start(), m.end()) if start + k < len(owners)]
        words.append(m.group())
        runs.append(max(set(chars), key=chars.count) if chars else 0)
    return words, runs


def run_infos(runs: Sequence[Run]) -> list[RunInfo]:
    """A block's runs as the transfer sees them."""
    return [RunInfo(run.style is not None or run.verbatim, bool(run.text.strip()), run.verbatim, run.text)
            for run in runs]


def given_block(translator: "Translator | None", block: Block, target: str) -> TranslatedBlock:
    """The block's runs on the words of `target`, its translation, placed by the model's alignment of the two
    (see the module docstring); a verbatim run (inline code) takes the word that holds its text. The block's
    leading and trailing white space is kept."""
    text = block.text
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    owners = [r for r, run in enumerate(block.runs) for _ in run.text]
    src_words, src_runs = source_words(text.strip(), len(lead), owners)
    tgt_words = target.split()
    (matrix, links, _aligned), = given_alignments(translator, [(src_words, tgt_words)])
    fixed, used = {}, set()
    for r, run in enumerate(block.runs):
        own = run.text.strip()
        j = next((j for j, word in enumerate(tgt_words) if own and j not in used
                  and re.search(rf"(?<!\w){re.escape(own)}", word)), None) if run.verbatim else None
        if j is not None:
            fixed[j] = r
            used.add(j)
    return transfer(run_infos(block.runs), src_runs, tgt_words, matrix, links, fixed, lead, trail)
