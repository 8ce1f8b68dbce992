"""The Train tab's ETA (gui/train/eta.py): steady under noisy step timings and evaluation pauses."""

from __future__ import annotations

import random

from nmt_desktop.gui.formatting import format_eta
from nmt_desktop.gui.train.eta import EtaEstimator, pauses_left

TOTAL, LOG_EVERY, EVAL_EVERY, SEC_PER_STEP = 3000, 50, 500, 0.2


def step_events(seed: int = 0, pause_in_elapsed: float = 0.0) -> list[dict]:
    """Step events as the trainer writes them: each window's speed varies by +-40%; every evaluation takes 60 s
    that `elapsed_s` leaves out (`pause_in_elapsed`: seconds of it a clock still counts) and that the trainer's
    windowed `eta_s` counts."""
    rng = random.Random(seed)
    events, elapsed, step = [], 0.0, 0
    while step < TOTAL:
        window = 1 if step == 0 else LOG_EVERY - step % LOG_EVERY  # steps 1, 50, 100, ... as log_every has them
        dt = window * SEC_PER_STEP * rng.uniform(0.6, 1.4) + (3.0 if step == 0 else 0.0)  # step 1: warm-up
        pause = 60.0 if step and step % EVAL_EVERY == 0 else 0.0
        step += window
        elapsed += dt + (pause_in_elapsed if pause else 0.0)
        trainer_eta = (TOTAL - step) * (dt + pause) / window
        events.append(dict(event="step", step=step, elapsed_s=round(elapsed, 2), total_steps=TOTAL,
                           eta_s=round(trainer_eta, 1)))
    return events


def estimates(events: list[dict], eta: EtaEstimator) -> list[tuple[int, float | None]]:
    return [(ev["step"], eta.update(ev["step"], ev["elapsed_s"], ev["total_steps"], ev["eta_s"])) for ev in events]


def test_eta_stays_in_a_band_through_noise_and_eval_pauses():
    events = step_events()
    trainer = [ev["eta_s"] / ((TOTAL - ev["step"]) * SEC_PER_STEP) for ev in events[2:-1]]
    assert max(trainer) > 3 and min(trainer) < 0.7  # what the tab showed before: 6:44 -> 49:28 -> 3:08
    for seed in range(5):
        got = estimates(step_events(seed), EtaEstimator())
        assert got[0][1] == step_events(seed)[0]["eta_s"]  # no speed yet: the trainer's own
        for step, eta in got[4:-1]:  # from step 150 on: a few windows measured
            true = (TOTAL - step) * SEC_PER_STEP
            assert 0.7 * true <= eta <= 1.4 * true, (seed, step, eta, true)


def test_a_pause_the_clock_counted_moves_it_little():
    got = estimates(step_events(pause_in_elapsed=30.0), EtaEstimator())
    ratios = [eta / ((TOTAL - step) * SEC_PER_STEP) for step, eta in got[4:-1]]
    assert 0.6 <= min(ratios) and max(ratios) <= 1.6


def test_consecutive_readings_change_smoothly():
    got = [eta for _, eta in estimates(step_events(seed=3), EtaEstimator())[2:-1]]
    for before, after in zip(got, got[1:]):
        assert after <= before * 1.35  # never a jump up by several times between two events


def test_resume_and_reset():
    eta = EtaEstimator()
    estimates(step_events()[:20], eta)
    speed = eta.sec_per_step
    eta.restart()  # a resumed run: its elapsed_s may start again lower; the speed is kept
    assert eta.update(1050, 5.0, TOTAL, 999.0) == (TOTAL - 1050) * speed
    eta.reset()
    assert eta.update(1100, 15.0, TOTAL, 123.0) == 123.0
    assert eta.update(1100, None, None, None) is None
    assert format_eta(eta.update(1150, 25.0, TOTAL)) == format_eta((TOTAL - 1150) * 0.2)


def test_pauses_left_counts_each_evaluation_still_to_come():
    # a step event comes before its step's evaluation; the last step is always evaluated
    assert [pauses_left(s, 40, 10) for s in (0, 1, 10, 11, 40, 41)] == [4, 4, 4, 3, 1, 0]
    assert [pauses_left(s, 45, 10) for s in (35, 40, 41, 45)] == [2, 2, 1, 1]
    assert pauses_left(5, 40, 0) == 0


def test_the_time_left_counts_the_evaluations_once_one_is_timed():
    """Issue 29, point 7: the time left is wall time, the evaluations still to come included, once the first
    evaluation's pause (the checkpoint event's `pause_s`) is known; it does not jump when they happen."""
    eta = EtaEstimator(eval_every=EVAL_EVERY)
    got = []
    for ev in step_events(seed=1):
        got.append((ev["step"], eta.update(ev["step"], ev["elapsed_s"], TOTAL, ev["eta_s"]), eta.pauses_timed))
        if ev["step"] % EVAL_EVERY == 0:
            eta.add_pause(60.0)  # this step's evaluation and checkpoint
    assert [s for s, _, timed in got if not timed] == [s for s, _, _ in got if s <= EVAL_EVERY]
    timed = [(s, v) for s, v, ok in got if ok]
    for step, shown in timed[:-1]:
        true = (TOTAL - step) * SEC_PER_STEP + pauses_left(step, TOTAL, EVAL_EVERY) * 60.0
        assert 0.75 * true <= shown <= 1.3 * true, (step, shown, true)
    values = [v for _, v in timed]
    for a, b in zip(values, values[1:]):
        assert b <= a * 1.2  # going on: never up by more than the speed's noise
