"""The line under the translation: the shown hypothesis' log-prob, length-normalised score and token count.

It is one sentence's (the search scores each unit on its own), so with several sentences it says which one
("Sentence 3 of 12: log-prob …"): unnumbered, it read as the whole text's figure (issue 41). The same two
measures, with the same names, as "Your translation" shows (inspect_view.score_text)."""

from __future__ import annotations

from typing import Any

TOOLTIP = ("log-prob: the sum of the log-probabilities of this sentence's tokens (the hypothesis shown); "
           "length-normalised: that sum divided by the length (with the length penalty), which the search ranks by. "
           "Pick another sentence in the Sentences list to see its figures.")


def score_line(hyp: Any, sentence: int, sentences: int) -> str:
    """`hyp`'s figures; "Sentence {sentence + 1} of {sentences}: " first when the text has several."""
    which = f"Sentence {sentence + 1} of {sentences}: " if sentences > 1 else ""
    return (f"{which}log-prob {hyp.logprob:.2f} (length-normalised {hyp.score:+.3f})  ·  {len(hyp.tokens)} tokens"
            + ("" if hyp.finished else "  ·  cut off at the maximum length"))
