"""``DistributedSampler`` (``torch.utils.data.distributed``): each of ``num_replicas`` processes reads its own
share of the dataset. tinyattn trains in one process, so the useful case is ``num_replicas=1, rank=0``,
which gives every index once, as a plain sampler does (in order with ``shuffle=False``); several replicas
split the indices as PyTorch does, so the partition can be looked at and tested.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ... import distributed
from ...tensor import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Replica ``rank``'s indices: every ``num_replicas``-th one of the (shuffled, if ``shuffle``) order, starting
    at ``rank``. The order is padded by repeating its start (or, with ``drop_last``, cut) to a multiple of
    ``num_replicas``, so every replica gets ``len(self)`` indices. The shuffle is seeded by ``seed + epoch``:
    call ``set_epoch(epoch)`` before each pass for a new order (without it, every pass repeats the first)."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            if not distributed.is_available():
                raise RuntimeError("Requires distributed package to be available (tinyattn runs in one process: "
                                   "pass num_replicas=1, rank=0)")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = -(-(n - num_replicas) // num_replicas)  # ceil: what is left after cutting the tail
        else:
            self.num_samples = -(-n // num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            order = Generator().manual_seed(self.seed + self.epoch).rng.permutation(n).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        elif order:
            while len(order) < self.total_size:  # pad by repeating the order's start, as many times as needed
                order += order[:self.total_size - len(order)]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
