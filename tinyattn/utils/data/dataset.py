"""Datasets: ``len(ds)`` and ``ds[i]``; IterableDataset (a stream), TensorDataset, Subset and random_split
(``torch.utils.data.dataset``)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...tensor import Tensor, rng_of


class Dataset:
    """Subclass and write ``__getitem__(i)`` (one example) and ``__len__()``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(self, index)")


class IterableDataset(Dataset):
    """A stream of examples: subclass and write ``__iter__`` (and ``__len__`` if the length is known).
    A DataLoader batches the examples in the order they come: no sampler, no shuffle (as in PyTorch)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__(self)")


class TensorDataset(Dataset):
    """Examples are rows: ``TensorDataset(X, Y)[i] == (X[i], Y[i])``; every tensor has the same first dim."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor) or t.ndim == 0:
                what = "a 0-d tensor" if isinstance(t, Tensor) else f"a {type(t).__name__}"
                raise TypeError(f"TensorDataset: tensors[{i}] is {what}; expected a Tensor whose first dim "
                                "counts the examples (wrap arrays with tinyattn.tensor)")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) > 1:
            raise ValueError(f"TensorDataset: size mismatch between tensors: first dims {sizes} must all be equal")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The examples of ``dataset`` at ``indices``, in that order (what random_split returns)."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: np.random.Generator | None = None) -> list[Subset]:
    """Split into non-overlapping random Subsets of the given lengths (ints summing to len(dataset)) or
    fractions (summing to 1: each gets floor(f * n), and the leftover examples go one each to the
    first splits, as in PyTorch)."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) for x in lengths) and math.isclose(sum(lengths), 1.0) and sum(lengths) <= 1:
        if any(not 0 <= x <= 1 for x in lengths):
            raise ValueError(f"random_split: fractions must be in [0, 1], got {lengths}")
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0 for x in lengths):
        raise ValueError(f"random_split: lengths must be ints >= 0 or fractions summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {lengths} sum to {sum(lengths)}, but the dataset has {n} examples")
    order = rng_of(generator).permutation(n).tolist()
    splits, start = [], 0
    for size in lengths:
        splits.append(Subset(dataset, order[start:start + size]))
        start += size
    return splits
