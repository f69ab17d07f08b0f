"""The DataLoader, and default_collate, which stacks a list of examples into a batch (``torch.utils.data.dataloader``)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ... import checks
from ...factories import tensor as _tensor
from ...functions import stack
from ...tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of examples into one batch, keeping their structure, as PyTorch's.

    Tensors (and arrays) -> one Tensor with a new first dim; Python ints -> int64 and floats -> float64
    Tensors (PyTorch's choice); NumPy scalars keep their dtype; dicts -> a dict, each key collated;
    tuples and lists -> a list, each field collated (a namedtuple stays one); strings -> a list of strings.
    """
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch), 0)
    if isinstance(first, np.ndarray) and first.dtype.kind in "biuf":
        return stack([_tensor(a) for a in batch], 0)
    if isinstance(first, np.generic) and first.dtype.kind in "biuf":  # np.float32(1.5): a float32 tensor
        return _tensor(np.array(batch, dtype=first.dtype))
    if isinstance(first, bool):
        return _tensor(np.array(batch, dtype=bool))
    if isinstance(first, int):
        return _tensor(np.array(batch, dtype=np.int64))
    if isinstance(first, float):
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
        return fields  # a list, for tuples too: PyTorch's `xb, yb = batch` unpacks either
    raise TypeError(f"default_collate: batches must hold Tensors, arrays, numbers, strings, dicts or sequences; "
                    f"found {type(first).__name__} (pass collate_fn= to combine these)")


def default_convert(data: Any) -> Any:
    """One example as PyTorch's loader gives it with ``batch_size=None``: NumPy arrays and scalars become
    tensors (no new dim), inside dicts, lists and tuples too (a tuple comes back as a list, a namedtuple as
    itself); Python numbers and strings stay as they are."""
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype.kind in "biuf":
        return _tensor(data)
    if isinstance(data, Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(v) for v in data]
    return data


class DataLoader:
    """Batches from a dataset: ``for xb, yb in DataLoader(ds, batch_size=32, shuffle=True): ...``.

    sampler= gives the index order yourself (then shuffle must stay off); batch_size=None yields single
    examples, with NumPy arrays made tensors (default_convert); drop_last drops a final short batch; collate_fn turns a list of examples into
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
        self.stream = isinstance(dataset, IterableDataset)
        if self.stream:
            if shuffle or sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, sampler and "
                                 "batch_sampler options (a stream is read in its own order)")
        elif not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise TypeError(f"DataLoader expects a dataset with __getitem__ and __len__, or an IterableDataset; "
                            f"got {type(dataset).__name__}")
        checks.nonneg_int("num_workers", num_workers, "DataLoader")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, "
                             "sampler, and drop_last")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be a function of a list of examples, got {collate_fn!r}")
        self.dataset, self.num_workers, self.pin_memory, self.generator = dataset, num_workers, pin_memory, generator
        if sampler is None and not self.stream:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        self.sampler = sampler
        self.drop_last = bool(drop_last)
        if batch_sampler is None and batch_size is not None:
            batch_size = checks.positive_int("batch_size", batch_size, "DataLoader")
            if not self.stream:
                batch_sampler = BatchSampler(sampler, batch_size, self.drop_last)
        self.batch_size, self.batch_sampler = batch_size, batch_sampler
        batched = batch_sampler is not None or self.stream and batch_size is not None
        self.collate_fn = collate_fn or (default_collate if batched else default_convert)

    def __iter__(self) -> Iterator[Any]:
        if self.stream:  # an IterableDataset: batches of consecutive examples, in the stream's order
            if self.batch_size is None:
                yield from (self.collate_fn(ex) for ex in self.dataset)
                return
            yield from (self.collate_fn(b) for b in BatchSampler(self.dataset, self.batch_size, self.drop_last))
            return
        if self.batch_sampler is None:  # batch_size=None: one example at a time
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        if self.stream:
            if not hasattr(self.dataset, "__len__"):
                raise TypeError(f"len() of a DataLoader over {type(self.dataset).__name__}, an IterableDataset "
                                "without __len__: the number of batches is unknown until the stream ends")
            n, b = len(self.dataset), self.batch_size or 1
            return n // b if self.drop_last else -(-n // b)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)  # type: ignore[arg-type]


def get_worker_info() -> None:
    """None: PyTorch's answer in the main process, and every batch here is loaded in the main process."""
    return None
