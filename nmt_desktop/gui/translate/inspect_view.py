"""What "Inspect this translation" shows: the given tokens coloured by how probable the model found each,
the places where the model's first choice is another token marked with that choice, a legend, and the
sentence scores of the given translation and of the model's own translation of the same source.

Both scores are teacher-forced log-probabilities from the same model (core/decoding/scoring.py), so the
two numbers compare like for like. Colours are five probability bands, green (the model was sure of this
token) to red (it hardly expected it), drawn behind the theme's text colour; each band pair keeps WCAG AA
contrast in the light and the dark theme, and the percentages are in the legend and every token's tooltip,
so colour is never the only cue.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QUrl, Signal, SignalInstance
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QTextBrowser, QToolButton, QVBoxLayout, QWidget

from nmt_desktop.core.analysis.words import display_piece, display_pieces, word_starts
from nmt_desktop.core.decoding.scoring import Disagreement, disagreements

from .. import theme
from ..formatting import format_prob
from ..labels import fit_width, set_fitting_text
from ..theme import Theme
from .inspect_pairs import InspectResult, TextScore
from .trust import KIND_WORDS, Mark, target_marks

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Hypothesis

BAND_FLOORS = (0.9, 0.5, 0.2, 0.05, 0.0)  # lower bound of each probability band, high to low
BAND_LABELS = ("≥90%", "50–90", "20–50", "5–20", "<5%")
LIGHT_BANDS = ("#bbf7d0", "#d9f99d", "#fef08a", "#fed7aa", "#fecaca")  # green -> red behind dark text
DARK_BANDS = ("#14532d", "#3f6212", "#713f12", "#7c2d12", "#7f1d1d")  # green -> red behind light text
LINK = "given:"  # a token's anchor: "given:PAIR:INDEX"
GIVEN = "your translation (inspected)"  # what the attention views show, in the words they say it
MODEL = "the model's translation (scored)"



def bands(colours: Theme) -> tuple[str, ...]:
    """The five band colours for the theme (light or dark)."""
    return DARK_BANDS if colours.dark else LIGHT_BANDS


def band(prob: float) -> int:
    """The band (0 = most probable) a probability falls in."""
    return next(i for i, floor in enumerate(BAND_FLOORS) if prob >= floor or i == len(BAND_FLOORS) - 1)


def model_choice(d: Disagreement) -> str:
    """The mark of a disagreement: "model: ·Katze 62%"."""
    return f"model: {display_piece(d.preferred)} {format_prob(d.preferred_prob)}"


def token_index(url: QUrl | str) -> tuple[int, int] | None:
    """The pair and target position of a token anchor ("given:1:3" -> (1, 3)), None for anything else."""
    text = url.toString() if isinstance(url, QUrl) else url
    parts = text[len(LINK):].split(":") if text.startswith(LINK) else []
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 and all(p.isdigit() for p in parts) else None


def result_html(result: InspectResult, colours: Theme | None = None, estimates: list | None = None) -> str:
    """Every pair's chips: a line of the source per paragraph, the sentences of a line side by side; `estimates`
    (the quality estimate of each pair's given translation, trust.py) marks its flagged words."""
    lines: dict[int, list[str]] = {}
    for p, pair in enumerate(result.pairs):
        est = estimates[p] if estimates and p < len(estimates) else None
        lines.setdefault(pair.line, []).append(tokens_html(pair.given.best, colours, p,
                                                           target_marks(est) if est is not None else None))
    body = "".join(f"<p>{' '.join(chips)}</p>" for chips in lines.values())
    return f'<div style="font-size:12pt; line-height:165%;">{body}</div>'


def tokens_html(hyp: Hypothesis, colours: Theme | None = None, pair: int = 0,
                flags: dict[int, Mark] | None = None) -> str:
    """The hypothesis' tokens (display form) as chips coloured by probability; a disagreement is underlined
    and followed by the model's choice in superscript; the last piece of a word the quality estimate flags
    (`flags`) by "⚠ kind", the reason in its tooltip. A space (a line break point) only before a word."""
    colours = colours or theme.current()
    fills = bands(colours)
    shown = display_pieces(hyp.tokens)
    starts = word_starts(hyp.tokens)
    marks = {d.index: d for d in disagreements(hyp)}
    out = []
    for i, piece in enumerate(shown):
        prob = math.exp(hyp.token_logprobs[i]) if i < len(hyp.token_logprobs) else 0.0
        flag = (flags or {}).get(i)
        tip = (f"{flag.reason}\n" if flag else "") + f"{piece}: the model gives it {prob:.1%}"
        alts = hyp.alternatives[i] if i < len(hyp.alternatives) else []
        if alts:
            tip += "   ·   its choices: " + ", ".join(f"{display_piece(a.piece)} {format_prob(a.prob)}"
                                                       for a in alts[:5])
        mark = marks.get(i)
        underline = "underline" if mark else "none"
        chip = (f'<a href="{LINK}{pair}:{i}" title="{html.escape(tip, quote=True)}" style="color:{colours.text};'
                f' text-decoration:{underline}; background-color:{fills[band(prob)]};">{html.escape(piece)}</a>')
        if mark:
            choice = html.escape(model_choice(mark)).replace(" ", "&nbsp;")  # one unbreakable mark
            chip += f'<sup style="color:{colours.error};">&nbsp;{choice}</sup>'
        if flag is not None and (i + 1 >= len(shown) or starts[i + 1] or (flags or {}).get(i + 1) != flag):
            word = html.escape(KIND_WORDS.get(flag.kind, flag.kind)).replace(" ", "&nbsp;")
            chip += (f'<sup title="{html.escape(flag.reason, quote=True)}" style="color:{colours.warning};">'
                     f'&nbsp;⚠&nbsp;{word}</sup>')
        out.append((" " if i and starts[i] else "") + chip)
    return "".join(out)


class Legend(QWidget):
    """The colour key: "p:" and a swatch per probability band, green to red (labels, so each is sized exactly)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setToolTip("The model's probability of each token of your translation, green (sure) to red "
                        "(unexpected); hover a token for its exact probability and the model's choices")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(3)
        self.swatches = [QLabel(text) for text in ("p:", *BAND_LABELS)]
        for label in self.swatches:
            font = label.font()
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
            label.setFont(font)
            row.addWidget(label)
        theme.follow(self, self.restyle)

    def restyle(self, colours: Theme) -> None:
        for label, fill in zip(self.swatches[1:], bands(colours)):
            label.setStyleSheet(f"background-color:{fill}; color:{colours.text}; padding:0 3px;")

    def colours(self) -> list[str]:
        """The swatches' background colours, as their style sheets name them."""
        return [label.styleSheet().split(";")[0].split(":")[1] for label in self.swatches[1:]]


def score_text(who: str, score: TextScore, pairs: int = 1) -> str:
    """"Your translation: log-prob -12.18 · perplexity 20.93 · 4 tokens" (", 3 sentences" when several)."""
    sentences = f" in {pairs} sentences" if pairs > 1 else ""
    return f"{who}: log-prob {score.logprob:.2f} · perplexity {score.perplexity:.2f} · {score.tokens} tokens{sentences}"


def summary(result: InspectResult) -> str:
    """One line: how many of the given tokens the model would have chosen otherwise."""
    n, total = len(result.disagreements), sum(len(pair.given.best.tokens) for pair in result.pairs)
    note = f" {result.note}" if result.note else ""
    if n == 0:
        return f"The model's first choice agrees with all {total} tokens.{note}"
    return f"The model's first choice differs at {n} of {total} tokens: underlined, its choice above.{note}"


class InspectView(QWidget):
    """The rendered result: `tokens` (a QTextBrowser of chips), `legend` (the colour key, for the pane's header),
    `summary`, and a row per sentence score (`your_score`, `model_score`) with a checkable "Show" button
    (`show_buttons[GIVEN]`, `show_buttons[MODEL]`) asking for that translation in the attention views
    (`showRequested`). `tokenHovered(pair, i)` / `tokenClicked(pair, i)` name a target position of a pair."""

    tokenHovered = Signal(int, int)
    tokenClicked = Signal(int, int)
    showRequested = Signal(str)  # GIVEN or MODEL

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.result: InspectResult | None = None
        self.estimates: list = []  # the quality estimate of each pair's given translation (trust.py)
        self.tokens = QTextBrowser()
        self.tokens.setOpenLinks(False)
        self.tokens.setOpenExternalLinks(False)
        self.tokens.setPlaceholderText("The inspected tokens appear here.")
        self.tokens.setMinimumHeight(64)
        self.tokens.highlighted.connect(lambda url: self._emit(self.tokenHovered, url))
        self.tokens.anchorClicked.connect(lambda url: self._emit(self.tokenClicked, url))
        self.legend = Legend()
        self.summary = fit_width(QLabel(""))  # a note on pairing may follow
        self.your_score = fit_width(QLabel(""))  # wraps: a long score line never widens the window
        self.model_score = fit_width(QLabel(""))
        self.your_score.setToolTip("Log-probability of your translation (the sum over its tokens, </s> included, "
                                   "and over its sentences, each scored as the Translate tab translates it) and its "
                                   "perplexity, exp(-log-prob / tokens): lower is more expected")
        self.show_buttons: dict[str, QToolButton] = {}
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(2)
        grid.addWidget(self.summary, 0, 0, 1, 2)
        for row, (which, label) in enumerate(((GIVEN, self.your_score), (MODEL, self.model_score)), start=1):
            label.setObjectName("hint")
            button = QToolButton()
            button.setText("Show")
            button.setCheckable(True)
            button.setToolTip(f"Show {which} in the attention grid, the focus view and the Analysis tab")
            button.clicked.connect(lambda _checked=False, w=which: self.showRequested.emit(w))
            self.show_buttons[which] = button
            grid.addWidget(label, row, 0)
            grid.addWidget(button, row, 1)
        grid.setColumnStretch(0, 1)
        self.summary.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.tokens, 1)
        layout.addLayout(grid)
        theme.follow(self, lambda _theme: self._render())

    @property
    def pieces(self) -> list[str]:
        """The shown tokens as they read (display_pieces of the given translation, every pair's in turn)."""
        if self.result is None:
            return []
        return [piece for pair in self.result.pairs for piece in display_pieces(pair.given.best.tokens)]

    def show_result(self, result: InspectResult, estimates: list | None = None) -> None:
        """`estimates`: the quality estimate of each pair's given translation (flags marked, left-out words said)."""
        self.result, self.estimates = result, list(estimates or [])
        self._render()

    def clear(self) -> None:
        self.result, self.estimates = None, []
        self._render()

    def mark_shown(self, which: str) -> None:
        """Check the "Show" button of the translation the attention views show (GIVEN, MODEL; "": neither)."""
        for key, button in self.show_buttons.items():
            button.setChecked(key == which)
            button.setText("Shown" if key == which else "Show")

    def _render(self) -> None:
        has = self.result is not None
        for widget in (self.summary, self.your_score, self.model_score, *self.show_buttons.values()):
            widget.setVisible(has)
        if self.result is None:
            self.tokens.clear()
            return
        result, pairs = self.result, len(self.result.pairs)
        self.tokens.setHtml(result_html(result, estimates=self.estimates))
        left_out = [word for est in self.estimates for word in getattr(est, "untranslated", [])]
        trust = min(self.estimates, key=lambda est: est.qe, default=None)
        trusted = (f" Trust: {trust.trust} (estimated chrF {trust.qe:.0f}"
                   f"{', the least trusted sentence' if len(self.estimates) > 1 else ''})." if trust is not None else "")
        set_fitting_text(self.summary, summary(result) + trusted
                         + (f" Source words that may be left out: {', '.join(left_out)}." if left_out else ""))
        self.your_score.setText(score_text("Your translation", result.score("given"), pairs))
        self.model_score.setText(score_text("Model's translation", result.score("model"), pairs))
        model_text = " ".join(pair.model.text for pair in result.pairs)
        self.model_score.setToolTip(f"The same two numbers for the model's own translation of this source "
                                    f"(from {result.model_source}), scored the same way by the same model: "
                                    f"“{model_text}”")

    def _emit(self, signal: SignalInstance, url: QUrl) -> None:
        where = token_index(url)
        if where is not None:
            signal.emit(*where)
