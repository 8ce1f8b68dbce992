"""A quiet one-line hint under a translation when the model is likely out of its depth.

Two signs, both from the core: the input is far longer than the sentences the model was trained on
(`trained_sentence_words`, a statistic of the model card; models without it, such as imported OPUS-MT
models, get no length hint), or most target tokens have diffuse attention (`attention_spread`). The
hint says why and points to better models. It is a muted label, never a dialog. The per-token coverage
warnings shown above it (`show_coverage`) are computed here too: both are notes on a finished translation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from PySide6.QtWidgets import QLabel, QWidget

from nmt_desktop.core.analysis.attention_spread import DIFFUSE_SHARE, diffuse_share
from nmt_desktop.core.analysis.coverage import coverage_warnings
from nmt_desktop.core.formats.model_card import trained_sentence_words

from ..labels import fit_width
from .output_html import coverage_summary

if TYPE_CHECKING:
    from nmt_desktop.core.analysis.coverage import CoverageWarning
    from nmt_desktop.core.decoding.results import Translation

LONG_FACTOR = 1.5  # an input unit longer than this times the training sentences' 99th percentile is "far longer"
BETTER_MODELS = "try an OPUS-MT model from Models > Get models…"


def _units(translations: Sequence[Translation]) -> list[Translation]:
    """The decoded units: a long input split into sentences counts sentence by sentence."""
    return [s for t in translations for s in (t.segments or [t])]


def quality_hint(translations: Sequence[Translation], card: dict[str, Any] | None) -> str:
    """The hint for these finished translations of one request ("" when there is nothing to say)."""
    units = [u for u in _units(translations) if u.source.strip()]
    if not units:
        return ""
    trained = trained_sentence_words(card or {})
    longest = max(len(u.source.split()) for u in units)
    if trained is not None and longest > LONG_FACTOR * trained:
        return (f"Long input ({longest} words): this model was trained on sentences of up to ~{trained} words; "
                f"{BETTER_MODELS}")
    shares = [diffuse_share(u.attention) for u in units if u.attention is not None and u.attention.shape[2]]
    if shares and sum(shares) / len(shares) > DIFFUSE_SHARE:
        already = "opus-mt" in str((card or {}).get("hub_repo", "")).lower()  # no pointer to what is in use
        return ("Diffuse attention: for most words the model looked everywhere in the input at once, a sign "
                "it is unsure" + ("" if already else f"; {BETTER_MODELS}"))
    return ""


def show_coverage(label: QLabel, translations: Sequence[Translation]) -> list[list[CoverageWarning]]:
    """Possible omissions and diffuse target tokens per unit (core.analysis.coverage_warnings, best hypothesis),
    written into `label` (hidden when there are none); returns the warnings."""
    coverage = [coverage_warnings(t) for t in translations]
    line, details = coverage_summary(coverage)  # one short line; the whole list on hover
    label.setText(line)
    label.setToolTip(details)
    label.setVisible(bool(line))
    return coverage


class QualityHint(QLabel):
    """The muted hint line (objectName "hint": the theme's muted colour), hidden when empty; a new request of
    `panel` (a TranslatePanel) clears it."""

    def __init__(self, panel: QWidget):
        super().__init__("")
        panel.translationStarted.connect(self.clear_hint)
        self.setObjectName("hint")
        fit_width(self)  # wraps to the pane's width (it was one line cut at the right edge)
        font = self.font()
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.9))
        self.setFont(font)
        self.hide()

    def show_for(self, translations: Sequence[Translation], card: dict[str, Any] | None) -> None:
        text = quality_hint(translations, card)
        self.setText(text)
        self.setToolTip(text)  # the whole sentence when the pane is too narrow for the line
        self.setVisible(bool(text))

    def clear_hint(self, *_: object) -> None:
        self.setText("")
        self.hide()
