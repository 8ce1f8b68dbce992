"""A steady training ETA from the run's events, without Qt.

The trainer's own `eta_s` divides the steps left by the speed of the last reporting window, and the window
after an evaluation also counts the evaluation's pause, so the estimate swung by several times between
events. Here the seconds per step are an exponential moving average over the recent steps, measured on the
event's `elapsed_s` (training time, which leaves the evaluations out); a sample far slower than the average
(a pause the clock still saw) is capped, so one outlier moves the estimate only a little.

The pauses themselves (evaluating and saving a checkpoint every `eval_every` steps and at the end, the
`checkpoint` event's `pause_s`) are averaged the same way and added once per pause still to come, so the time
left is wall time and does not jump when an evaluation starts or ends. Until the first pause is measured the
estimate is training time only, and `pauses_timed` is False (the tab says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

HALF_LIFE_STEPS = 150.0  # the average forgets a step's speed over about this many later steps
HALF_LIFE_PAUSES = 4.0  # and a pause's length over about this many later pauses
OUTLIER_FACTOR = 2.0  # a sample counts at most this many times the current average


@dataclass
class RunningMean:
    """An exponential moving average whose first samples get their plain mean, with outliers capped."""

    half_life: float
    value: float | None = None
    seen: float = 0.0

    def add(self, sample: float, count: float = 1.0) -> None:
        """`sample` averaged over `count` units (steps or pauses)."""
        self.seen += count
        if self.value is None:
            self.value = sample
            return
        sample = min(sample, OUTLIER_FACTOR * self.value)
        weight = 1.0 - math.pow(0.5, count / self.half_life)  # a window of many steps counts more
        weight = max(weight, count / self.seen)  # the first windows: their plain mean, not the first alone
        self.value += weight * (sample - self.value)


def pauses_left(step: int, total_steps: int, eval_every: int) -> int:
    """Evaluations (and checkpoints) still to come after the step event at `step`: one at each multiple of
    `eval_every` from `step` on (the step's event comes before its evaluation) and one at the last step."""
    if step > total_steps or eval_every <= 0:
        return 0
    at_multiples = total_steps // eval_every - (max(step, 1) - 1) // eval_every
    return at_multiples + (1 if total_steps % eval_every else 0)


@dataclass
class EtaEstimator:
    """Feed `update(step, elapsed_s, total_steps)` with each step event and `add_pause(pause_s)` with each
    checkpoint event; `update` returns seconds left or None. `eval_every` comes from the run's config."""

    half_life_steps: float = HALF_LIFE_STEPS
    eval_every: int = 0  # 0: pauses are not counted
    step_time: RunningMean = field(default_factory=lambda: RunningMean(HALF_LIFE_STEPS))
    pause_time: RunningMean = field(default_factory=lambda: RunningMean(HALF_LIFE_PAUSES))
    _last: tuple[int, float] | None = None  # (step, elapsed_s) of the previous event

    def __post_init__(self) -> None:
        self.step_time.half_life = self.half_life_steps

    @property
    def sec_per_step(self) -> float | None:
        return self.step_time.value

    @property
    def pauses_timed(self) -> bool:
        """True once the estimate counts the evaluations still to come (or there are none to count)."""
        return self.eval_every <= 0 or self.pause_time.value is not None

    def reset(self) -> None:
        """A new run: forget the speed and the pauses too."""
        self.step_time = RunningMean(self.half_life_steps)
        self.pause_time = RunningMean(HALF_LIFE_PAUSES)
        self._last = None

    def restart(self) -> None:
        """The run resumed in a new process: keep the speed, measure from the next event."""
        self._last = None

    def add_pause(self, seconds: float | None) -> None:
        """An evaluation and checkpoint took `seconds` of wall time that `elapsed_s` leaves out."""
        if seconds is not None and seconds >= 0:
            self.pause_time.add(float(seconds))

    def update(self, step: int, elapsed_s: float | None, total_steps: int | None,
               fallback_eta_s: float | None = None) -> float | None:
        """Seconds left after `step` (`fallback_eta_s`, the trainer's own, until two events gave a speed)."""
        if elapsed_s is not None:
            last, self._last = self._last, (step, float(elapsed_s))
            if last is not None and step > last[0] and elapsed_s >= last[1]:
                self.step_time.add((elapsed_s - last[1]) / (step - last[0]), step - last[0])
        if self.sec_per_step is None or not total_steps:
            return fallback_eta_s
        left = max(0, total_steps - step) * self.sec_per_step
        if self.pause_time.value is not None:
            left += pauses_left(step, total_steps, self.eval_every) * self.pause_time.value
        return left
