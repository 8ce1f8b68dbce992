"""Token-budget batching and the exact data position of a training run.

`batches_for_epoch(encoded, budget, seed, epoch)` returns the batches of one epoch: pairs are
shuffled, sorted by length inside pools of about `pool_factor` batches, packed so that
rows * max(src_len, tgt_len) <= budget, and the batch order is shuffled again. The result is a
deterministic function of (data, budget, seed, epoch, pool_factor) (and of the torch version, whose
generator does the shuffling), so a training run's exact place in its data is the
`DataPosition(epoch, batch)`: to resume, rebuild that epoch's batches and continue at index `batch`.
With several processes, `shard_batches(batches, rank, world_size)` gives each rank an equal,
disjoint subset, and the position indexes the rank's shard (the same on every rank).
`iter_batches` walks epochs endlessly from a position.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from nmt_desktop.core.training.corpus_formats import CorpusError
from nmt_desktop.core.training.encoding import EncodedCorpus
from nmt_desktop.core.training.seeding import seeded_generator


@dataclass
class Batch:
    """A padded training batch; rows are right-padded with pad_id."""

    src: Tensor  # (B, S) int64: source tokens (+ </s>)
    tgt_in: Tensor  # (B, T) int64: decoder input, [decoder_start] + tokens
    tgt_out: Tensor  # (B, T) int64: gold next tokens, tokens + [</s>] (tgt_in shifted left by one)
    n_src_tokens: int  # real source positions
    n_tgt_tokens: int  # real target positions (what the loss averages over)
    pair_index: Tensor  # (B,) int64: each row's index in the pairs given to encode_pairs

    @property
    def rows(self) -> int:
        return self.src.shape[0]

    @property
    def padding_fraction(self) -> float:
        """Share of pad positions in `src` and `tgt_out` together."""
        total = self.src.numel() + self.tgt_out.numel()
        return 1.0 - (self.n_src_tokens + self.n_tgt_tokens) / total if total else 0.0

    def to(self, device: torch.device | str, non_blocking: bool = False) -> "Batch":
        move = lambda t: t.to(device, non_blocking=non_blocking)  # noqa: E731
        return dataclasses.replace(self, src=move(self.src), tgt_in=move(self.tgt_in), tgt_out=move(self.tgt_out))


def padding_fraction(batches: Iterable[Batch]) -> float:
    """Share of pad positions over all batches (source and target)."""
    real = total = 0
    for b in batches:
        real += b.n_src_tokens + b.n_tgt_tokens
        total += b.src.numel() + b.tgt_out.numel()
    return 1.0 - real / total if total else 0.0


def collate(encoded: EncodedCorpus, rows: Sequence[int]) -> Batch:
    """Pad the given rows of `encoded` into a Batch."""
    idx = torch.as_tensor(rows, dtype=torch.int64)  # (B,)
    s0, s1 = encoded.src_offsets[idx].tolist(), encoded.src_offsets[idx + 1].tolist()
    t0, t1 = encoded.tgt_offsets[idx].tolist(), encoded.tgt_offsets[idx + 1].tolist()
    src = [encoded.src_ids[a:b] for a, b in zip(s0, s1)]
    tgt_in = [encoded.tgt_ids[a:b - 1] for a, b in zip(t0, t1)]
    tgt_out = [encoded.tgt_ids[a + 1:b] for a, b in zip(t0, t1)]
    pad = encoded.pad_id
    return Batch(
        src=pad_sequence(src, batch_first=True, padding_value=pad).long(),  # (B, S)
        tgt_in=pad_sequence(tgt_in, batch_first=True, padding_value=pad).long(),  # (B, T)
        tgt_out=pad_sequence(tgt_out, batch_first=True, padding_value=pad).long(),  # (B, T)
        n_src_tokens=sum(len(x) for x in src),
        n_tgt_tokens=sum(len(x) for x in tgt_out),
        pair_index=encoded.pair_index[idx],
    )


def plan_batches(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int = 0, epoch: int = 0,
                 pool_factor: float = 100, shuffle: bool = True) -> list[list[int]]:
    """Row indices of each batch of an epoch, such that rows * max(src_len, tgt_len) <= budget.

    shuffle=True: rows are permuted by (seed, epoch), sorted by length inside consecutive pools
    of about `pool_factor` average batches, packed greedily in that order, and the batch order is
    permuted.
    shuffle=False: the same without randomness (pools follow corpus order). pool_factor <= 0
    turns length sorting off. A single pair wider than the budget forms a batch of its own.
    """
    if max_tokens_per_batch < 1:
        raise ValueError(f"max_tokens_per_batch must be >= 1, got {max_tokens_per_batch}")
    n = len(encoded)
    if n == 0:
        return []
    src_len, tgt_len = encoded.src_lengths, encoded.tgt_lengths  # (N,), (N,)
    width = torch.maximum(src_len, tgt_len)  # (N,) padded width each pair needs
    gen = seeded_generator(seed, epoch)
    order = torch.randperm(n, generator=gen) if shuffle else torch.arange(n)  # (N,)
    pool = _pool_size(width, max_tokens_per_batch, pool_factor)
    if pool > 1:
        key = width * (int(src_len.max()) + 1) + src_len  # (N,) by width, then source length
        order = torch.cat([rows[torch.sort(key[rows], stable=True).indices] for rows in order.split(pool)])
    plans = _pack(order.tolist(), width.tolist(), max_tokens_per_batch)
    if shuffle:
        plans = [plans[i] for i in torch.randperm(len(plans), generator=gen).tolist()]
    return plans


def _pool_size(width: Tensor, budget: int, pool_factor: float) -> int:
    """Pairs per sorting pool: pool_factor times the average rows of a batch (1 = no sorting)."""
    if pool_factor <= 0:
        return 1
    rows_per_batch = max(1.0, budget / float(width.float().mean()))
    return max(1, round(pool_factor * rows_per_batch))


def _pack(rows: list[int], widths: list[int], budget: int) -> list[list[int]]:
    """Greedy packing in the given order: close a batch when one more row would exceed the budget."""
    batches, current, current_width = [], [], 0
    for r in rows:
        w = max(current_width, widths[r])
        if current and (len(current) + 1) * w > budget:
            batches.append(current)
            current, w = [], widths[r]
        current.append(r)
        current_width = w
    if current:
        batches.append(current)
    return batches


def make_batches(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int = 0, epoch: int = 0,
                 pool_factor: float = 100, shuffle: bool = True) -> list[Batch]:
    """All batches of one epoch as tensors (see `plan_batches`); deterministic for (seed, epoch)."""
    plans = plan_batches(encoded, max_tokens_per_batch, seed, epoch, pool_factor, shuffle)
    return [collate(encoded, rows) for rows in plans]


class EpochBatches(Sequence[Batch]):
    """The batches of one epoch, padded on access (memory stays at one batch).

    Indexing gives a Batch; slicing gives another EpochBatches (e.g. one rank's shard).
    """

    def __init__(self, encoded: EncodedCorpus, plans: list[list[int]], epoch: int):
        self.encoded, self.plans, self.epoch = encoded, plans, epoch

    def __len__(self) -> int:
        return len(self.plans)

    @overload
    def __getitem__(self, i: int) -> Batch: ...

    @overload
    def __getitem__(self, i: slice) -> "EpochBatches": ...

    def __getitem__(self, i: int | slice) -> "Batch | EpochBatches":
        if isinstance(i, slice):
            return EpochBatches(self.encoded, self.plans[i], self.epoch)
        return collate(self.encoded, self.plans[i])


def batches_for_epoch(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int, epoch: int,
                      pool_factor: float = 100) -> EpochBatches:
    """The shuffled, length-bucketed batches of `epoch`: a pure function of (data, budget, seed,
    epoch, pool_factor), so `DataPosition(epoch, i)` names batch `i` exactly across restarts."""
    return EpochBatches(encoded, plan_batches(encoded, max_tokens_per_batch, seed, epoch, pool_factor), epoch)


def shard_batches(batches: Sequence[Batch], rank: int, world_size: int) -> Sequence[Batch]:
    """Rank `rank`'s share: every world_size-th batch from index `rank`, after dropping the last
    len % world_size batches so every rank gets the same count. Shards are disjoint."""
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"need 0 <= rank < world_size, got rank {rank} and world_size {world_size}")
    usable = len(batches) // world_size * world_size
    return batches[rank:usable:world_size]


@dataclass(frozen=True)
class DataPosition:
    """Exact place in the training data: batch index `batch` of epoch `epoch` (of this rank's shard).

    Save `position.next()` with a checkpoint taken after training on the batch at `position`;
    an index at or past the end of an epoch simply continues with the next epoch.
    """

    epoch: int = 0
    batch: int = 0

    def next(self) -> "DataPosition":
        return DataPosition(self.epoch, self.batch + 1)


def iter_batches(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int,
                 start: DataPosition = DataPosition(), rank: int = 0, world_size: int = 1,
                 pool_factor: float = 100) -> Iterator[tuple[DataPosition, Batch]]:
    """Endless (position, batch) from `start`, epoch after epoch, for one rank."""
    epoch, index = start.epoch, start.batch
    while True:
        batches = shard_batches(batches_for_epoch(encoded, max_tokens_per_batch, seed, epoch, pool_factor),
                                rank, world_size)
        if not batches:
            raise CorpusError(f"epoch {epoch} has no batches for rank {rank} of {world_size}; "
                              f"the training data is too small.")
        for i in range(index, len(batches)):
            yield DataPosition(epoch, i), batches[i]
        epoch, index = epoch + 1, 0
