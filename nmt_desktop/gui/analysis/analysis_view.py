"""`AnalysisView`: what every page of the Analysis tab answers to, so the panel and the headless screenshot
can drive each one through its registry entry (`registry.py`) instead of wiring it by hand.

A mixin with defaults rather than a `typing.Protocol`: most views need only one or two of these calls (head
statistics never sees the translator; the beam tree only the source of a translation), and a Protocol would
make each of them spell out the rest as no-ops. Not an `abc.ABC` either: its metaclass clashes with Qt's.
It goes after the Qt base (`class View(QWidget, AnalysisView)`, `class View(JobView, AnalysisView)`) so that
a `JobView`'s own `shutdown` and `running` come first in the method order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation


class AnalysisView:
    """One page of the Analysis tab. `key` (`gui --analysis-view KEY`) and `title` (its tab) are given by its
    registry entry when the panel builds it, so each is spelt once, in the registry."""

    key: str = ""
    title: str = ""

    def set_translator(self, translator: Translator | None, card: dict[str, Any] | None = None) -> None:
        """The loaded model (None: none) and its card (what it recommends, e.g. its alignment reading)."""

    def set_translation(self, translation: Translation, cfg: DecodeConfig | None = None) -> None:
        """The translation to analyse (decoded with attention, or a scored one) and the settings it was
        decoded with."""

    def shutdown(self) -> None:
        """Stop the view's worker thread, if it has one: the window is closing."""

    @property
    def running(self) -> bool:
        """A job of the view's own under way; the headless screenshot waits for it before the PNG."""
        return False
