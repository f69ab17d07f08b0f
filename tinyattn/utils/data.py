"""Datasets, samplers and the DataLoader, with PyTorch's names and behaviour (``tinyattn.utils.data``).

The three parts, as in PyTorch:
  a Dataset answers ``len(ds)`` and ``ds[i]`` (one example);
  a Sampler yields the order of indices (in order, or shuffled);
  a DataLoader groups those indices into batches, fetches the examples and collates them:
  a batch of ``(x, y)`` pairs becomes ``(X, Y)`` with a new first dim of size batch_size.

All randomness (shuffling, RandomSampler, random_split) comes from the generator seeded by
``tinyattn.manual_seed``, unless a ``numpy.random.Generator`` is passed as ``generator=``. A new
pass over a shuffling DataLoader draws a new order. Everything runs in this process: there are no
worker processes (``num_workers`` is accepted and the loading stays here).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import checks
from ..factories import tensor as _tensor
from ..functions import stack
from ..tensor import Tensor, get_rng

__all__ = ["Dataset", "TensorDataset", "Subset", "Sampler", "SequentialSampler", "RandomSampler", "BatchSampler",
           "DataLoader", "default_collate", "random_split"]


def _rng(generator: np.random.Generator | None) -> np.random.Generator:
    if generator is None:
        return get_rng()
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"generator must be a numpy.random.Generator or None (then tinyattn.manual_seed's), "
                        f"got {type(generator).__name__}")
    return generator


# ----------------------------------------------------------------------------- datasets
class Dataset:
    """Subclass and write ``__getitem__(i)`` (one example) and ``__len__()``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(self, index)")


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
    order = _rng(generator).permutation(n).tolist()
    splits, start = [], 0
    for size in lengths:
        splits.append(Subset(dataset, order[start:start + size]))
        start += size
    return splits


# ----------------------------------------------------------------------------- samplers
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
    """

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: np.random.Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = None if num_samples is None else checks.positive_int("num_samples", num_samples, "RandomSampler")
        _rng(generator)  # check it now

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, rng = len(self.data_source), _rng(self.generator)
        if n == 0:
            return iter([])
        if self.replacement:
            return iter(rng.integers(0, n, size=self.num_samples).tolist())
        full, rest = divmod(self.num_samples, n)
        order = [rng.permutation(n) for _ in range(full)] + [rng.permutation(n)[:rest]]
        return iter(np.concatenate(order).tolist())

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


# ----------------------------------------------------------------------------- collating
def default_collate(batch: list[Any]) -> Any:
    """Stack a list of examples into one batch, keeping their structure.

    Tensors (and arrays) -> one Tensor with a new first dim; Python ints -> int64 and floats -> float64
    Tensors (PyTorch's choice); tuples/lists -> the same kind of sequence, each field collated;
    dicts -> a dict, each key collated; strings -> a list of strings.
    """
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch), 0)
    if isinstance(first, np.ndarray):
        return stack([_tensor(a) for a in batch], 0)
    if isinstance(first, (bool, np.bool_)):
        return _tensor(np.array(batch, dtype=bool))
    if isinstance(first, (int, np.integer)):
        return _tensor(np.array(batch, dtype=np.int64))
    if isinstance(first, (float, np.floating)):
        return _tensor(np.array(batch, dtype=np.float64))
    if isinstance(first, str):
        return list(batch)
    if isinstance(first, Mapping):
        return {k: default_collate([ex[k] for ex in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        if any(len(ex) != len(first) for ex in batch):
            raise RuntimeError("default_collate: each element in the batch should be of equal size, got lengths "
                               f"{sorted({len(ex) for ex in batch})}")
        fields = [default_collate(list(samples)) for samples in zip(*batch)]
        if hasattr(first, "_fields"):  # a namedtuple
            return type(first)(*fields)
        return tuple(fields) if isinstance(first, tuple) else fields
    raise TypeError(f"default_collate: batches must hold Tensors, arrays, numbers, strings, dicts or sequences; "
                    f"found {type(first).__name__} (pass collate_fn= to combine these)")


# ----------------------------------------------------------------------------- the loader
class DataLoader:
    """Batches from a dataset: ``for xb, yb in DataLoader(ds, batch_size=32, shuffle=True): ...``.

    sampler= gives the index order yourself (then shuffle must stay off); batch_size=None yields single
    examples uncollated; drop_last drops a final short batch; collate_fn turns a list of examples into
    a batch (default_collate by default). ``len(loader)`` is the number of batches.
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Iterable[int] | None = None, batch_sampler: Iterable[list[int]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False,
                 generator: np.random.Generator | None = None, **ignored: Any) -> None:
        unknown = set(ignored) - {"timeout", "worker_init_fn", "prefetch_factor", "persistent_workers",
                                  "multiprocessing_context", "pin_memory_device", "in_order"}
        if unknown:
            raise TypeError(f"DataLoader got unexpected keyword argument(s) {sorted(unknown)}")
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise TypeError(f"DataLoader expects a dataset with __getitem__ and __len__, got {type(dataset).__name__}")
        checks.nonneg_int("num_workers", num_workers, "DataLoader")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, "
                             "sampler, and drop_last")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be a function of a list of examples, got {collate_fn!r}")
        self.dataset, self.num_workers, self.pin_memory, self.generator = dataset, num_workers, pin_memory, generator
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        self.sampler = sampler
        self.drop_last = bool(drop_last)
        if batch_sampler is None and batch_size is not None:
            batch_size = checks.positive_int("batch_size", batch_size, "DataLoader")
            batch_sampler = BatchSampler(sampler, batch_size, self.drop_last)
        self.batch_size, self.batch_sampler = batch_size, batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_sampler is not None else (lambda ex: ex))

    def __iter__(self) -> Iterator[Any]:
        if self.batch_sampler is None:  # batch_size=None: one example at a time
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)  # type: ignore[arg-type]
