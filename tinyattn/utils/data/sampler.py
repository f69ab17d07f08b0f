"""Samplers: the order in which a DataLoader visits a dataset's indices (``torch.utils.data.sampler``)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ... import checks
from ...tensor import rng_of  # generator=: None (manual_seed's), a tinyattn.Generator or a numpy Generator


class Sampler:
    """Yields dataset indices; ``len()`` says how many."""

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of the indices, new on every pass.

    Without replacement: a permutation (num_samples > len repeats whole permutations, then part of one).
    With replacement: num_samples independent uniform draws (default len(data_source)).
    Indices are drawn as the pass goes (a permutation, or a chunk of draws, at a time), so an endless
    sampler such as ``RandomSampler(ds, replacement=True, num_samples=10**10)`` costs no memory up front.
    """

    _CHUNK = 1024  # draws made at once with replacement: one NumPy call per chunk, not per index

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: np.random.Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = None if num_samples is None else checks.positive_int("num_samples", num_samples, "RandomSampler")
        rng_of(generator)  # check it now

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, rng, left = len(self.data_source), rng_of(self.generator), self.num_samples
        if n == 0:
            return
        while left > 0:
            if self.replacement:
                block = rng.integers(0, n, size=min(left, self._CHUNK))
            else:
                block = rng.permutation(n)[:left]
            left -= len(block)
            yield from block.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        self.sampler = sampler
        self.batch_size = checks.positive_int("batch_size", batch_size, "BatchSampler")
        self.drop_last = bool(drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
