"""Complex tensors against PyTorch: the Llama rotary embedding, every complex op tinyattn computes (values, dtypes,
every gradient), promotion, views sharing memory, which calls raise, and the repr.
(Torch-free checks of the same: tests/test_complex.py.)"""
import numpy as np
import pytest
import torch

import tinyattn

RNG = np.random.default_rng(7)
Z1 = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
Z2 = RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))
W = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))


def _np(x):
    if isinstance(x, (torch.Tensor, tinyattn.Tensor)):
        return np.asarray(x.detach().resolve_conj().numpy() if isinstance(x, torch.Tensor) else x.numpy())
    return x


def _same(ours, theirs, rtol=1e-10, atol=1e-12):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t, rtol, atol)
        return
    o, t = _np(ours), _np(theirs)
    assert np.dtype(o.dtype) == np.dtype(str(t.dtype).replace("torch.", "")), (o.dtype, t.dtype)
    np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)


# --- Llama's rotary embedding (Meta's model.py), run unchanged on both --------------------------------------
def _rope(lib, xq, xk, dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (lib.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = lib.arange(end)
    freqs = lib.outer(t, freqs).float()
    freqs_cis = lib.polar(lib.ones_like(freqs), freqs)
    xq_ = lib.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = lib.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
    freqs_cis = freqs_cis.view(*shape)
    xq_out = lib.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = lib.view_as_real(xk_ * freqs_cis).flatten(3)
    return freqs_cis, xq_out.type_as(xq), xk_out.type_as(xk)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_llama_rope_values_dtypes_and_gradients(dtype):
    x = RNG.standard_normal((2, 7, 3, 16)).astype(dtype)
    y = RNG.standard_normal((2, 7, 3, 16)).astype(dtype)
    w = RNG.standard_normal((2, 7, 3, 16)).astype(dtype)
    res = {}
    for lib in (torch, tinyattn):
        xq, xk = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        fc, q, k = _rope(lib, xq, xk, 16, 7)
        ((q * lib.tensor(w)).sum() + (k * k).sum()).backward()
        res[lib] = (fc, q, k, xq.grad, xk.grad)
    _same(res[tinyattn], res[torch], rtol=1e-5, atol=1e-5)


# --- every complex op, values and gradients w.r.t. complex leaves --------------------------------------
PROGRAMS = {
    "mul_div_add_sub": lambda L, a, b, w: ((a * w - a / (w + 2) + 3) * 1j - 2.5).abs().sum(),
    "matmul": lambda L, a, b, w: (a @ b).abs().sum() + (a.conj() @ b).angle().sum(),
    "shapes": lambda L, a, b, w: L.view_as_real(a.reshape(2, 6).t().flatten().view(3, 4).unsqueeze(0)
                                                .expand(2, 3, 4).transpose(1, 2)[1, ::2]).sum(),
    "index": lambda L, a, b, w: (a[[0, 2, 2]] * w[1]).real.sum() + a[1:, 2].imag.sum(),
    "sum_mean": lambda L, a, b, w: (a.sum(1) * w[:, 0]).abs().sum() + a.mean().abs(),
    "type_as": lambda L, a, b, w: (w.real.type_as(a) * a).imag.sum(),
    "holomorphic": lambda L, a, b, w: (a.exp() + (a + 5).log() + (a + 5).sqrt() + a.tanh() + a.sin() + a.cos()
                                       + a ** 2 + 1 / (a + 4)).abs().sum(),
    "einsum": lambda L, a, b, w: L.einsum("ij,jk->ik", a, b).abs().sum(),
    "cat_stack_where": lambda L, a, b, w: L.view_as_real(L.cat([a, w], 0) + L.stack([a, w]).sum(0).repeat(2, 1)).sum()
    + L.where(a.real > 0, a, w).abs().sum() + a.masked_fill(a.real > 0, 0.0).abs().sum(),
    "flip_roll_tril": lambda L, a, b, w: (a.flip(0) * w.roll(1, 1)).abs().sum() + a.tril().abs().sum()
    + a.diagonal().abs().sum(),
    "real_imag_conj": lambda L, a, b, w: (a.real * 2 + a.imag ** 3).sum() + (a.conj() * w).real.sum(),
    "complex_polar": lambda L, a, b, w: L.complex(a.real, a.imag * 2).abs().sum()
    + L.polar(a.abs() + 0.5, a.angle()).imag.sum(),
    "mH": lambda L, a, b, w: (a.mH @ w).abs().sum(),
    "neg_clone_reciprocal": lambda L, a, b, w: ((-a).t().contiguous() * a.clone().t() + a.reciprocal().t()
                                                + L.exp(a).t()).abs().sum(),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_programs_values_and_gradients(name, dtype):
    res = {}
    for lib in (torch, tinyattn):
        a, b = lib.tensor(Z1.astype(dtype), requires_grad=True), lib.tensor(Z2.astype(dtype), requires_grad=True)
        w = lib.tensor(W.astype(dtype))
        out = PROGRAMS[name](lib, a, b, w)
        out.backward()
        res[lib] = (out, a.grad if a.grad is not None else np.zeros(a.shape, dtype),
                    b.grad if b.grad is not None else np.zeros(b.shape, dtype))
    tol = 1e-4 if dtype == "complex64" else 1e-10
    _same(res[tinyattn], res[torch], rtol=tol, atol=tol)


def test_gradients_of_real_leaves_through_complex():
    x, y = RNG.standard_normal((3, 4, 2)), RNG.standard_normal((4, 2))
    res = {}
    for lib in (torch, tinyattn):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        r, th = lib.tensor(np.abs(y[:, 0]) + 0.5, requires_grad=True), lib.tensor(y[:, 1], requires_grad=True)
        z = lib.view_as_complex(a) * lib.view_as_complex(b) / lib.polar(r, th) + lib.complex(b[:, 0], b[:, 1])
        (lib.view_as_real(z) ** 2).sum().backward()
        res[lib] = (z, a.grad, b.grad, r.grad, th.grad)
    _same(res[tinyattn], res[torch])


def test_fills_and_mixed_real_complex_inputs():
    x0, w0 = RNG.standard_normal(2), RNG.standard_normal(2) + 1j * RNG.standard_normal(2)
    res = {}
    for lib in (torch, tinyattn):
        z = lib.zeros(2, dtype=lib.complex64)
        z.fill_(1j)
        z[1] = 2.0
        x, w = lib.tensor(x0, requires_grad=True), lib.tensor(w0, requires_grad=True)
        k = lib.tensor([1j, 2, 3, 4j])
        y = lib.cat([x, w]) * k + lib.where(lib.tensor([True, False, True, True]), lib.cat([w, x]), 1j)
        lib.view_as_real(y).sum().backward()
        res[lib] = (z, z.masked_fill(lib.tensor([False, True]), 3j), y, x.grad, w.grad)
    _same(res[tinyattn], res[torch])


def test_abs_and_angle_gradients_at_zero_and_on_the_axes():
    res = {}
    for lib in (torch, tinyattn):
        z = lib.tensor(np.array([3 + 4j, 0j, -2 + 0j, 5j]), requires_grad=True)
        k = lib.tensor(np.array([1.0, 2.0, 3.0, 4.0]))
        ((z.abs() * k).sum() + (z.angle() * k * k).sum()).backward()
        x = lib.tensor(np.array([-2.0, 0.0, 3.0]), requires_grad=True)
        x.angle().sum().backward()
        res[lib] = (z.grad, x.angle(), x.grad)
    _same(res[tinyattn], res[torch])


# --- promotion -----------------------------------------------------------------------------------------------
OPERANDS = {
    "f32": lambda L: L.ones(2), "f64": lambda L: L.ones(2, dtype=L.float64), "i64": lambda L: L.ones(2, dtype=L.int64),
    "b": lambda L: L.ones(2, dtype=L.bool), "c64": lambda L: L.ones(2, dtype=L.complex64) * 1j,
    "c128": lambda L: L.ones(2, dtype=L.complex128) * 1j, "0d c128": lambda L: L.tensor(1j, dtype=L.complex128),
    "0d f64": lambda L: L.tensor(2.0, dtype=L.float64), "1j": lambda L: 1j, "2.5": lambda L: 2.5, "3": lambda L: 3,
}


PAIRS = [(left, right) for left in ("f32", "f64", "i64", "b", "c64", "c128") for right in sorted(OPERANDS)
         if "c" in left + right or "j" in right]  # (a complex on one side at least: real promotion is not this file's)


@pytest.mark.parametrize("left, right", PAIRS)
def test_promotion_with_complex(left, right):
    for op in ("__add__", "__mul__", "__truediv__"):
        outs = {}
        for lib in (torch, tinyattn):
            try:
                outs[lib] = str(getattr(OPERANDS[left](lib), op)(OPERANDS[right](lib)).dtype).replace("torch.", "")
            except Exception as e:  # noqa: BLE001
                outs[lib] = type(e).__name__
        assert outs[tinyattn] == outs[torch], (op, outs)


# --- views share memory ------------------------------------------------------------------------------------
def test_writes_through_views_as_pytorch():
    res = {}
    for lib in (torch, tinyattn):
        z = lib.tensor(np.array([1 + 2j, 3 + 4j], dtype=np.complex64))
        r = lib.view_as_real(z)
        r[0, 1] = 9
        z[1] = 0
        z.real[0] = 7
        z.imag.mul_(2)
        x = lib.zeros(2, 2)
        c = lib.view_as_complex(x)
        c[0] = 1 + 1j
        c.mul_(1j)
        res[lib] = (z, r, x, c, np.array([z._version, r._version, x._version]))
    _same(res[tinyattn], res[torch])


def test_in_place_write_into_a_view_as_complex_view_gradient():
    w, y0 = RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 2))
    res = {}
    for lib in (torch, tinyattn):
        y = lib.tensor(y0, requires_grad=True)
        b = y.clone()
        z = lib.view_as_complex(b)
        z[1:].mul_(2 - 1j)
        z.real[0].mul_(3)
        z.imag[:, 1:] = z.real[:, :2] * 2
        t = lib.view_as_real(z * z).flatten(1)
        (t * lib.tensor(w.reshape(2, 6))).sum().backward()
        res[lib] = (b, z, y.grad)
    _same(res[tinyattn], res[torch])


# --- which calls raise ----------------------------------------------------------------------------------------
VIEW_ERRORS = {
    "real input": lambda L: L.view_as_real(L.ones(3, 2)),
    "long": lambda L: L.view_as_complex(L.zeros(3, 2, dtype=L.int64)),
    "0-d": lambda L: L.view_as_complex(L.zeros(())),
    "last 3": lambda L: L.view_as_complex(L.zeros(3, 3)),
    "transposed": lambda L: L.view_as_complex(L.zeros(2, 3).t()),
    "odd stride": lambda L: L.view_as_complex(L.zeros(3, 3)[:, :2]),
    "odd offset": lambda L: L.view_as_complex(L.zeros(10)[1:3]),
    "offset in 2-D": lambda L: L.view_as_complex(L.zeros(3, 4)[:, 1:3]),
    "list": lambda L: L.view_as_complex([1.0, 2.0]),
    "imag of real": lambda L: L.ones(2).imag,
    "polar long": lambda L: L.polar(L.tensor([1, 2]), L.tensor([0, 1])),
    "polar mixed": lambda L: L.polar(L.ones(2), L.ones(2, dtype=L.float64)),
    "complex long": lambda L: L.complex(L.tensor([1, 2]), L.tensor([0, 1])),
    "complex mixed": lambda L: L.complex(L.ones(2), L.ones(2, dtype=L.float64)),
    "complex loss": lambda L: (L.ones(2, dtype=L.complex64).requires_grad_() * 2).sum().backward(),
    "lt": lambda L: L.ones(2, dtype=L.complex64) < 1,
    "floordiv": lambda L: L.ones(2, dtype=L.complex64) // 2,
    "relu": lambda L: L.relu(L.ones(2, dtype=L.complex64)),
    "softmax": lambda L: L.softmax(L.ones(2, dtype=L.complex64), 0),
    "max": lambda L: L.ones(2, dtype=L.complex64).max(),
    "clamp": lambda L: L.ones(2, dtype=L.complex64).clamp(0, 1),
    "matmul mixed": lambda L: L.ones(2, 2, dtype=L.complex64) @ L.ones(2, 2),
    "iadd into float": lambda L: L.ones(2).add_(L.ones(2, dtype=L.complex64)),
    "argmax": lambda L: L.tensor([1 + 2j, 3 - 1j]).argmax(),
    "argmin": lambda L: L.argmin(L.tensor([1 + 2j, 3 - 1j])),
    "sort": lambda L: L.tensor([1 + 2j, 3 - 1j]).sort(),
    "topk": lambda L: L.tensor([1 + 2j, 3 - 1j]).topk(1),
    "max along a dim": lambda L: L.tensor([1 + 2j, 3 - 1j]).max(0),
}
MESSAGES = {"real input", "long", "0-d", "last 3", "transposed", "odd stride", "odd offset", "offset in 2-D", "list",
            "imag of real", "polar long", "polar mixed", "complex long", "complex mixed", "argmax", "argmin"}


@pytest.mark.parametrize("name", sorted(VIEW_ERRORS))
def test_the_same_calls_raise(name):
    with pytest.raises(Exception) as theirs:  # noqa: B017
        VIEW_ERRORS[name](torch)
    with pytest.raises(Exception) as ours:  # noqa: B017
        VIEW_ERRORS[name](tinyattn)
    if name in MESSAGES:  # PyTorch's own words (tinyattn may add a hint after them)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value).startswith(str(theirs.value).split("\n")[0]), (str(ours.value), str(theirs.value))


def test_calls_that_work_on_both():
    res = {}
    for lib in (torch, tinyattn):
        z = lib.tensor(np.array([1 + 2j, 3 - 1j], dtype=np.complex64))
        res[lib] = (z == z, z != 1, z.real, lib.view_as_complex(lib.zeros(2)),
                    lib.view_as_real(lib.tensor(1 + 2j)), lib.tensor([1 + 2j, 3]), lib.full((2,), 1j),
                    np.array([z.is_complex(), lib.is_complex(z), z.is_floating_point(), lib.ones(2).real is not None]))
    _same(res[tinyattn], res[torch])
    assert tinyattn.tensor([1j]).type() == torch.tensor([1j]).type()
    assert tinyattn.tensor([1j], dtype=tinyattn.complex128).type() == torch.tensor([1j], dtype=torch.complex128).type()


def test_repr():
    for make in (lambda L: L.tensor([1 + 2j, 3 - 1j]), lambda L: L.tensor(1 + 2j),
                 lambda L: L.tensor([1 + 2j]).requires_grad_()):
        assert repr(make(tinyattn)) == repr(make(torch))
    # a non-default complex dtype is named (PyTorch says torch.complex128; tinyattn, as for every dtype, NumPy's name)
    assert repr(tinyattn.tensor([1 + 2j], dtype=tinyattn.complex128)) == \
        repr(torch.tensor([1 + 2j], dtype=torch.complex128)).replace("torch.", "")
