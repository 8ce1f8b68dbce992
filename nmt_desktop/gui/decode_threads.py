"""The app's torch thread count for decoding: core/decoding/threads.py's policy (the usable cores less the
cores other processes keep busy, at most 4), applied by `TranslateWorker.run` on its worker thread at the
start of every job (the Translate tab's text, File > Translate file…'s document; issue 42).

The policy itself, with the app's own decoding taken out of the load (`OwnLoad`: the app lives for hours,
and a minute of its own two-thread decoding would otherwise halve the next job's threads), lives in
core/decoding/threads.py, which the CLI follows too. torch's intra-op thread count is per OS thread under
OpenMP (`torch.set_num_threads` on the GUI thread would not reach a worker thread that has already decoded),
so it is set on the thread that decodes; the document worker reads it again between batches.

The user's word wins: OMP_NUM_THREADS, where set, leaves torch's own choice (`decoding_threads` says None). The app has no
decoding threads setting; the Train tab's "CPU threads" is the training child process's, never touched here.
"""

from __future__ import annotations

from nmt_desktop.core.decoding.threads import LOAD_WINDOW_S, OwnLoad, decoding_threads, end_decoding, start_decoding

__all__ = ["LOAD_WINDOW_S", "OwnLoad", "decoding_threads", "end_decoding", "start_decoding"]
