"""Out of GPU memory: find the largest batch that fits, and say so in one sentence.

A step that raises torch.OutOfMemoryError ends the run (after the last checkpoint is written again, so
nothing is lost); `largest_fitting_rows` probes the failed batch with half its rows, a quarter, ... until a
forward and backward pass fits, and the sentence names that size as the `--batch-tokens` to try.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from nmt_desktop.core.training.batching import Batch


def padded_tokens(batch: Batch) -> int:
    """What `--batch-tokens` budgets: rows times the wider side's padded length."""
    return batch.rows * max(batch.src.shape[1], batch.tgt_out.shape[1])


def first_rows(batch: Batch, rows: int, pad_id: int) -> Batch:
    """The batch's first `rows` rows (same padded widths)."""
    return Batch(src=batch.src[:rows], tgt_in=batch.tgt_in[:rows], tgt_out=batch.tgt_out[:rows],
                 n_src_tokens=int((batch.src[:rows] != pad_id).sum()),
                 n_tgt_tokens=int((batch.tgt_out[:rows] != pad_id).sum()),
                 pair_index=batch.pair_index[:rows])


def largest_fitting_rows(fits: Callable[[int], None], rows: int) -> int:
    """The first of rows // 2, rows // 4, ..., 1 for which `fits(r)` raises no torch.OutOfMemoryError (0: none)."""
    r = rows // 2
    while r >= 1:
        try:
            fits(r)
            return r
        except torch.OutOfMemoryError:
            free_cached_memory()
            r //= 2
    return 0


def free_cached_memory() -> None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def out_of_memory_sentence(failed_tokens: int, fit_tokens: int, last: str) -> str:
    """The run's last words: the size that failed, the largest that fit, and that the checkpoint is kept."""
    if fit_tokens <= 0:
        advice = "not even one sentence of it fit (try a smaller --max-tokens, --precision bf16 or a smaller model)"
    else:
        advice = f"the largest batch that fit was {fit_tokens} tokens (try --batch-tokens {fit_tokens})"
    return (f"out of GPU memory at batch {failed_tokens} tokens; {advice}; the last checkpoint {last} is kept, "
            f"continue with --resume")
