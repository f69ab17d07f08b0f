"""nn/normalization.py against PyTorch 2.13: F.group_norm and F.rms_norm values and the gradient of
input, weight and bias (float64 to 1e-13, float32 to 1e-5), module reprs, state_dicts and errors."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(1)
X4 = rng.standard_normal((2, 6, 3, 2)) * 2 + 1
X2 = rng.standard_normal((5, 6))


def run(lib, fn, x, args, wb, dtype):
    dt = getattr(lib, dtype)
    xt = lib.tensor(x, dtype=dt, requires_grad=True)
    ps = [None if a is None else lib.tensor(a, dtype=dt, requires_grad=True) for a in wb]
    out = getattr(lib.nn.functional, fn)(xt, *args, *ps)
    out.backward(lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)), dtype=dt))
    return [out.detach().numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in ps if p is not None], str(out.dtype)


CASES = [("group_norm", X4, (3,), (rng.standard_normal(6), rng.standard_normal(6))),
         ("group_norm", X4, (1,), (None, None)), ("group_norm", X4, (6,), (rng.standard_normal(6), None)),
         ("group_norm", X2, (2,), (rng.standard_normal(6), rng.standard_normal(6))),
         ("rms_norm", X4, ((2,),), (rng.standard_normal(2),)), ("rms_norm", X4, ((3, 2),), (None,)),
         ("rms_norm", X2, ((6,),), (rng.standard_normal(6),))]


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-13), ("float32", 1e-5)])
@pytest.mark.parametrize("fn,x,args,wb", CASES)
def test_values_and_every_gradient_match_pytorch(fn, x, args, wb, dtype, tol):
    (want, dt), (got, da) = run(torch, fn, x, args, wb, dtype), run(tinyattn, fn, x, args, wb, dtype)
    assert dt.split(".")[-1] == da.split(".")[-1]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_rms_norm_eps_none_is_the_dtypes_epsilon():
    x = np.full((2, 3), 1e-4)
    for dtype in ("float32", "float64"):
        got = [lib.nn.functional.rms_norm(lib.tensor(x, dtype=getattr(lib, dtype)), (3,)).numpy()
               for lib in (torch, tinyattn)]
        np.testing.assert_allclose(got[1], got[0], rtol=1e-6)


@pytest.mark.parametrize("make", [lambda nn: nn.GroupNorm(2, 4), lambda nn: nn.GroupNorm(2, 4, affine=False),
                                  lambda nn: nn.GroupNorm(1, 3, eps=1e-3, bias=False), lambda nn: nn.RMSNorm(4),
                                  lambda nn: nn.RMSNorm([3, 4], eps=1e-6, elementwise_affine=False)])
def test_modules_repr_and_state_dict(make):
    mt, ma = make(torch.nn), make(tinyattn.nn)
    assert repr(ma) == repr(mt)
    assert [(k, v.tolist()) for k, v in ma.state_dict().items()] == [(k, v.tolist()) for k, v in mt.state_dict().items()]


ERRORS = [(lambda l: l.nn.GroupNorm(3, 4), ValueError, r"num_channels \(4\) must be divisible by num_groups \(3\)"),
          (lambda l: l.nn.functional.group_norm(l.ones(2, 4, 3), 3), RuntimeError, "divisible by num_groups"),
          (lambda l: l.nn.functional.group_norm(l.ones(4), 2), RuntimeError, "Expected at least 2 dimensions"),
          (lambda l: l.nn.functional.group_norm(l.ones(2, 4), 2, l.ones(3)), RuntimeError,
           "Expected weight to be a vector of size equal to the number of channels"),
          (lambda l: l.nn.functional.rms_norm(l.ones(2, 3), (4,)), RuntimeError, r"Given normalized_shape=\[4\]"),
          (lambda l: l.nn.functional.rms_norm(l.ones(2, 3), (3,), l.ones(2)), RuntimeError,
           "Expected weight to be of same shape as normalized_shape"),
          (lambda l: l.nn.functional.rms_norm(l.ones(2, 3), 3), TypeError, "must be tuple of ints, not int")]


@pytest.mark.parametrize("call,exc,text", ERRORS)
def test_errors_are_pytorchs(call, exc, text):
    for lib in (torch, tinyattn):
        with pytest.raises(exc, match=text):
            call(lib)
