"""DataLoader's collate and convert rules as PyTorch's, DistributedSampler with one replica (and several),
and tinyattn.multiprocessing's one-process spawn."""
from collections import namedtuple

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.multiprocessing as mp
from tinyattn.utils.data import DataLoader, SequentialSampler, default_collate, default_convert
from tinyattn.utils.data.distributed import DistributedSampler

P = namedtuple("P", "x y")


def test_a_batch_of_tuples_is_a_list_of_batches():
    ds = [(np.full(2, i, dtype=np.float32), i) for i in range(4)]
    xb, yb = batch = next(iter(DataLoader(ds, batch_size=2)))
    assert type(batch) is list  # PyTorch's: `xb, yb = batch` unpacks either, `batch[0]` reads either
    assert xb.dtype == torch.float32 and xb.tolist() == [[0, 0], [1, 1]]
    assert yb.dtype == torch.int64 and yb.tolist() == [0, 1]


def test_numbers_become_tensors_of_pytorchs_dtypes():
    assert default_collate([1, 2]).dtype == torch.int64
    assert default_collate([0.5, 1.5]).dtype == torch.float64  # a Python float is a double
    assert default_collate([True, False]).dtype == torch.bool
    y = default_collate([np.float32(1.5), np.float32(2)])  # a NumPy scalar keeps its dtype
    assert y.dtype == torch.float32 and y.tolist() == [1.5, 2.0]


def test_dicts_lists_namedtuples_and_strings_keep_their_structure():
    ds = [{"x": np.full(2, i, dtype=np.float32), "pair": (i, float(i)), "name": f"s{i}"} for i in range(3)]
    b = default_collate(ds)
    assert b["x"].shape == (3, 2) and b["name"] == ["s0", "s1", "s2"]
    assert type(b["pair"]) is list and b["pair"][0].tolist() == [0, 1, 2] and b["pair"][1].dtype == torch.float64
    p = default_collate([P(np.ones(1), 1), P(np.zeros(1), 2)])
    assert isinstance(p, P) and p.x.tolist() == [[1.0], [0.0]] and p.y.tolist() == [1, 2]


def test_without_batch_size_arrays_become_tensors_and_numbers_stay():
    ds = [(np.arange(3, dtype=np.float32) + i, i) for i in range(2)]
    x, y = first = next(iter(DataLoader(ds, batch_size=None)))
    assert type(first) is list and isinstance(x, torch.Tensor) and x.shape == (3,) and x.dtype == torch.float32
    assert y == 0 and type(y) is int  # no new dim, and a number stays a number
    nd = next(iter(DataLoader([np.arange(2) + i for i in range(3)], batch_size=None)))
    assert isinstance(nd, torch.Tensor) and nd.dtype == torch.int64 and nd.tolist() == [0, 1]
    d = default_convert({"x": np.float32(2.5), "s": "a", "p": P(np.ones(1), 3)})
    assert d["x"].shape == () and d["x"].dtype == torch.float32 and d["s"] == "a"
    assert isinstance(d["p"], P) and isinstance(d["p"].x, torch.Tensor) and d["p"].y == 3


# ---------------------------------------------------------------------------- DistributedSampler
def test_one_replica_gives_what_a_plain_sampler_gives():
    ds = list(range(10))
    assert list(DistributedSampler(ds, num_replicas=1, rank=0, shuffle=False)) == list(SequentialSampler(ds))
    s = DistributedSampler(ds, num_replicas=1, rank=0)  # shuffled: every index once
    order = list(s)
    assert sorted(order) == ds and len(s) == 10
    assert list(s) == order  # the same order until set_epoch
    s.set_epoch(1)
    assert sorted(list(s)) == ds and list(s) != order


def test_several_replicas_split_the_indices():
    # 10 indices over 3 replicas: padded to 12 by repeating the start (0, 1); rank r takes r, r + 3, ...
    ds = list(range(10))
    shares = [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    # drop_last cuts to 9: three each
    assert list(DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False, drop_last=True)) == [1, 4, 7]


def test_without_a_process_group_the_replicas_must_be_given():
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(list(range(3)))
    with pytest.raises(ValueError, match=r"Invalid rank 1, rank should be in the interval \[0, 0\]"):
        DistributedSampler(list(range(3)), num_replicas=1, rank=1)


def test_a_dataloader_over_a_distributed_sampler():
    ds = [(float(i), i) for i in range(6)]
    loader = DataLoader(ds, batch_size=4, sampler=DistributedSampler(ds, num_replicas=1, rank=0, shuffle=False))
    assert [b[1].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]


# ---------------------------------------------------------------------------- multiprocessing
def test_spawn_with_one_process_runs_here_as_rank_0():
    calls = []
    assert mp.spawn(lambda rank, a, b: calls.append((rank, a, b)), args=(1, 2), nprocs=1) is None
    assert calls == [(0, 1, 2)]
    with pytest.raises(RuntimeError, match="nprocs=2, but tinyattn trains in one process"):
        mp.spawn(print, nprocs=2)
    assert mp.cpu_count() >= 1 and callable(mp.Process)  # the stdlib's names, as torch.multiprocessing's
