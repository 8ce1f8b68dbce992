"""What the Translate tab shows, without widgets: the units of the text being translated, what each
has streamed and its finished translation, and which unit and hypothesis are shown.

The panel feeds it the worker's signals (`begin`, `add_step`, `finish_unit`, `finish`), a Stop (`stop`) and
the user's choices (`show`, `show_hypothesis`); the widgets draw from it. No Qt here, so it is tested and
reasoned about as plain data.

What it holds of a unit is always one hypothesis: while beam search streams, the best one's own steps
(`Step.shown_after`), never each position's best token from different beams; once the unit is finished, its
final translation. A Stop keeps the finished units only: the cut unit's partial hypothesis is dropped, and
`StopReport` says which unit was cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from nmt_desktop.core.analysis.words import join_pieces

if TYPE_CHECKING:
    from nmt_desktop.core.analysis.coverage import CoverageWarning
    from nmt_desktop.core.decoding.results import Unit
    from nmt_desktop.core.decoding.results import Step, Translation


@dataclass
class UnitProgress:
    """How far the Translate tab has got with one core `Unit` (a sentence of a line): the steps streamed so
    far, then its `Translation`. Not another kind of unit: it holds the unit, and `text` / `source_tokens`
    are the unit's."""

    unit: Unit
    steps: list[Step] = field(default_factory=list)  # the streamed hypothesis'; once finished, the shown one's
    translation: Translation | None = None
    cut: bool = False  # a Stop came while it was decoding: its partial hypothesis was dropped

    @property
    def text(self) -> str:
        return self.unit.text

    @property
    def source_tokens(self) -> list[str]:
        return self.unit.source_tokens

    def step(self, index: int) -> Step | None:
        return next((s for s in self.steps if s.index == index), None)

    def output_text(self) -> str:
        """The finished translation, else the pieces streamed so far."""
        if self.translation is not None:
            return self.translation.text
        return join_pieces([s.piece for s in self.steps if not s.is_eos])


@dataclass(frozen=True)
class StopReport:
    """What a Stop left: `finished` of `total` units translated; `cut`: the unit it interrupted (None: it came
    between units)."""

    finished: int
    total: int
    cut: int | None = None

    def message(self) -> str:
        """One sentence for the status bar and the output pane."""
        if self.total == 1 and self.cut is not None:
            return "Stopped: the sentence was cut before it was finished, so no translation is shown"
        done = f"Stopped: {self.finished} of {self.total} sentence{'s' * (self.total != 1)} translated"
        if self.cut is None:
            return done
        return f"{done}; sentence {self.cut + 1} was cut and is not shown"


class TranslationDocument:
    """The units of the request shown, their steps and translations, and the selection."""

    def __init__(self) -> None:
        self.units: list[UnitProgress] = []
        self.shown = -1  # index of the unit shown in the attention view, -1: none
        self.hypothesis = 0  # row of the shown unit's n-best list
        self.coverage: list[list[CoverageWarning]] = []  # per finished unit (best hypothesis)
        self.eos_id: int | None = None

    def begin(self, units: Sequence[Unit], eos_id: int | None = None) -> None:
        self.units = [UnitProgress(u) for u in units]
        self.shown, self.hypothesis, self.coverage, self.eos_id = -1, 0, [], eos_id

    def clear(self) -> None:
        self.begin([])

    def add_step(self, index: int, step: Step) -> bool:
        """Record a streamed step: the unit's steps become the hypothesis it ends (`Step.shown_after`: where beam
        search's best hypothesis changed, that one's own steps). False if it belongs to no unit (or to a
        finished one)."""
        if not 0 <= index < len(self.units) or self.units[index].translation is not None:
            return False
        self.units[index].steps = step.shown_after(self.units[index].steps)
        return True

    def finish_unit(self, index: int, translation: Translation) -> bool:
        """Unit `index` is decoded: its steps become those of its final best hypothesis (beam search streamed
        the best hypothesis of each moment, not necessarily the final one). False for no such unit."""
        if not 0 <= index < len(self.units):
            return False
        unit = self.units[index]
        unit.translation, unit.cut = translation, False
        unit.steps = translation.best.steps(self.eos_id)
        return True

    def finish(self, translations: Sequence[Translation]) -> None:
        """Every unit's final translation."""
        for index, translation in enumerate(translations):
            self.finish_unit(index, translation)

    def stop(self) -> StopReport:
        """A Stop: every unfinished unit's partial hypothesis is dropped (what shows and what is copied are
        finished sentences only); the first unfinished unit that had streamed is marked `cut`."""
        cut = next((i for i, u in enumerate(self.units) if u.translation is None and u.steps), None)
        for unit in self.units:
            if unit.translation is None:
                unit.steps = []
        if cut is not None:
            self.units[cut].cut = True
        return StopReport(sum(u.translation is not None for u in self.units), len(self.units), cut)

    def current(self) -> UnitProgress | None:
        return self.units[self.shown] if 0 <= self.shown < len(self.units) else None

    def show_hypothesis(self, row: int) -> bool:
        """Show n-best row `row` of the current (finished) unit: its steps become that hypothesis'."""
        unit = self.current()
        if unit is None or unit.translation is None or not 0 <= row < len(unit.translation.nbest):
            return False
        self.hypothesis = row
        unit.steps = unit.translation.nbest[row].steps(self.eos_id)
        return True

    def least_certain_step(self, index: int) -> Step | None:
        """The step of unit `index` with the lowest probability that has alternatives (EOS aside)."""
        candidates = [s for s in self.units[index].steps if s.alternatives and not s.is_eos]
        return min(candidates, key=lambda s: s.logprob) if candidates else None

    def diffuse_tokens(self) -> set[tuple[int, int]]:
        """(unit, target index) of the best hypotheses' diffuse tokens, while best hypotheses are shown."""
        if self.hypothesis > 0:
            return set()
        return {(ui, w.index) for ui, ws in enumerate(self.coverage) for w in ws if w.kind == "diffuse"}

    def lines(self) -> list[list[int]]:
        """Unit indices per line of the text, blank lines (no units) included up to the last unit's line."""
        out: list[list[int]] = [[] for _ in range(max((u.unit.line for u in self.units), default=-1) + 1)]
        for i, u in enumerate(self.units):
            out[u.unit.line].append(i)
        return out

    def output_text(self) -> str:
        """The translation as plain text: a line per source line, its sentences' translations joined by a space."""
        return "\n".join(" ".join(t for t in (self.units[i].output_text() for i in line) if t) for line in self.lines())
