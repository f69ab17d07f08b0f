"""tinyattn.utils.data: datasets, samplers, the DataLoader and random_split, with PyTorch's behaviour."""
from collections import namedtuple

import numpy as np
import pytest

import tinyattn
from tinyattn.utils.data import (BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler, Subset,
                                 TensorDataset, default_collate, random_split)


def xy(n=10):
    X = tinyattn.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2))
    Y = tinyattn.tensor(np.arange(n))
    return TensorDataset(X, Y)


def test_tensor_dataset_rows_and_length():
    ds = xy(5)
    x, y = ds[3]
    assert len(ds) == 5 and x.tolist() == [6.0, 7.0] and int(y) == 3
    with pytest.raises(ValueError, match=r"size mismatch between tensors: first dims \[5, 4\]"):
        TensorDataset(tinyattn.zeros(5, 2), tinyattn.zeros(4))
    with pytest.raises(TypeError, match=r"tensors\[0\] is a ndarray"):
        TensorDataset(np.zeros(3))


def test_loader_batches_in_order_and_keeps_the_last_short_batch():
    loader = DataLoader(xy(10), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype == np.float32
    dropped = DataLoader(xy(10), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [b[1].tolist() for b in dropped] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_shuffle_is_a_new_permutation_each_pass_and_seeded_by_manual_seed():
    loader = DataLoader(xy(10), batch_size=3, shuffle=True)
    tinyattn.manual_seed(0)
    first = [i for _, y in loader for i in y.tolist()]
    second = [i for _, y in loader for i in y.tolist()]
    assert sorted(first) == list(range(10)) and sorted(second) == list(range(10)) and first != second
    tinyattn.manual_seed(0)
    assert [i for _, y in loader for i in y.tolist()] == first
    # with its own generator, a pass is that generator's permutation of the indices
    own = DataLoader(xy(10), batch_size=3, shuffle=True, generator=np.random.default_rng(5))
    assert [i for _, y in own for i in y.tolist()] == np.random.default_rng(5).permutation(10).tolist()


def test_random_sampler_without_and_with_replacement():
    tinyattn.manual_seed(1)
    s = RandomSampler(range(4), num_samples=10)  # two whole permutations, then two more indices
    got = list(s)
    assert len(s) == 10 and len(got) == 10
    assert sorted(got[:4]) == sorted(got[4:8]) == [0, 1, 2, 3] and len(set(got[8:])) == 2
    r = RandomSampler(range(3), replacement=True, num_samples=200, generator=np.random.default_rng(0))
    draws = list(r)
    assert len(draws) == 200 and set(draws) == {0, 1, 2}
    assert max(np.bincount(draws)) > 200 / 3  # with replacement: counts are uneven (no permutation)
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    with pytest.raises(ValueError, match="RandomSampler: num_samples must be a positive int, got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="generator must be a tinyattn.Generator, a numpy.random.Generator or None"):
        RandomSampler(range(3), generator=5)


def test_sampler_and_collate_fn_and_batch_size_none():
    ds = xy(6)
    loader = DataLoader(ds, batch_size=2, sampler=[5, 0, 3, 1], collate_fn=lambda ex: [int(y) for _, y in ex])
    assert list(loader) == [[5, 0], [3, 1]] and len(loader) == 2
    singles = list(DataLoader(ds, batch_size=None, sampler=[2, 4]))
    assert [int(y) for _, y in singles] == [2, 4] and singles[0][0].shape == (2,)
    by_batch = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 5, drop_last=False))
    assert [b[1].tolist() for b in by_batch] == [[0, 1, 2, 3, 4], [5]]
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="DataLoader: batch_size must be a positive int, got batch_size=0"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        DataLoader(ds, batchsize=2)


def test_default_collate_keeps_the_structure():
    Pair = namedtuple("Pair", "a b")
    batch = [{"x": np.ones(2), "n": 1, "f": 0.5, "s": "a", "p": Pair(1, [2.0, 3.0])},
             {"x": np.zeros(2), "n": 2, "f": 1.5, "s": "b", "p": Pair(4, [5.0, 6.0])}]
    out = default_collate(batch)
    assert out["x"].shape == (2, 2) and out["x"].dtype == np.float64
    assert out["n"].dtype == np.int64 and out["n"].tolist() == [1, 2]
    assert out["f"].dtype == np.float64 and out["s"] == ["a", "b"]  # Python floats -> float64, as in PyTorch
    assert isinstance(out["p"], Pair) and out["p"].a.tolist() == [1, 4]
    assert [t.tolist() for t in out["p"].b] == [[2.0, 5.0], [3.0, 6.0]]  # a list field is transposed
    with pytest.raises(RuntimeError, match="each element in the batch should be of equal size"):
        default_collate([(1, 2), (3,)])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object()])


def test_random_split_by_lengths_and_fractions():
    ds = xy(10)
    tinyattn.manual_seed(3)
    a, b = random_split(ds, [7, 3])
    ids = [int(y) for _, y in a] + [int(y) for _, y in b]
    assert (len(a), len(b)) == (7, 3) and sorted(ids) == list(range(10)) and isinstance(a, Subset)
    tinyattn.manual_seed(3)
    a2, _ = random_split(ds, [7, 3])
    assert a2.indices == a.indices  # seeded
    parts = random_split(range(10), [0.45, 0.45, 0.1])  # floor gives 4, 4, 1; the leftover one goes to the first
    assert [len(p) for p in parts] == [5, 4, 1]
    with pytest.raises(ValueError, match=r"the lengths \[5, 4\] sum to 9, but the dataset has 10 examples"):
        random_split(ds, [5, 4])
    with pytest.raises(ValueError, match="ints >= 0 or fractions summing to 1"):
        random_split(ds, [0.5, 0.2])


def test_a_map_style_dataset_subclass_works_with_the_loader():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return tinyattn.tensor([float(i)]), i * i

    xb, yb = next(iter(DataLoader(Squares(), batch_size=5)))
    assert xb.shape == (5, 1) and yb.tolist() == [0, 1, 4, 9, 16]
    with pytest.raises(NotImplementedError, match="must define __getitem__"):
        Dataset()[0]


def test_an_endless_random_sampler_draws_as_it_goes():
    # minGPT's Trainer asks for RandomSampler(ds, replacement=True, num_samples=int(1e10)) and takes
    # batches with next(): building the 10^10 indices up front would need 80 GB
    s = RandomSampler(range(10), replacement=True, num_samples=int(1e10), generator=np.random.default_rng(3))
    assert len(s) == 10 ** 10
    it = iter(s)
    first = [next(it) for _ in range(5000)]  # more than one chunk of draws
    assert set(first) == set(range(10))
    # the draws are the generator's own stream, chunk after chunk
    ref = np.random.default_rng(3)
    expected = np.concatenate([ref.integers(0, 10, size=RandomSampler._CHUNK) for _ in range(5)])[:5000]
    assert first == expected.tolist()
    # without replacement the pass is made one permutation at a time, and stops at num_samples
    loader = DataLoader(xy(6), batch_size=4, sampler=RandomSampler(range(6), num_samples=10 ** 9))
    xb, yb = next(iter(loader))
    assert xb.shape == (4, 2) and len(set(yb.tolist())) == 4


def test_the_submodules_have_pytorchs_names():
    # `from torch.utils.data.dataloader import DataLoader` and its siblings port unchanged
    from tinyattn.utils.data.dataloader import DataLoader as DL, default_collate as dc
    from tinyattn.utils.data.dataset import Dataset as D, TensorDataset as TD, random_split as rs
    from tinyattn.utils.data.sampler import RandomSampler as RS, Sampler as S
    assert (DL, dc, D, TD, rs, RS, S) == (DataLoader, default_collate, Dataset, TensorDataset, random_split,
                                          RandomSampler, tinyattn.utils.data.Sampler)


def test_an_iterable_dataset_is_batched_in_its_own_order():
    from tinyattn.utils.data import IterableDataset

    class Stream(IterableDataset):  # e.g. tokens read from a file, one example at a time
        def __iter__(self):
            return iter([(i, 10 * i) for i in range(7)])

    batches = list(DataLoader(Stream(), batch_size=3))
    assert [b[0].tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6]] and batches[0][1].tolist() == [0, 10, 20]
    assert len(list(DataLoader(Stream(), batch_size=3, drop_last=True))) == 2
    assert list(DataLoader(Stream(), batch_size=None))[1] == [1, 10]  # a tuple comes back a list, as in PyTorch
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified shuffle"):
        DataLoader(Stream(), batch_size=2, shuffle=True)
    with pytest.raises(TypeError, match="an IterableDataset without __len__"):
        len(DataLoader(Stream(), batch_size=2))

    class Sized(Stream):
        def __len__(self):
            return 7

    assert len(DataLoader(Sized(), batch_size=3)) == 3 and len(DataLoader(Sized(), batch_size=3, drop_last=True)) == 2
