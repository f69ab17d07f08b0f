"""compat/bits_and_signs.py, signs_and_statistics.py and nn/channels_and_local.py against PyTorch 2.13: shifts
over dtype pairs (out-of-range amounts included), copysign / logaddexp / logaddexp2 / nextafter / heaviside over
dtype pairs and Python numbers (value, dtype or the error), their gradients in float64 at edge values (zeros,
infinities), cov / corrcoef / cumulative_trapezoid with weights and x, channel_shuffle, local_response_norm,
alpha dropout's structure, gather(sparse_grad=)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tinyattn
import tinyattn.nn.functional as AF

VALUES = {"i": [1, -8, 3, 0], "u": [1, 2, 200, 0], "i8": [1, -8, 64, 0], "i32": [5, -5, 7, 1],
          "b": [True, False, True, True], "f": [1.5, -0.0, 2.0, -3.0], "d": [0.5, 0.0, -1.0, 2.0],
          "h": [1.5, -0.0, 2.0, 1.0], "n": [0, 1, 63, 64], "neg": [-1, 2, 70, 5]}
DTYPES = {"i": "int64", "u": "uint8", "i8": "int8", "i32": "int32", "b": "bool", "f": "float32", "d": "float64",
          "h": "float16", "n": "int64", "neg": "int64"}


def make(lib, key):
    if key in VALUES:
        return lib.tensor(VALUES[key], dtype=getattr(lib, DTYPES[key]))
    return eval(key)  # a Python number


def outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001  (the error is the answer compared)
        return ("raises", type(e).__name__, str(e).split("\n")[0])
    return (str(r.dtype).split(".")[-1], r.double().numpy() if r.dtype != getattr(lib, "bool") else r.numpy())


def same(fn):
    want, got = outcome(torch, fn), outcome(tinyattn, fn)
    if want[0] == "raises":
        assert got[0] == "raises" and got[1] == want[1], (want, got)
        assert want[2] in got[2] or want[1] == "TypeError", (want, got)  # (TypeError: PyTorch lists its overloads)
    else:
        assert got[0] == want[0], (want, got)
        if want[0].startswith("float"):  # a float: to within its dtype's rounding (log2(2^-1 + 2^-1) is 0 here,
            eps = float(np.finfo(np.dtype(want[0])).eps)  # -4.8e-17 in PyTorch's float64)
            np.testing.assert_allclose(got[1], want[1], rtol=eps, atol=eps)
        else:
            np.testing.assert_array_equal(got[1], want[1])


PAIRS = [(a, b) for a in ["i", "u", "i8", "i32", "b", "f", "d", "h"] for b in ["i", "u", "b", "f", "h", "n", "2", "True",
                                                                             "-1.5", "40", "-1"]]


@pytest.mark.parametrize("a,b", PAIRS)
def test_shifts_match(a, b):
    same(lambda l: make(l, a) << make(l, b))
    same(lambda l: make(l, a) >> make(l, b))
    same(lambda l: l.bitwise_left_shift(make(l, a), make(l, b)))
    same(lambda l: l.bitwise_right_shift(make(l, a), make(l, b)))


@pytest.mark.parametrize("a", ["i", "u", "i8", "n", "neg"])
def test_shifts_with_a_number_first_and_in_place(a):
    same(lambda l: 2 << make(l, a))
    same(lambda l: 1000 >> make(l, a))
    same(lambda l: l.bitwise_left_shift(3, make(l, a)))

    def inplace(l):
        x = make(l, a)
        y = x
        y <<= 1
        y >>= 2
        assert y is x
        return x.bitwise_left_shift_(1)
    same(inplace)


@pytest.mark.parametrize("op", ["copysign", "logaddexp", "logaddexp2", "nextafter", "heaviside"])
@pytest.mark.parametrize("a,b", [(a, b) for a in ["i", "u", "b", "f", "d", "h"] for b in ["i", "b", "f", "d", "h", "2",
                                                                                           "-1.5"]])
def test_sign_ops_values_dtypes_and_errors_match(op, a, b):
    same(lambda l: getattr(l, op)(make(l, a), make(l, b)))
    same(lambda l: getattr(make(l, a), op)(make(l, b)))


@pytest.mark.parametrize("op", ["copysign", "logaddexp", "logaddexp2", "nextafter"])
def test_sign_ops_gradients_at_edges_match(op):
    a = [1.5, -0.0, 0.0, -2.0, -np.inf, 3.0, 1.0, np.inf, -1000.0]
    b = [-1.0, 2.0, -3.0, 0.0, -np.inf, np.inf, 1.0, np.inf, -1000.0]
    got = {}
    for lib in (torch, tinyattn):
        x, y = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (a, b))
        out = getattr(lib, op)(x, y)
        out.backward(lib.arange(1.0, 10.0, dtype=lib.float64))
        got[lib.__name__] = [t.detach().numpy() for t in (out, x.grad, y.grad)]
    for g, w in zip(got["tinyattn"], got["torch"]):
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)


def test_heaviside_has_no_derivative_as_pytorch():
    for lib in (torch, tinyattn):
        x = lib.tensor([1.0, 0.0, -1.0], requires_grad=True)
        y = lib.heaviside(x, lib.tensor([0.5]))
        assert y.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
            y.sum().backward()


X = np.array([[0.0, 1.0, 2.0, 5.0], [2.0, 1.0, 0.5, -1.0], [1.0, 1.0, 3.0, 0.0]])


@pytest.mark.parametrize("call", [
    lambda l, x: l.cov(x), lambda l, x: l.cov(x[0]), lambda l, x: l.cov(x, correction=0),
    lambda l, x: l.cov(x, correction=3), lambda l, x: x.cov(fweights=l.tensor([1, 2, 1, 3])),
    lambda l, x: l.cov(x, aweights=l.tensor([0.5, 1.0, 2.0, 0.25], dtype=l.float64)),
    lambda l, x: l.cov(x, fweights=l.tensor([1, 2, 1, 3]), aweights=l.tensor([0.5, 1.0, 2.0, 0.25], dtype=l.float64)),
    lambda l, x: l.corrcoef(x), lambda l, x: x.corrcoef(), lambda l, x: l.corrcoef(x[1]),
    lambda l, x: l.cumulative_trapezoid(x), lambda l, x: l.cumulative_trapezoid(x, dim=0),
    lambda l, x: l.cumulative_trapezoid(x, dx=0.5), lambda l, x: l.cumulative_trapezoid(x, x[0] * 2),
    lambda l, x: l.cumulative_trapezoid(x, x=x.exp()), lambda l, x: l.cumulative_trapezoid(x[:, :1]),
])
def test_statistics_values_and_gradients_match(call):
    got = {}
    for lib in (torch, tinyattn):
        x = lib.tensor(X, requires_grad=True)
        out = call(lib, x)
        (out * lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
        got[lib.__name__] = (str(out.dtype).split(".")[-1], out.detach().numpy(), x.grad.numpy())
    assert got["tinyattn"][0] == got["torch"][0]
    np.testing.assert_allclose(got["tinyattn"][1], got["torch"][1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got["tinyattn"][2], got["torch"][2], rtol=1e-10, atol=1e-13)


def test_statistics_weight_gradients_match():
    got = {}
    for lib in (torch, tinyattn):
        w = lib.tensor([0.5, 1.0, 2.0, 0.25], dtype=lib.float64, requires_grad=True)
        out = lib.cov(lib.tensor(X), aweights=w)
        (out * lib.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        got[lib.__name__] = w.grad.numpy()
    np.testing.assert_allclose(got["tinyattn"], got["torch"], rtol=1e-10)


@pytest.mark.parametrize("call", [
    lambda l: l.cov(l.tensor([[0, 1, 2], [2, 1, 4]])), lambda l: l.corrcoef(l.tensor([[0, 1, 2], [2, 1, 4]])),
    lambda l: l.cov(l.ones(2, 2, 2)), lambda l: l.corrcoef(l.ones(2, 2, 2)), lambda l: l.cov(l.ones(2, 3).bool()),
    lambda l: l.cov(l.ones(2, 3), fweights=l.tensor([1.0, 2.0, 1.0])),
    lambda l: l.cov(l.ones(2, 3), fweights=l.tensor([1, -2, 1])), lambda l: l.cov(l.ones(2, 3), fweights=l.tensor([1, 2])),
    lambda l: l.cov(l.ones(2, 3), aweights=l.tensor([1.0, -2.0, 1.0])),
    lambda l: l.corrcoef(l.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])),
    lambda l: l.cumulative_trapezoid(l.tensor([0, 1, 3])), lambda l: l.cumulative_trapezoid(l.tensor([0, 1, 3]), dx=2),
    lambda l: l.cumulative_trapezoid(l.tensor([1.0, 2.0, 4.0]), l.tensor([0.0, 1.0])),
])
def test_statistics_dtypes_and_errors_match(call):
    same(call)


def test_cumulative_trapezoid_dim_out_of_range_is_an_index_error():
    """(the words are tinyattn's one dim rule's, naming the function; the type is PyTorch's)"""
    for lib in (torch, tinyattn):
        with pytest.raises(IndexError, match="out of range"):
            lib.cumulative_trapezoid(lib.tensor([1.0, 2.0, 4.0]), dim=1)


@pytest.mark.parametrize("call", [
    lambda l, F: F.channel_shuffle(l.arange(24.0).reshape(1, 6, 2, 2), 2),
    lambda l, F: F.channel_shuffle(l.arange(24).reshape(2, 6, 2), 3),
    lambda l, F: l.nn.ChannelShuffle(3)(l.arange(12.0).reshape(1, 6, 1, 2, 1)),
    lambda l, F: l.channel_shuffle(l.arange(24.0).reshape(1, 6, 2, 2), 6),
    lambda l, F: F.channel_shuffle(l.arange(24.0).reshape(1, 6, 2, 2), 4),
    lambda l, F: F.channel_shuffle(l.arange(24.0).reshape(1, 6, 2, 2), 0),
    lambda l, F: F.channel_shuffle(l.arange(6.0).reshape(1, 6), 2),
    lambda l, F: F.local_response_norm(l.arange(24).reshape(1, 6, 2, 2), 2),
    lambda l, F: F.local_response_norm(l.arange(6.0).reshape(1, 6), 2),
    lambda l, F: F.local_response_norm(l.zeros(1, 2, 0), 2),
    lambda l, F: F.alpha_dropout(l.arange(6.0), 0.5), lambda l, F: F.alpha_dropout(l.arange(6), 0.5, training=True),
    lambda l, F: F.alpha_dropout(l.arange(6.0), 1.0, training=True),
    lambda l, F: F.alpha_dropout(l.arange(6.0), 1.5, training=True),
    lambda l, F: F.feature_alpha_dropout(l.arange(6.0), 0.5, training=True),
    lambda l, F: l.nn.AlphaDropout(0.3).eval()(l.arange(6.0)),
])
def test_channel_and_local_layers_values_and_errors_match(call):
    same(lambda l: call(l, TF if l is torch else AF))


@pytest.mark.parametrize("size,alpha,beta,k,shape", [(2, 1e-4, 0.75, 1.0, (2, 6, 3)), (3, 0.1, 0.5, 2.0, (1, 5, 2, 2)),
                                                     (5, 0.3, 0.9, 1.5, (2, 4, 2, 1, 2)), (1, 1.0, 1.0, 0.5, (1, 3, 2))])
def test_local_response_norm_values_and_gradients_match(size, alpha, beta, k, shape):
    a = np.random.default_rng(size).standard_normal(shape) * 2
    got = {}
    for lib in (torch, tinyattn):
        x = lib.tensor(a, requires_grad=True)
        out = lib.nn.LocalResponseNorm(size, alpha, beta, k)(x)
        (out * lib.tensor(np.sin(np.arange(out.numel())).reshape(shape))).sum().backward()
        got[lib.__name__] = (out.detach().numpy(), x.grad.numpy())
    for g, w in zip(got["tinyattn"], got["torch"]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    assert repr(tinyattn.nn.LocalResponseNorm(size, alpha, beta, k)) == repr(torch.nn.LocalResponseNorm(size, alpha, beta, k))


def test_channel_shuffle_gradient_and_reprs_match():
    got = {}
    for lib in (torch, tinyattn):
        x = lib.tensor(np.arange(24.0).reshape(2, 6, 2), requires_grad=True)
        lib.nn.ChannelShuffle(2)(x).backward(lib.tensor(np.cos(np.arange(24.0)).reshape(2, 6, 2)))
        got[lib.__name__] = x.grad.numpy()
    np.testing.assert_array_equal(got["tinyattn"], got["torch"])
    for make in (lambda l: l.nn.ChannelShuffle(3), lambda l: l.nn.AlphaDropout(0.2),
                 lambda l: l.nn.FeatureAlphaDropout(0.3, inplace=True)):
        assert repr(make(tinyattn)) == repr(make(torch))


@pytest.mark.parametrize("p,feature", [(0.2, False), (0.5, False), (0.3, True)])
def test_alpha_dropout_takes_pytorchs_two_values_and_gradient(p, feature):
    """The draws differ (two generators), so each output is checked to be the one PyTorch's formula gives for
    that element's kept/dropped state, and the gradient is a (kept) or 0, as PyTorch's."""
    a = np.random.default_rng(1).standard_normal((4, 6, 3))
    fn = "feature_alpha_dropout" if feature else "alpha_dropout"
    outs = {}
    for lib, F in ((torch, TF), (tinyattn, AF)):
        x = lib.tensor(a, requires_grad=True)
        y = getattr(F, fn)(x, p, training=True)
        y.backward(lib.ones(*a.shape, dtype=lib.float64))
        outs[lib.__name__] = (y.detach().numpy(), x.grad.numpy())
    for name, (y, g) in outs.items():
        kept = g > 0
        assert 0 < kept.mean() < 1, name
        scale = g[kept][0]
        np.testing.assert_allclose(g[kept], scale, rtol=1e-15)  # one gradient a for every kept element
        np.testing.assert_array_equal(g[~kept], 0)
        shift = y[kept] - scale * a[kept]  # a kept element is a x + b, b the same for all
        np.testing.assert_allclose(shift, shift[0], rtol=1e-12)
        np.testing.assert_array_equal(y[~kept], y[~kept][0])  # a dropped one is one constant
        if feature:
            assert (kept == kept[:, :, :1]).all(), name  # one draw per (sample, channel)
        outs[name] = (scale, shift[0], y[~kept][0])
    np.testing.assert_allclose(outs["tinyattn"], outs["torch"], rtol=1e-12)


def test_gather_sparse_grad_gives_pytorchs_numbers_densely():
    got = {}
    for lib in (torch, tinyattn):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = lib.gather(x, 1, lib.tensor([[0, 0], [1, 0]]), sparse_grad=True)
        y.backward(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        grad = x.grad.to_dense() if lib is torch else x.grad
        got[lib.__name__] = (y.detach().numpy(), grad.numpy())
        with pytest.raises(TypeError, match="sparse_grad' must be bool, not int"):
            x.gather(1, lib.tensor([[0]]), sparse_grad=1)
    for g, w in zip(got["tinyattn"], got["torch"]):
        np.testing.assert_array_equal(g, w)
