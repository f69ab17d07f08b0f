"""kl_div at infinite targets, (-inf)/(-0.0)/(+inf) ** p, a bool alpha, addcmul's value cast and lerp's dtypes,
against PyTorch: values, dtypes, every gradient, and whether (and what) it raises
(tests/test_fuzz_other_rules.py checks the same without torch)."""
from __future__ import annotations

import itertools
import math
import sys
import pathlib
import warnings

import numpy as np
import pytest
import torch

import tinyattn
import tinyattn.nn.functional as TF

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import surface_fuzz as sf  # noqa: E402

INF, NAN = math.inf, math.nan


def _bits(x):
    """A number as comparable text: NaN equal to NaN, and the sign of a zero kept."""
    return "nan" if math.isnan(x) else repr(float(x))


def _outcome(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(lib)
    except Exception as e:  # noqa: BLE001 (the exception's type is what is compared)
        return type(e).__name__


def _same(fn):
    assert _outcome(tinyattn, fn) == _outcome(torch, fn)


# ---- kl_div -----------------------------------------------------------------------------------------------

INPUTS = [-1.0, 0.0, 0.2, INF, NAN]
TARGETS = [0.5, 2.0, INF, NAN, -1.0]  # (a zero target is the documented difference: 0 here, NaN there)


@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_kl_div_pointwise_and_gradients(log_target, dt):
    def fn(lib):
        F = TF if lib is tinyattn else torch.nn.functional
        d = getattr(lib, dt)
        x = lib.tensor([i for i, _ in itertools.product(INPUTS, TARGETS)], dtype=d, requires_grad=True)
        t = lib.tensor([t for _, t in itertools.product(INPUTS, TARGETS)], dtype=d, requires_grad=True)
        out = F.kl_div(x, t, reduction="none", log_target=log_target)
        out.backward(lib.ones_like(out))  # (not out.sum(): a sum of inf and -inf warns in NumPy)
        return [out.detach().tolist(), x.grad.tolist(), t.grad.tolist(), str(out.dtype).split(".")[-1]]
    mine, theirs = fn(tinyattn), fn(torch)
    for m, t in zip(mine[:3], theirs[:3]):
        a, b = np.array(m), np.array(t)
        assert np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True), (a, b)
    assert mine[3] == theirs[3]


@pytest.mark.parametrize("reduction", ["sum", "batchmean", "mean", "none"])
def test_kl_div_the_fuzz_seed_and_reductions(reduction):
    _same(lambda lib: [_bits(v) for v in (TF if lib is tinyattn else torch.nn.functional).kl_div(
        lib.tensor([0.2, 0.1]), lib.tensor([INF, 0.3]), reduction=reduction).reshape(-1).tolist()])


def test_surface_fuzz_seed_124523_matches():
    program = sf.generate(124523)
    assert "kl_div" in program.stmts[-1]
    assert not sf.compare(sf.run(program, tinyattn), sf.run(program, torch))


# ---- pow ------------------------------------------------------------------------------------------------------

P = [1.5, 2, 3, -1, -1.5, -2, 0.5, -0.5, 0, 2.5, -2.5, 3.5, -3.5, INF, -INF]
BASES = [-INF, -0.0, 0.0, INF, -2.0, 2.0]


def _pow(lib, dt, mode):
    d, out = getattr(lib, dt), []
    for b, p in itertools.product(BASES, P):
        if mode == "tensor ** number":
            a = lib.tensor([b], dtype=d, requires_grad=True)
            y = a ** p
            y.sum().backward()
            out += [y.item(), a.grad.item()]
        elif mode == "number ** tensor":
            e = lib.tensor([float(p)], dtype=d, requires_grad=True)
            y = b ** e
            y.sum().backward()
            out += [y.item(), e.grad.item()]
        else:
            a = lib.tensor([b], dtype=d, requires_grad=True)
            e = lib.tensor([float(p)], dtype=d, requires_grad=True)
            y = torch.pow(a, e) if lib is torch else tinyattn.pow(a, e)
            y.sum().backward()
            out += [y.item(), a.grad.item(), e.grad.item(), str(y.dtype).split(".")[-1]]
    return out


@pytest.mark.parametrize("mode", ["tensor ** number", "number ** tensor", "tensor ** tensor"])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_pow_at_infinities_and_signed_zeros(mode, dt):
    mine, theirs = _pow(tinyattn, dt, mode), _pow(torch, dt, mode)
    for m, t in zip(mine, theirs):
        if isinstance(m, str):
            assert m == t
        else:
            assert (math.isnan(m) and math.isnan(t)) or (m == pytest.approx(t, rel=1e-6)
                                                         and math.copysign(1, m) == math.copysign(1, t)), (mine, theirs)


# ---- alpha / value / lerp --------------------------------------------------------------------------------------

DTS = ["bool", "uint8", "int64", "float32"]
ALPHAS = [True, False, 2, -1, 0.5, 2.0]


@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_", "addcmul", "addcmul_", "addcdiv", "lerp"])
def test_alpha_value_and_weight_across_dtypes(op):
    def call(lib, d1, d2, a):
        x = lib.tensor([1, 0, 2]).to(getattr(lib, d1))
        y = lib.tensor([1, 1, 3]).to(getattr(lib, d2))
        r = {"add": lambda: lib.add(x, y, alpha=a), "sub": lambda: lib.sub(x, y, alpha=a),
             "add_": lambda: x.clone().add_(y, alpha=a), "sub_": lambda: x.clone().sub_(y, alpha=a),
             "addcmul": lambda: lib.addcmul(x, y, y, value=a), "addcmul_": lambda: x.clone().addcmul_(y, y, value=a),
             "addcdiv": lambda: lib.addcdiv(x, y, y.float(), value=a), "lerp": lambda: lib.lerp(x, y, a)}[op]()
        return [str(r.dtype).split(".")[-1], [float(v) for v in r.reshape(-1).tolist()]]
    for d1, d2, a in itertools.product(DTS, DTS, ALPHAS):
        mine, theirs = (_outcome(lib, lambda L: call(L, d1, d2, a)) for lib in (tinyattn, torch))
        assert mine == theirs or (isinstance(mine, list) and mine[0] == theirs[0]
                                  and np.allclose(mine[1], theirs[1], rtol=1e-6)), (op, d1, d2, a, mine, theirs)


@pytest.mark.parametrize("value", [2.7, -2.7, 0.5, True, -3])
def test_addcmul_value_gradients(value):
    def fn(lib):
        x, a, b = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in ([1.0, -2.0], [0.5, 3.0], [2.0, -1.0]))
        lib.addcmul(x, a, b, value=value).sum().backward()
        return [x.grad.tolist(), a.grad.tolist(), b.grad.tolist()]
    _same(fn)


@pytest.mark.parametrize("data, lo, hi", [([NAN, 1.0], 0, 0), ([1.5, NAN], 0, 0), ([-NAN, 1.0], 0, 0), ([1.0, INF], 0, 0),
                                          ([-INF, 2.0], 0, 0), ([1.0], NAN, 1.0), ([1.0], -NAN, 3.25),
                                          ([1.0], 1e-7, INF), ([1.0], 123456789.0, INF), ([1.0], 2.5, -INF)])
def test_histc_range_message(data, lo, hi):
    def fn(lib):
        try:
            lib.tensor(data).histc(bins=3, min=lo, max=hi)
        except RuntimeError as e:
            return str(e)
    assert fn(tinyattn) == fn(torch) is not None
