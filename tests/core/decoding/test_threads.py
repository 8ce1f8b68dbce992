"""The default thread count (issue 42): torch's one thread per core collapsed beside busy processes (an HTML
page 9 s idle, 112 s beside two busy ones, 19 s with --threads 1), so the default is the cores not busy."""

from __future__ import annotations

import pytest
import torch

from nmt_desktop.cli.common import set_threads
from nmt_desktop.core.decoding import threads
from nmt_desktop.core.decoding.threads import MAX_THREADS, default_threads


@pytest.mark.parametrize(("cores", "load", "expected"), [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 2.0, 1), (2, 7.1, 1),  # a busy 2-core machine: one thread
    (8, 0.0, MAX_THREADS), (8, 3.0, MAX_THREADS), (8, 5.2, 3), (8, 12.0, 1), (1, 0.0, 1)])
def test_the_default_is_the_cores_not_busy_at_most_four(cores, load, expected):
    assert default_threads(cores, load) == expected


def test_the_cli_sets_the_default_unless_threads_or_omp_num_threads_say_otherwise(monkeypatch):
    before = torch.get_num_threads()
    try:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        monkeypatch.setattr(threads, "usable_cores", lambda: 2)
        monkeypatch.setattr(threads, "busy_cores", lambda: 3.5)  # two busy processes and more
        torch.set_num_threads(2)
        set_threads(None)
        assert torch.get_num_threads() == 1
        set_threads(2)  # --threads overrides
        assert torch.get_num_threads() == 2
        monkeypatch.setenv("OMP_NUM_THREADS", "2")  # the user's own word: torch's default stays
        set_threads(None)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
