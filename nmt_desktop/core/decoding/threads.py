"""How many torch threads a decoding process uses when the user does not say (`--threads` overrides).

torch's own default is one thread per core. On a 2-core machine with other work running, that default
oversubscribes the cores: the threads of one matrix multiplication wait for each other at every barrier
while the scheduler hands their cores to the other processes, and a document that took 9 s idle took
112 s beside two busy processes (19 s with `--threads 1`; issue 42, benchmarks/RESULTS.md "Threads under
contention"). The policy: the cores this process may run on less the cores the rest of the machine keeps busy (the
1-minute load average, rounded), at most 4 (decoding small models gains little beyond), at least 1.
The load is read once, when the process starts decoding; OMP_NUM_THREADS, where set, is the user's word.
"""

from __future__ import annotations

import os

MAX_THREADS = 4


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def busy_cores() -> float:
    """The 1-minute load average: how many cores other processes keep busy (0 where the OS has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def chosen_threads() -> int | None:
    """The default for this process: None (torch's own) where OMP_NUM_THREADS says it, else `default_threads`."""
    return None if os.environ.get("OMP_NUM_THREADS", "").strip() else default_threads()


def default_threads(cores: int | None = None, load: float | None = None) -> int:
    """The cores not busy with other work (cores less the rounded load), at most MAX_THREADS, at least 1."""
    cores = usable_cores() if cores is None else cores
    load = busy_cores() if load is None else load
    return max(1, min(MAX_THREADS, cores - int(load + 0.5)))
