"""Datasets, samplers and the DataLoader, with PyTorch's names, behaviour and module layout.

The three parts, as in PyTorch (and in the same submodules, so ``from torch.utils.data.dataloader
import DataLoader`` ports too):
  ``dataset``: a Dataset answers ``len(ds)`` and ``ds[i]`` (one example); random_split divides one;
  ``sampler``: a Sampler yields the order of indices (in order, or shuffled);
  ``dataloader``: a DataLoader groups those indices into batches, fetches the examples and collates
  them: a batch of ``(x, y)`` pairs becomes ``(X, Y)`` with a new first dim of size batch_size.

All randomness (shuffling, RandomSampler, random_split) comes from the generator seeded by
``tinyattn.manual_seed``, unless ``generator=`` passes a ``tinyattn.Generator`` (or a NumPy one). A new
pass over a shuffling DataLoader draws a new order. Everything runs in this process: there are no
worker processes (``num_workers`` is accepted and the loading stays here).
"""
from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .distributed import DistributedSampler
from .dataset import Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "Sampler", "SequentialSampler", "RandomSampler", "BatchSampler",
           "DataLoader", "default_collate", "default_convert", "random_split", "DistributedSampler", "get_worker_info"]
