"""A steady training ETA from the run's step events, without Qt.

The trainer's own `eta_s` divides the steps left by the speed of the last reporting window, and the window
after an evaluation also counts the evaluation's pause, so the estimate swung by several times between
events. Here the seconds per step are an exponential moving average over the recent steps, measured on the
event's `elapsed_s` (training time, which leaves the evaluations out); a sample far slower than the average
(a pause the clock still saw) is capped, so one outlier moves the estimate only a little.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HALF_LIFE_STEPS = 150.0  # the average forgets a step's speed over about this many later steps
OUTLIER_FACTOR = 2.0  # a sample counts at most this many times the current average


@dataclass
class EtaEstimator:
    """Feed `update(step, elapsed_s, total_steps)` with each step event; it returns seconds left or None."""

    half_life_steps: float = HALF_LIFE_STEPS
    sec_per_step: float | None = None
    _last: tuple[int, float] | None = None  # (step, elapsed_s) of the previous event
    _steps_seen: int = 0

    def reset(self) -> None:
        """A new run: forget the speed too."""
        self.sec_per_step = None
        self._last = None
        self._steps_seen = 0

    def restart(self) -> None:
        """The run resumed in a new process: keep the speed, measure from the next event."""
        self._last = None

    def update(self, step: int, elapsed_s: float | None, total_steps: int | None,
               fallback_eta_s: float | None = None) -> float | None:
        """Seconds left after `step` (`fallback_eta_s`, the trainer's own, until two events gave a speed)."""
        if elapsed_s is not None:
            last, self._last = self._last, (step, float(elapsed_s))
            if last is not None and step > last[0] and elapsed_s >= last[1]:
                self._add(step - last[0], (elapsed_s - last[1]) / (step - last[0]))
        if self.sec_per_step is None or not total_steps:
            return fallback_eta_s
        return max(0, total_steps - step) * self.sec_per_step

    def _add(self, steps: int, sample: float) -> None:
        self._steps_seen += steps
        if self.sec_per_step is None:
            self.sec_per_step = sample
            return
        sample = min(sample, OUTLIER_FACTOR * self.sec_per_step)
        weight = 1.0 - math.pow(0.5, steps / self.half_life_steps)  # a window of many steps counts more
        weight = max(weight, steps / self._steps_seen)  # the first windows: their plain mean, not the first alone
        self.sec_per_step += weight * (sample - self.sec_per_step)
