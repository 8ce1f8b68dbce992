"""Trust signals under a finished translation: `core.analysis.quality.estimate_translation` of each sentence, run
on a worker thread once the translation has finished (never while it streams: it costs a few forward passes), shown
as one line under the translation, flagged target words marked in the output, and the source words that look
left out marked in the source box.

Why a job of its own: the estimate runs after `translationDone`, and a new request, a new model or an edited
source makes it stale; `TrustLine` is a `JobView`, so such a result is dropped by the request id, and its inputs
(translator, translations) are checked again when it lands. Every sentence is checked (issue 41: the first 40
only, unsaid, before), one at a time, the line counting them ("12 of 90 sentences"); a superseded check stops
between sentences. Cost on the bundled en-de model (benchmarks/trust_line_cost.py): 85-120 ms a sentence on one
loaded core, 8-11 s for 90 sentences, two to three times their beam-4 translation: fine in the background.

Colours: a background per kind of flag behind the theme's text colours (AA contrast in the light and the dark
theme, tests/gui/translate/test_trust.py), underlined, and the reason in every flagged token's tooltip, so colour
is never the only cue.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QWidget

from .. import theme
from ..job_view import JobView
from ..labels import fit_width

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.decoding.translator import Translator

    from .document_model import TranslationDocument

log = logging.getLogger("nmt_desktop.gui.translate.trust")
KIND_WORDS = {"doubted": "doubted", "untranslated": "possibly left out", "unsupported": "not supported by the source",
              "repeated": "repeated"}
# (light, dark) backgrounds per kind, behind the theme's text, warning and error colours (AA in both themes)
FLAG_BACKGROUNDS = {"doubted": ("#fde68a", "#713f12"), "unsupported": ("#fce7f3", "#831843"),
                    "repeated": ("#ede9fe", "#4c1d95"), "untranslated": ("#ffe4cc", "#7c2d12")}


def estimator() -> Callable[[Any, Any], Any] | None:
    """`estimate_translation`, or None while the core has none (the line then stays hidden)."""
    try:
        from nmt_desktop.core.analysis.quality import estimate_translation
    except ImportError:
        return None
    return estimate_translation


def estimate_pairs(translator: Any, translations: Sequence[Translation]) -> list[Any]:
    """The quality estimate of each translation (worker thread), [] without an estimator; an estimate that fails
    is left out (logged): the inspection it accompanies is still shown."""
    estimate = estimator()
    if estimate is None:
        return []
    try:
        return [estimate(translator, t) for t in translations]
    except Exception:  # noqa: BLE001 - a note beside the scores, never the reason an inspection fails
        log.exception("quality estimate of an inspected translation failed")
        return []


def flag_background(kind: str, dark: bool) -> str:
    light, dim = FLAG_BACKGROUNDS.get(kind, FLAG_BACKGROUNDS["doubted"])
    return dim if dark else light


@dataclass(frozen=True)
class Mark:
    """A flagged word as a token of the output shows it: its kind and the sentence for the tooltip."""

    kind: str
    reason: str


def target_marks(estimate: Any) -> dict[int, Mark]:
    """Piece index (into the translation's target tokens) -> the mark of its flagged word (target flags only)."""
    by_word: dict[int, list[Any]] = {}
    for flag in sorted(getattr(estimate, "flags", []), key=lambda f: -getattr(f, "strength", 0.0)):
        if flag.side == "target" and 0 <= flag.word < len(estimate.target_groups):
            by_word.setdefault(flag.word, []).append(flag)
    marks: dict[int, Mark] = {}
    for word, flags in by_word.items():  # the strongest flag's colour; every flag's reason, strongest first
        reason = "\n".join(f"⚠ {KIND_WORDS.get(f.kind, f.kind)}: {f.reason}" for f in flags)
        for piece in estimate.target_groups[word]:
            marks[piece] = Mark(flags[0].kind, reason)
    return marks


MAX_TIP_FLAGS = 30  # flags listed in the line's tooltip; more are counted (a tooltip taller than the screen)


def flag_lines(estimates: Sequence[Any]) -> list[str]:
    """The flags, one line each, for the trust line's tooltip: the first MAX_TIP_FLAGS, the rest counted."""
    many = len(estimates) > 1
    lines = []
    for i, est in enumerate(estimates):
        for flag in est.flags:
            where = f"sentence {i + 1}, " if many else ""
            lines.append(f"{where}{flag.side} “{flag.text}” ({KIND_WORDS.get(flag.kind, flag.kind)}): {flag.reason}")
    if len(lines) > MAX_TIP_FLAGS:
        return lines[:MAX_TIP_FLAGS] + [f"… and {len(lines) - MAX_TIP_FLAGS} more flagged words (underlined)"]
    return lines


def trust_summary(estimates: Sequence[Any]) -> str:
    """One line: the estimate's own summary; of several sentences, the least trusted one's, counted."""
    if not estimates:
        return ""
    if len(estimates) == 1:
        return estimates[0].summary
    worst = min(range(len(estimates)), key=lambda i: estimates[i].qe)
    return f"Sentence {worst + 1} of {len(estimates)} (the least trusted): {estimates[worst].summary}"


SUMMARY_CHARS = 70  # about a line of the output pane in a small window: longer becomes a count


def one_line(summary: str, estimates: Sequence[Any]) -> str:
    """The summary when it fits SUMMARY_CHARS, else its trust part and the flags counted ("… · 12 flagged: hover
    for the list", every flag with its reason in the tooltip): a wrapped list of words pushed the notes under the
    translation over it in a small window."""
    if len(summary) <= SUMMARY_CHARS:
        return summary
    head = summary.split(" · ")[0]
    left = [word for est in estimates for word in getattr(est, "untranslated", [])]
    total = sum(len(getattr(est, "flags", [])) for est in estimates)
    shorter = [f"{head} · may leave out: {', '.join(left)}" + (" · more: hover" if total > len(left) else "")] if left else []
    for line in shorter + [f"{head} · {total} flagged: hover for the list" if total else head]:
        if len(line) <= SUMMARY_CHARS:
            return line
    return head


def checking_text(done: int, total: int) -> str:
    """The line while the check runs: "Checking the translation… 12 of 90 sentences" (one sentence: no count)."""
    return "Checking the translation…" + (f" {done} of {total} sentences" if total > 1 else "")


class TrustLine(JobView):
    """The line under the translation (objectName "hint", "warning" for low trust; hidden when empty) and the
    estimates of the request shown (`estimates`: one per finished unit, best hypothesis). `estimated` is emitted
    once they are in, so the panel marks the output; a new request (`clear_line`) hides it."""

    failure = "No trust estimate"
    estimated = Signal(object)  # list of QualityEstimate, one per unit
    progressed = Signal(object, int, int)  # (the job's stop event, sentences checked, of how many), worker thread

    def __init__(self, parent: QWidget | None = None):
        super().__init__("trust-worker", parent)
        self.status = fit_width(QLabel(""))
        self.status.setObjectName("hint")
        self.estimates: list[Any] = []
        self.translations: list[Translation] = []
        self._stop = threading.Event()  # set: the check under way is superseded (stops between sentences)
        self.progressed.connect(self._show_progress)
        from PySide6.QtWidgets import QVBoxLayout

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        self.hide()

    def estimate(self, translator: Translator | None, translations: Sequence[Translation],
                 still_current: Callable[[], bool]) -> int:
        """Estimate every finished unit's translation on the worker thread, one at a time, counted on the line;
        the result is shown only if `still_current()` (the same model and request) when it lands. Returns the
        request id (0: none)."""
        self.clear_line()
        estimate = estimator()
        units = [t for t in translations if t is not None and t.target_ids]
        if estimate is None or translator is None or not units:
            return 0
        stop = self._stop = threading.Event()

        def job() -> list[Any] | None:
            estimates = []
            for translation in units:
                if stop.is_set():
                    return None  # superseded: its result would be dropped anyway
                estimates.append(estimate(translator, translation))
                self.progressed.emit(stop, len(estimates), len(units))
            return estimates

        def done(estimates: list[Any] | None) -> None:
            if estimates is not None and still_current():
                self.show_estimates(units, estimates)

        return self.run_job(job, done, checking_text(0, len(units)))

    def _show_progress(self, stop: threading.Event, done: int, total: int) -> None:
        if stop is self._stop and self.running and done < total:
            self.show_status(checking_text(done, total))

    def forget_job(self) -> None:
        """Drop the check under way and stop it at the next sentence."""
        self._stop.set()
        super().forget_job()

    def show_status(self, text: str) -> None:
        self._set_line(text, "warning" if text.startswith(self.failure) else "hint", "")

    def show_estimates(self, translations: list[Translation], estimates: list[Any]) -> None:
        self.translations, self.estimates = list(translations), list(estimates)
        low = any(getattr(e, "trust", "") == "low" for e in estimates)
        details = "\n".join(flag_lines(estimates))
        self._set_line(one_line(trust_summary(estimates), estimates), "warning" if low else "hint",
                       "Quality estimate of the translation (no reference needed): flagged words are underlined "
                       "in the translation, words that look left out in the source." + (f"\n\n{details}" if details
                                                                                          else ""))
        self.estimated.emit(self.estimates)

    def _set_line(self, text: str, name: str, tip: str) -> None:
        if self.status.objectName() != name:
            self.status.setObjectName(name)
            self.status.style().polish(self.status)
        self.status.setText(text)
        self.status.setToolTip(tip)
        self.setVisible(bool(text))

    def clear_line(self, *_: object) -> None:
        """A new request or model: the estimate under way is dropped, the line and the marks cleared."""
        self.forget_job()
        had = bool(self.estimates)
        self.translations, self.estimates = [], []
        self._set_line("", "hint", "")
        if had:
            self.estimated.emit([])

    def marks_for(self, document: TranslationDocument) -> dict[int, dict[int, Mark]]:
        """Unit index -> piece index -> mark, for the units whose shown tokens are the estimated translation's."""
        out: dict[int, dict[int, Mark]] = {}
        for ui, unit in enumerate(document.units):
            for translation, est in zip(self.translations, self.estimates):
                if unit.translation is translation and [s.piece for s in unit.steps if not s.is_eos] == \
                        [p for p in translation.target_tokens if p != "</s>"]:
                    out[ui] = target_marks(est)
        return out


def mark_source(editor: QPlainTextEdit, sentences: Sequence[tuple[int, str, Any]]) -> int:
    """Underline (wavy, on the flag's colour) in the source box the source words the estimates flag (left out)
    within each sentence: `sentences` holds (line of the source, the sentence's text, its estimate), in order.
    Returns how many were marked; cleared by `clear_source_marks` (the text changed, a new request)."""
    text, look = editor.toPlainText(), theme.current()
    lines = text.split("\n")
    starts = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines))]
    selections, searched_to = [], {}
    for line, sentence, est in sentences:
        if est is None or not 0 <= line < len(lines):
            continue
        at = lines[line].find(sentence, searched_to.get(line, 0))
        if at < 0:
            continue
        searched_to[line] = at + len(sentence)
        base = starts[line] + at
        for flag in est.flags:
            found = _occurrence(sentence, est, flag) if flag.side == "source" and flag.text.strip() else None
            if found is None:
                continue
            selection = QTextEdit.ExtraSelection()
            cursor = QTextCursor(editor.document())
            cursor.setPosition(base + found[0])
            cursor.setPosition(base + found[1], QTextCursor.KeepAnchor)
            selection.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(flag_background(flag.kind, look.dark)))
            fmt.setForeground(QColor(look.text))
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(QColor(look.error))
            selection.format = fmt
            selections.append(selection)
    editor.setExtraSelections(selections)
    return len(selections)


def _occurrence(sentence: str, est: Any, flag: Any) -> tuple[int, int] | None:
    """Where in `sentence` the flagged source word is: its k-th occurrence when k earlier words read the same
    ("the" of "the red hat", not the sentence's first "The")."""
    norm = flag.text.strip().lstrip("▁").lower()
    words = list(getattr(est, "source_words", []))
    k = sum(w.strip().lstrip("▁").lower() == norm for w in words[:flag.word]) if flag.word <= len(words) else 0
    found = list(re.finditer(rf"(?<!\w){re.escape(norm)}(?!\w)", sentence, re.IGNORECASE))
    if not found:
        return None
    match = found[min(k, len(found) - 1)]
    return match.start(), match.end()


def clear_source_marks(editor: QPlainTextEdit) -> None:
    if editor.extraSelections():
        editor.setExtraSelections([])
