"""tinyattn/tail_functions.py, compat/census_tail.py and nn/stochastic.py against PyTorch 2.13: values,
dtypes and every gradient of the deterministic names; for the random ones (bernoulli, channel dropout,
gumbel_softmax) the shapes, dtypes, mask structure, gradients, warnings and errors (the streams differ:
tinyattn draws from NumPy's generator)."""
import warnings

import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(3)
A, B = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
M = rng.standard_normal((3, 4))


def both(fn, *arrays, grad=True, dtype="float64"):
    """fn(lib, *tensors) on each library: the outputs, dtypes and the gradient of every float input."""
    res = []
    for lib in (torch, tinyattn):
        ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad) if np.asarray(a).dtype.kind == "f"
              else lib.tensor(a) for a in arrays]
        outs = fn(lib, *ts)
        outs = outs if isinstance(outs, tuple) else (outs,)
        if grad:
            total = sum((o.double() * lib.tensor(np.linspace(0.5, 2, o.numel()).reshape(tuple(o.shape)))).sum()
                        for o in outs if o.dtype in (lib.float32, lib.float64))
            total.backward()
        res.append(([o.detach().numpy() for o in outs], [str(o.dtype).split(".")[-1] for o in outs],
                    [t.grad.numpy() if getattr(t, "grad", None) is not None else None for t in ts]))
    return res


DETERMINISTIC = [
    ("var_mean", lambda l, x: l.var_mean(x, 1), (A,)), ("var_mean dim keepdim", lambda l, x: l.var_mean(x, 0, False, True), (A,)),
    ("var_mean all", lambda l, x: l.var_mean(x), (A,)), ("std_mean", lambda l, x: l.std_mean(x, 1, correction=0), (A,)),
    ("std_mean unbiased", lambda l, x: l.std_mean(x, False), (A,)),
    ("cdist", lambda l, x, y: l.cdist(x, y), (A, B)), ("cdist p1", lambda l, x, y: l.cdist(x, y, p=1.0), (A, B)),
    ("cdist p3 batched", lambda l, x, y: l.cdist(x.reshape(2, 2, 3), y[:4].reshape(2, 2, 3), p=3.0), (A, B)),
    ("cdist zero distance", lambda l, x: l.cdist(x, x), (A,)),
    ("diag 1d", lambda l, x: l.diag(x[0]), (A,)), ("diag 1d k", lambda l, x: l.diag(x[0], -2), (A,)),
    ("diag 2d", lambda l, x: l.diag(x), (A,)), ("diag 2d k", lambda l, x: x.diag(1), (A,)),
    ("diag 2d -k", lambda l, x: l.diag(x, -1), (A,)),
    ("cartesian_prod", lambda l, x, y: l.cartesian_prod(x[0], y[0]), (A, B)),
    ("erfinv", lambda l, x: l.erfinv(l.tanh(x)), (A,)), ("erfinv method", lambda l, x: (x.clamp(-1, 1) * 0.999).erfinv(), (A,)),
    ("hstack", lambda l, x, y: l.hstack([x, y[:4]]), (A, B)), ("hstack 1d", lambda l, x: l.hstack([x[0], x[1]]), (A,)),
    ("vstack", lambda l, x, y: l.vstack([x, y, x[0]]), (A, B)), ("dstack", lambda l, x: l.dstack([x, x * 2]), (A,)),
    ("dstack 1d", lambda l, x: l.dstack([x[0], x[1]]), (A,)), ("column_stack", lambda l, x: l.column_stack([x, x[:, 0]]), (A,)),
    ("addmm", lambda l, x, y, m: l.addmm(x[:, :1], x, m[:, :4]), (A, B, M)),
    ("addmm beta alpha", lambda l, x, y, m: l.addmm(x[0, :1], x, m, beta=0.5, alpha=-2.0), (A, B, M)),
    ("addmm method", lambda l, x, y, m: x[:3].addmm(x[:3], m[:, :3], beta=0), (A, B, M)),
    ("take", lambda l, x: l.take(x, l.tensor([[0, 11], [-1, 3]])), (A,)), ("ravel", lambda l, x: l.ravel(x.t()), (A,)),
    ("unflatten", lambda l, x: l.unflatten(x, 0, (2, -1)), (A,)), ("unflatten method", lambda l, x: x.unflatten(-1, (1, 3, 1)), (A,)),
    ("absolute", lambda l, x: l.absolute(x), (A,)), ("absolute method", lambda l, x: x.absolute(), (A,)),
    ("lerp", lambda l, x, y: l.lerp(x, y[:4], 0.3), (A, B)), ("H", lambda l, x: x.H, (A,)),
    ("lerp_", lambda l, x, y: (x * 1).lerp_(y[:4], 0.25), (A, B)),
    ("clamp_max_", lambda l, x: (x * 1).clamp_max_(0.2), (A,)), ("clamp_min_", lambda l, x: (x * 1).clamp_min_(-0.2), (A,)),
    ("nn.Unflatten", lambda l, x: l.nn.Unflatten(1, (3, 1))(x), (A,)),
]


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-13), ("float32", 3e-6)])
@pytest.mark.parametrize("name,fn,arrays", DETERMINISTIC, ids=[c[0] for c in DETERMINISTIC])
def test_values_dtypes_and_every_gradient_match_pytorch(name, fn, arrays, dtype, tol):
    (vt, dt, gt), (va, da, ga) = both(fn, *arrays, dtype=dtype)
    assert da == dt
    for a, t in zip(va, vt):
        assert a.shape == t.shape
        np.testing.assert_allclose(a, t, rtol=tol, atol=tol)
    for a, t in zip(ga, gt):
        assert (a is None) == (t is None)
        if a is not None:
            np.testing.assert_allclose(a, t, rtol=tol, atol=tol)


INTEGER = [
    ("searchsorted", lambda l: l.searchsorted(l.tensor([1, 3, 5, 7]), l.tensor([[3, 6], [9, 0]]))),
    ("searchsorted right", lambda l: l.searchsorted(l.tensor([1, 3, 5, 7]), l.tensor([3, 6, 9]), right=True)),
    ("searchsorted side", lambda l: l.searchsorted(l.tensor([1., 3, 3, 7]), l.tensor([3., 6]), side="right")),
    ("searchsorted scalar", lambda l: l.searchsorted(l.tensor([1, 3, 5, 7]), 3)),
    ("searchsorted rows", lambda l: l.searchsorted(l.tensor([[1, 3, 5], [2, 4, 6]]), l.tensor([[3, 4], [3, 7]]))),
    ("searchsorted int32", lambda l: l.searchsorted(l.tensor([1, 3]), l.tensor([2]), out_int32=True)),
    ("searchsorted sorter", lambda l: l.searchsorted(l.tensor([5, 1, 3]), l.tensor([2, 4]), sorter=l.tensor([1, 2, 0]))),
    ("bucketize", lambda l: l.bucketize(l.tensor([[3, 6], [9, 1]]), l.tensor([1, 3, 5, 7]))),
    ("bucketize right", lambda l: l.bucketize(l.tensor([3., 6, 9]), l.tensor([1., 3, 5, 7]), right=True, out_int32=True)),
    ("bucketize scalar", lambda l: l.bucketize(3, l.tensor([1, 3, 5]))),
    ("cartesian_prod 3", lambda l: l.cartesian_prod(l.tensor([1, 2]), l.tensor([3]), l.tensor([4, 5]))),
    ("diag int", lambda l: l.diag(l.tensor([1, 2]), 1)), ("take int", lambda l: l.tensor([[1, 2], [3, 4]]).take(l.tensor(2))),
    ("range", lambda l: l.range(0, 4)), ("range step", lambda l: l.range(1, 2, 0.25)),
    ("range down", lambda l: l.range(5, 1, -2)), ("range int", lambda l: l.range(0, 3, dtype=l.int64)),
    ("hann", lambda l: l.hann_window(6)), ("hann symmetric", lambda l: l.hann_window(5, periodic=False)),
    ("hann 1", lambda l: l.hann_window(1)), ("hann 0", lambda l: l.hann_window(0)),
    ("hann float64", lambda l: l.hann_window(4, dtype=l.float64)), ("get_device", lambda l: l.tensor(l.ones(2).get_device())),
]


@pytest.mark.parametrize("name,fn", INTEGER, ids=[c[0] for c in INTEGER])
def test_indices_and_factories_match_pytorch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range's deprecation: checked below
        got = [fn(lib) for lib in (torch, tinyattn)]
    assert str(got[1].dtype).split(".")[-1] == str(got[0].dtype).split(".")[-1]
    assert got[1].shape == got[0].shape
    np.testing.assert_allclose(got[1].numpy(), got[0].numpy(), rtol=1e-7, atol=1e-7)


def test_range_warns_as_pytorch():
    for lib in (torch, tinyattn):
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            lib.range(0, 2)


ERRORS = [(lambda l: l.searchsorted(l.tensor([1, 3]), l.tensor([1]), side="left", right=True), RuntimeError,
           "side and right can't be set to opposites"),
          (lambda l: l.searchsorted(l.tensor([[1, 3]]), l.tensor([[1], [2]])), RuntimeError, "boundaries tensor"),
          (lambda l: l.bucketize(l.tensor([1]), l.tensor([[1, 3]])), RuntimeError, "boundaries tensor must be 1 dimension"),
          (lambda l: l.cdist(l.ones(2, 3), l.ones(2, 4)), RuntimeError, "same number of columns"),
          (lambda l: l.diag(l.ones(2, 2, 2)), RuntimeError, "diag"),
          (lambda l: l.ones(2, 6).unflatten(1, (4, -1)), RuntimeError, "don't multiply up to the size of dim"),
          (lambda l: l.ones(2, 6).unflatten(1, (2, 2)), RuntimeError, "don't multiply up to the size of dim"),
          (lambda l: l.ones(2, 3, 4).H, RuntimeError, "only supported on matrices"),
          (lambda l: l.bernoulli(l.tensor([1.5])), RuntimeError, "Expected p_in >= 0 && p_in <= 1"),
          (lambda l: l.zeros(3).bernoulli_(1.5), RuntimeError, "bernoulli_ expects p to be in"),
          (lambda l: l.nn.functional.dropout1d(l.ones(3), 0.5), RuntimeError, "dropout1d: Expected 2D or 3D input"),
          (lambda l: l.nn.functional.dropout2d(l.ones(2, 2, 2), 1.5), ValueError, "dropout probability has to be"),
          (lambda l: l.nn.Dropout1d(-0.1), ValueError, "dropout probability has to be")]


@pytest.mark.parametrize("call,exc,text", ERRORS)
def test_errors_are_pytorchs(call, exc, text):
    for lib in (torch, tinyattn):
        with pytest.raises(exc, match=text):
            call(lib)


def test_bernoulli_keeps_the_dtype_and_gives_a_zero_gradient():
    for lib in (torch, tinyattn):
        p = lib.tensor([0.0, 1.0, 0.0, 1.0], dtype=lib.float64, requires_grad=True)
        b = lib.bernoulli(p)
        assert b.dtype == lib.float64 and b.requires_grad and b.tolist() == [0.0, 1.0, 0.0, 1.0]
        b.sum().backward()
        assert p.grad.tolist() == [0.0] * 4
        assert lib.bernoulli(lib.ones(3), 0.0).tolist() == [0.0] * 3
        assert lib.zeros(4, dtype=lib.int64).bernoulli_(1.0).tolist() == [1] * 4
        assert lib.zeros(3).bernoulli_(lib.tensor([0.0, 1.0, 1.0])).tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("fn,shape,warns", [("dropout1d", (2, 4, 3), None), ("dropout1d", (4, 3), None),
                                            ("dropout2d", (2, 4, 3, 3), None), ("dropout2d", (2, 4, 3), "3D input"),
                                            ("dropout2d", (4, 3), "Received a 2-D input"),
                                            ("dropout3d", (2, 4, 2, 2, 2), None), ("dropout3d", (4, 2, 2, 2), None)])
def test_channel_dropout_zeroes_whole_channels_and_warns_as_pytorch(fn, shape, warns):
    for lib in (torch, tinyattn):
        x = lib.ones(*shape, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            y = getattr(lib.nn.functional, fn)(x, 0.5)
        msgs = [str(w.message) for w in seen]
        assert (warns is None and not msgs) or (warns is not None and any(warns in m for m in msgs)), msgs
        y.sum().backward()
        v = y.detach().numpy()
        assert set(np.unique(v)) <= {0.0, 2.0} and np.array_equal(x.grad.numpy(), v)
        if len(shape) > 2 or fn == "dropout1d":  # one value per channel: (N, C) rows when batched, C rows when not
            batched = len(shape) == {"dropout1d": 3, "dropout3d": 5}.get(fn, len(shape))
            flat = v.reshape(shape[0] * shape[1] if batched else shape[0], -1)
            assert (flat.min(-1) == flat.max(-1)).all()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the same dims warning as above)
            same = getattr(lib.nn.functional, fn)(x, 0.5, training=False)
        assert np.array_equal(same.detach().numpy(), x.detach().numpy())


def test_modules_repr():
    for name in ("Dropout1d", "Dropout2d", "Dropout3d"):
        assert repr(getattr(tinyattn.nn, name)(0.2, inplace=True)) == repr(getattr(torch.nn, name)(0.2, inplace=True))
    assert repr(tinyattn.nn.Unflatten(1, (2, 3))) == repr(torch.nn.Unflatten(1, (2, 3)))


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    for lib in (torch, tinyattn):
        logits = lib.tensor(rng.standard_normal((3, 5)), requires_grad=True)
        y = lib.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
        assert y.dtype == lib.float64 and y.sum(-1).tolist() == [1.0] * 3 and set(y.detach().numpy().ravel()) == {0.0, 1.0}
        (y * lib.arange(5.0, dtype=lib.float64)).sum().backward()
        assert np.allclose(logits.grad.numpy().sum(-1), 0, atol=1e-12)  # the softmax's gradient: rows sum to 0
        soft = lib.nn.functional.gumbel_softmax(logits, dim=0)
        assert np.allclose(soft.detach().numpy().sum(0), 1.0)
