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


def test_the_cli_default_follows_the_load_between_a_long_jobs_batches(monkeypatch, tiny_translator):
    """A count chosen on an idle machine collapsed once other work started (a book on two threads did not finish
    in 16 minutes): with the default, a document's batches read the policy again; with --threads they never do."""
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.documents.constraints import translate_constrained

    before = torch.get_num_threads()
    load = [0.0]
    seen: list[int] = []
    real = tiny_translator.translate_units

    def recording(*args, **kwargs):
        seen.append(torch.get_num_threads())
        load[0] = 3.5  # other work starts while the first batch decodes
        return real(*args, **kwargs)

    try:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        monkeypatch.setattr(threads, "usable_cores", lambda: 2)
        monkeypatch.setattr(threads, "busy_cores", lambda: load[0])
        monkeypatch.setattr(threads, "_own", threads.OwnLoad(cpu=lambda: 0.0))
        monkeypatch.setattr(threads, "REFRESH_S", 0.0)
        monkeypatch.setattr(tiny_translator, "translate_units", recording)
        units = tiny_translator.units(["red cat runs", "blue dog sleeps", "red dog runs fast"])
        set_threads(None)
        translate_constrained(tiny_translator, units, [[], [], []], DecodeConfig(), batch_size=1)
        assert seen == [2, 1, 1]  # idle at the start, busy from the second batch on
        threads._following.clear()
        load[0], seen[:] = 0.0, []
        set_threads(1)  # --threads 1: the user's word, never read again
        translate_constrained(tiny_translator, units, [[], [], []], DecodeConfig(), batch_size=1)
        assert seen == [1, 1, 1]
    finally:
        threads._following.clear()
        torch.set_num_threads(before)
