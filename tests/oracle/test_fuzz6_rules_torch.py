"""The rules tests/test_fuzz6_rules.py fixes, against PyTorch: smooth_l1/huber gradients at infinite differences,
bilinear's contraction order, maximum/minimum at NaN, prod/cumprod with zeros, infs and NaNs, arange/linspace of
integer dtypes from fractional bounds, norm with p < 0. Values, dtypes, every gradient (NaN equal to NaN, the
sign of infinity kept), and whether it raises."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import torch

import tinyattn
import tinyattn.nn.functional as TF

INF, NAN = math.inf, math.nan
F = {tinyattn: TF, torch: torch.nn.functional}


def _run(lib, fn, inputs, dtype="float64"):
    """fn(lib, *leaves) -> out; returns (value, dtype, [grad of each leaf]) from a weighted sum, or the error type."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            leaves = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in inputs]
            out = fn(lib, *leaves)
            w = lib.tensor(np.cos(np.arange(out.numel()) * 0.7).reshape(tuple(out.shape)), dtype=out.dtype)
            (out * w).sum().backward()
            return out.detach().numpy(), str(out.dtype).split(".")[-1], [x.grad.numpy() for x in leaves]
    except Exception as e:  # noqa: BLE001 (the exception's type is what is compared)
        return type(e).__name__


def _same(fn, inputs, dtype="float64"):
    mine, theirs = _run(tinyattn, fn, inputs, dtype), _run(torch, fn, inputs, dtype)
    assert type(mine) is type(theirs), (mine, theirs)
    if isinstance(mine, str):
        assert mine == theirs
        return
    assert mine[1] == theirs[1]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    for a, b in zip([mine[0], *mine[2]], [theirs[0], *theirs[2]]):
        np.testing.assert_allclose(a, b, equal_nan=True, **tol)


SPECIAL = [0.0, 1.0, -1.0, 2.0, 0.5, INF, -INF, NAN]
PAIRS = list(itertools.product(SPECIAL, SPECIAL))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("loss, kw", [("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                      ("smooth_l1_loss", {"beta": 2.0}), ("huber_loss", {}),
                                      ("huber_loss", {"delta": 0.5}), ("huber_loss", {"delta": 3.0})])
def test_smooth_l1_and_huber_every_pair_of_specials(loss, kw, dtype):
    xs, ts = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    _same(lambda lib, x, t: getattr(F[lib], loss)(x, t, reduction="none", **kw), [xs, ts], dtype)


@pytest.mark.parametrize("seed", range(40))
def test_bilinear_with_infs_and_nans(seed):
    rng = np.random.default_rng(seed)
    pick = lambda shape, pool: rng.choice(pool, size=shape)  # noqa: E731
    _same(lambda lib, a, b, w: F[lib].bilinear(a, b, w),
          [pick((2, 2), SPECIAL), pick((2, 3), SPECIAL), pick((2, 2, 3), [0.0, 0.0, 1.0, -1.0, 2.0, 0.5])])


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_maximum_minimum_every_pair_of_specials(name, dtype):
    xs, ts = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    _same(lambda lib, a, b: getattr(lib, name)(a, b), [xs, ts], dtype)


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("op", ["prod", "prod0", "prod1", "cumprod0", "cumprod1"])
def test_prod_and_cumprod_with_zeros_infs_and_nans(op, seed):
    rng = np.random.default_rng(seed)
    pool = [0.0, 0.0, 1.0, -1.0, 2.0, 0.5] if seed % 2 else SPECIAL
    x = rng.choice(pool, size=(2, 4))
    fn = {"prod": lambda lib, a: a.prod(), "prod0": lambda lib, a: a.prod(0), "prod1": lambda lib, a: a.prod(1),
          "cumprod0": lambda lib, a: a.cumprod(0), "cumprod1": lambda lib, a: a.cumprod(1)}[op]
    _same(fn, [x])


@pytest.mark.parametrize("p", [-1, -2, -0.5])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
def test_negative_p_norm_with_zeros(p, dim):
    _same(lambda lib, a: lib.norm(a, p=p, dim=dim), [[[0.0, -1.0, 2.0], [1.0, -2.0, 4.0]]])


BOUNDS = [0, 0.5, 2.5, -0.5, -1.5, 3, -3, 2.7, -2.7, 10, -100, 33.3]


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "float32", "float64"])
def test_arange_of_every_dtype_from_fractional_bounds(dt):
    for args in [(e,) for e in BOUNDS] + list(itertools.product(BOUNDS[:6], BOUNDS[:6], [1, 0.5, 1.5, -1, -0.7])):
        def go(lib):
            try:
                return lib.arange(*args, dtype=getattr(lib, dt)).tolist()
            except Exception as e:  # noqa: BLE001
                return type(e).__name__
        mine, theirs = go(tinyattn), go(torch)
        if isinstance(theirs, str):  # raising: tinyattn raises too (ValueError for a step truncated to 0)
            assert isinstance(mine, str), (args, mine, theirs)
        else:
            assert np.allclose(mine, theirs, rtol=1e-6), (args, mine, theirs)


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "float32", "float64"])
def test_linspace_of_every_dtype_from_fractional_bounds(dt):
    for start, end, steps in itertools.product(BOUNDS, BOUNDS, [0, 1, 2, 3, 4, 5, 7]):
        mine = tinyattn.linspace(start, end, steps, dtype=getattr(tinyattn, dt)).tolist()
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dt)).tolist()
        scale = 1e-6 * max(abs(start), abs(end), 1)  # float32 steps: PyTorch computes in float32
        assert np.allclose(mine, theirs, rtol=1e-6, atol=scale), (start, end, steps, mine, theirs)


INDEXES = ["[t(1), 2]", "[1, t(2)]", "[t(1), 2, 1:]", "[t(1), :, 0]", "[t(0), :, t([1, 2])]", "[:, t(1), t([1, 2])]",
           "[t(1), ..., t(2)]", "[None, t(1), 1, None]", "[t(-1)]", "[t(1), [0, 2]]", "[t(1), t(True)]"]


@pytest.mark.parametrize("index", INDEXES)
def test_zero_d_integer_tensor_indexes_read_write_and_differentiate(index):
    def go(lib):
        t = lambda v: lib.tensor(v)  # noqa: E731
        try:
            x = lib.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
            y = x * 1.0
            read = eval("y" + index, {"y": y, "t": t})  # noqa: S307 (the index text above)
            exec("y" + index + " = y" + index + " * 3", {"y": y, "t": t})  # noqa: S102
            (y * lib.tensor(np.cos(np.arange(24.0)).reshape(2, 3, 4))).sum().backward()
            base = lib.arange(6).reshape(2, 3)
            view = eval("base" + index.split(",")[0] + ("]" if "," in index else ""), {"base": base, "t": t})  # noqa: S307
            view.zero_() if view.dim() else None
            return read.detach().tolist(), y.detach().tolist(), x.grad.tolist(), base.tolist()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
    assert go(tinyattn) == go(torch)


@pytest.mark.parametrize("padding_idx", [None, 0, 2, -1, -4, 4])
@pytest.mark.parametrize("max_norm", [None, 1.0, 20.0])
def test_functional_embedding_options(padding_idx, max_norm):
    def go(lib):
        try:
            w = lib.tensor(np.arange(12.0).reshape(4, 3) / 3, requires_grad=True)
            out = F[lib].embedding(lib.tensor([[0, 2], [3, 0]]), w, padding_idx=padding_idx, max_norm=max_norm)
            (out * lib.tensor(np.cos(np.arange(12.0)).reshape(2, 2, 3))).sum().backward()
            return np.round(out.detach().numpy(), 6).tolist(), np.round(w.detach().numpy(), 6).tolist(), w.grad.tolist()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
    assert go(tinyattn) == go(torch)


@pytest.mark.parametrize("name, kw", [
    ("RMSprop", {}), ("RMSprop", {"lr": 0.01, "momentum": 0.9}), ("RMSprop", {"centered": True, "alpha": 0.5}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {}), ("Adagrad", {"lr": 0.1, "lr_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.5, "maximize": True})])
def test_rmsprop_and_adagrad_steps(name, kw):
    def go(lib):
        p = lib.nn.Parameter(lib.tensor([[0.5, -1.5, 2.0], [0.1, 0.0, -0.3]], dtype=lib.float64))
        opt = getattr(lib.optim, name)([p], **kw)
        for i in range(5):
            opt.zero_grad()
            ((p - 0.5 * i) ** 2 * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
            opt.step()
        return p.detach().numpy()
    np.testing.assert_allclose(go(tinyattn), go(torch), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", ["cumprod", "prod_dim", "prod_all"])
def test_prod_and_cumprod_every_row_of_specials(op):
    rows = np.array(list(itertools.product([0.0, 1.0, -2.0, INF, NAN, 0.5], repeat=4)))  # 1296 rows

    def go(lib, x):
        a = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        out = {"cumprod": lambda: a.cumprod(-1), "prod_dim": lambda: a.prod(-1), "prod_all": lambda: a.prod()}[op]()
        out.backward(lib.tensor(np.cos(np.arange(out.numel()) + 1.0).reshape(tuple(out.shape)), dtype=lib.float64))
        return out.detach().numpy(), a.grad.numpy()
    no_zero = rows[(rows != 0).all(1)]  # (where no 0 is in the tensor, PyTorch divides instead)
    for x in ([rows, no_zero] if op != "prod_all" else [r[None] for r in rows[::7]]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine, theirs = go(tinyattn, x), go(torch, x)
        for m, t in zip(mine, theirs):
            np.testing.assert_allclose(m, t, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("call", ["torch.diff(x, dim=1, prepend=p, append=q)", "torch.diff(x, n=2, dim=0, prepend=x[:1])",
                                  "x.diff(append=x[:, :1])", "torch.diff(x, prepend=torch.zeros(1))",
                                  "torch.diff(x, prepend=2.0)", "torch.special.expit(x)", "torch.special.logit(x.sigmoid())",
                                  "torch.special.logit(x, eps=0.2)", "torch.special.xlogy(x.abs(), x.abs() + 1)"])
def test_diff_prepend_append_and_special_aliases(call):
    def go(lib):
        try:
            x = lib.tensor([[1.0, 3.0, 0.6], [0.2, 0.2, -5.0]], dtype=lib.float64, requires_grad=True)
            p = lib.tensor([[0.5], [1.5]], dtype=lib.float64, requires_grad=True)
            q = lib.ones(2, 2, dtype=lib.float64)
            out = eval(call, {"torch": lib, "x": x, "p": p, "q": q})  # noqa: S307 (the calls above)
            (out * lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=lib.float64)).sum().backward()
            return [np.round(out.detach().numpy(), 12).tolist(), np.round(x.grad.numpy(), 12).tolist(),
                    None if p.grad is None else p.grad.tolist()]
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
    assert go(tinyattn) == go(torch)
