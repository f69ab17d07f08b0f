"""scatter_reduce, scatter_add and scatter(reduce=) against PyTorch 2.13: values, dtypes, both gradients and
whether it raises, over random shapes, dims, repeated indices, ties and zeros."""
import warnings

import numpy as np
import pytest
import torch

import tinyattn


def run(lib, a, dim, index, src, reduce, include_self, g):
    x = lib.tensor(a, requires_grad=a.dtype.kind == "f")
    s = lib.tensor(src, requires_grad=src.dtype.kind == "f")
    try:
        out = x.scatter_reduce(dim, lib.tensor(index), s, reduce, include_self=include_self)
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return ("raises", type(e).__name__)
    if not out.requires_grad:
        return out.numpy().tolist(), str(out.dtype).split(".")[-1]
    try:
        out.backward(lib.tensor(g))
    except Exception as e:  # noqa: BLE001
        return out.detach().numpy().tolist(), "backward raises", type(e).__name__
    return out.detach().numpy().tolist(), str(out.dtype).split(".")[-1], x.grad.numpy().tolist(), s.grad.numpy().tolist()


def draw(seed):
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 4, ndim))
    dim = int(rng.integers(-ndim, ndim))
    ishape = tuple(int(rng.integers(1, n + 1)) if i != dim % ndim else int(rng.integers(1, 6)) for i, n in enumerate(shape))
    sshape = ishape  # (a larger src: see test_larger_src_values_as_pytorch_and_gradient_zero_beyond_the_index)
    dtype = rng.choice(["float64", "float32", "int64"])
    pool = np.array([0.0, 1.0, 2.0, -1.0, 3.0]) if seed % 3 == 0 else rng.normal(size=50)  # ties and zeros, or none
    a = rng.choice(pool, shape).astype(dtype)
    src = rng.choice(pool, sshape).astype(dtype)
    index = rng.integers(0, shape[dim], ishape)
    reduce = rng.choice(["sum", "prod", "mean", "amax", "amin", "max", "min", "add"])
    return a, dim, index, src, str(reduce), bool(rng.integers(0, 2)), rng.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("seed", range(300))
def test_scatter_reduce_as_pytorch(seed):
    args = draw(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = run(torch, *args)
    got = run(tinyattn, *args)
    assert len(got) == len(want) and got[1:2] == want[1:2] if want[0] == "raises" else got[1] == want[1], (got, want)
    for w, o in zip(want, got):
        if isinstance(w, list):
            np.testing.assert_allclose(o, w, rtol=1e-6 if args[0].dtype == np.float32 else 1e-12, atol=1e-6)
        else:
            assert o == w


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_as_pytorch(reduce):
    rng = np.random.default_rng(5)
    a, src, index = rng.normal(size=(3, 4)), rng.normal(size=(3, 5)), rng.integers(0, 4, (3, 4))
    for value in (None, 1.5):
        outs = []
        for lib in (torch, tinyattn):
            x = lib.tensor(a, requires_grad=True)
            out = x.scatter(1, lib.tensor(index), value if value is not None else lib.tensor(src), reduce=reduce)
            with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
                out.sum().backward()
            outs.append(out.detach().numpy())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "prod"])
def test_larger_src_values_as_pytorch_and_gradient_zero_beyond_the_index(reduce):
    """A src larger than index is allowed and only index's shape of it is read. PyTorch 2.13's backward then
    returns a gradient of index's shape for src: it raises ('invalid gradient', or for amax and prod 'must match')
    or, where that shape broadcasts, spreads it over entries that were never read. tinyattn gives those
    entries 0 (a deliberate difference, in docs/pytorch.md; tests/test_scatter_reduce.py gradchecks it)."""
    rng = np.random.default_rng(9)
    a, src, index = rng.normal(size=(3, 4)), rng.normal(size=(3, 5)), rng.integers(0, 4, (3, 4))
    x, s = tinyattn.tensor(a, requires_grad=True), tinyattn.tensor(src, requires_grad=True)
    out = x.scatter_reduce(1, tinyattn.tensor(index), s, reduce)
    want = torch.tensor(a).scatter_reduce(1, torch.tensor(index), torch.tensor(src), reduce)
    np.testing.assert_allclose(out.detach().numpy(), want.numpy(), rtol=1e-12)
    out.sum().backward()
    assert (s.grad.numpy()[:, 4] == 0).all()
    tx, ts = torch.tensor(a, requires_grad=True), torch.tensor(src, requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient|must match the size"):  # (amax, prod: the latter)
        tx.scatter_reduce(1, torch.tensor(index), ts, reduce).sum().backward()
