"""Complex tensors (Llama's rotary embedding): view_as_real/view_as_complex/polar/complex, .real/.imag/.conj(),
abs/angle, and autograd through them with PyTorch's convention (z.grad = dL/dRe z + i dL/dIm z).

Expected values come from NumPy and from finite differences; tests/oracle/test_complex_torch.py compares the
same behaviours with PyTorch.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinyattn as torch
from tinyattn import gradcheck

RNG = np.random.default_rng(0)
W3 = torch.tensor(RNG.standard_normal(3) + 1j * RNG.standard_normal(3))


def leaf(shape, dtype=np.float64):
    return torch.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=True)


def complex_leaf(shape):
    return torch.tensor(RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape), requires_grad=True)


def fd_complex_grad(loss_of, z: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """dL/dRe z + i dL/dIm z by central differences, the real and imaginary part of each element separately."""
    grad = np.zeros_like(z)
    for k in np.ndindex(z.shape):
        parts = []
        for step in (eps, 1j * eps):
            zp, zm = z.copy(), z.copy()
            zp[k] += step
            zm[k] -= step
            parts.append((loss_of(zp) - loss_of(zm)) / (2 * eps))
        grad[k] = parts[0] + 1j * parts[1]
    return grad


def check_complex_leaves(fn, *leaves):
    """fn(*tensors) -> a real scalar tensor; each complex leaf's .grad against finite differences."""
    fn(*leaves).backward()
    for i, z in enumerate(leaves):
        def loss_of(a, i=i):
            args = [torch.tensor(a) if j == i else torch.tensor(t._data) for j, t in enumerate(leaves)]
            with torch.no_grad():
                return float(fn(*args).item())
        want = fd_complex_grad(loss_of, z._data.copy())
        assert z.grad.dtype == z.dtype
        np.testing.assert_allclose(z.grad.numpy(), want, rtol=1e-6, atol=1e-8)


# --- dtypes and the surface ---------------------------------------------------------------------
def test_dtype_names_and_is_complex():
    assert torch.complex64 is torch.cfloat is np.complex64
    assert torch.complex128 is torch.cdouble is np.complex128
    z = torch.zeros(2, dtype=torch.cfloat)
    assert z.dtype == np.complex64 and z.is_complex() and torch.is_complex(z) and not z.is_floating_point()
    assert not torch.ones(2).is_complex()
    assert torch.tensor([1 + 2j, 3]).dtype == np.complex64  # Python complex numbers: the default dtype's complex
    assert torch.tensor(np.array([1j])).dtype == np.complex128  # an ndarray keeps its dtype
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor([1j]).dtype == np.complex128
        assert "dtype" not in repr(torch.tensor([1j]))
    finally:
        torch.set_default_dtype(torch.float32)
    assert torch.finfo(torch.complex64).eps == np.finfo(np.float32).eps
    assert z.type() == "torch.ComplexFloatTensor" and torch.ones(1).type("torch.ComplexDoubleTensor").dtype == np.complex128
    assert torch.full((2,), 1j).dtype == np.complex64 and torch.full((2,), 1j).tolist() == [1j, 1j]


def test_repr_names_the_dtype_unless_it_is_the_default_complex():
    assert repr(torch.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    assert repr(torch.tensor([1 + 2j], dtype=torch.complex128)) == "tensor([1.+2.j], dtype=complex128)"
    assert repr(torch.tensor([1 + 2j]).requires_grad_()) == "tensor([1.+2.j], requires_grad=True)"


@pytest.mark.parametrize("a_dtype, other, want", [
    (np.float32, np.complex64, np.complex64),
    (np.float64, np.complex64, np.complex128),
    (np.int64, np.complex64, np.complex64),
    (np.complex64, np.complex128, np.complex128),
])
def test_promotion_of_tensors(a_dtype, other, want):
    a, b = torch.ones(2, dtype=a_dtype), torch.tensor([1 + 2j, 3j], dtype=other)
    for out in (a * b, b * a, a + b, a - b, b / a):
        assert out.dtype == want


@pytest.mark.parametrize("a_dtype, scalar, want", [
    (np.float32, 1j, np.complex64), (np.float64, 1j, np.complex128), (np.int64, 1j, np.complex64),
    (np.bool_, 1j, np.complex64), (np.complex64, 2.5, np.complex64),
])
def test_promotion_with_python_numbers(a_dtype, scalar, want):
    assert (torch.ones(2, dtype=a_dtype) * scalar).dtype == want


def test_promotion_with_zero_dim_tensors():
    # a 0-d complex tensor makes a float tensor complex at the float's own width
    assert (torch.ones(2) * torch.tensor(1j, dtype=torch.complex128)).dtype == np.complex64
    assert (torch.ones(2, dtype=torch.int32) * torch.tensor(1j, dtype=torch.complex128)).dtype == np.complex128
    assert (torch.tensor([1j]) * torch.tensor(2.0, dtype=torch.float64)).dtype == np.complex64


def test_values_match_numpy():
    a, b = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2)) + 0.5j
    ta, tb = torch.tensor(a), torch.tensor(b)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-12)
    np.testing.assert_allclose((ta * 2 - ta / (ta + 3)).numpy(), a * 2 - a / (a + 3), rtol=1e-12)
    np.testing.assert_allclose(ta.sum(1).numpy(), a.sum(1), rtol=1e-12)
    np.testing.assert_allclose(ta.mean().numpy(), a.mean(), rtol=1e-12)
    np.testing.assert_allclose(ta.abs().numpy(), np.abs(a), rtol=1e-12)
    np.testing.assert_allclose(ta.angle().numpy(), np.angle(a), rtol=1e-12)
    np.testing.assert_allclose(ta.conj().numpy(), np.conj(a))
    np.testing.assert_allclose(ta.exp().numpy(), np.exp(a), rtol=1e-12)
    np.testing.assert_allclose((ta ** 2).numpy(), a ** 2, rtol=1e-12)
    assert ta.real.dtype == np.float64 and np.array_equal(ta.real.numpy(), a.real)
    assert np.array_equal(ta.imag.numpy(), a.imag)
    assert torch.tensor([1 + 2j])[0].item() == 1 + 2j
    assert (ta == ta).all() and not (ta != ta).any()
    assert np.array_equal(ta.mH.numpy(), np.conj(a).T)


def test_fills_and_mixed_real_complex_inputs():
    z = torch.zeros(2, dtype=torch.complex64)
    z.fill_(1j)
    z[1] = 2.0
    assert z.tolist() == [1j, 2]
    assert z.masked_fill(torch.tensor([False, True]), 3j).tolist() == [1j, 3j]
    with pytest.raises(TypeError, match="fill_"):
        torch.zeros(2).fill_(1j)  # a real tensor can not hold it
    x, w = leaf(2), complex_leaf(2)
    k = torch.tensor([1j, 2, 3, 4j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a real leaf gets the real part of its complex gradient, silently)
        y = torch.cat([x, w]) * k + torch.where(torch.tensor([True, False, True, True]), torch.cat([w, x]), 1j)
        torch.view_as_real(y).sum().backward()
    assert x.grad.dtype == np.float64 and w.grad.dtype == np.complex128
    # d/dx_j of sum(Re y + Im y): x_j enters y_j times k_j, and y_{j+2} once where the condition holds
    kk = k.numpy()
    np.testing.assert_allclose(x.grad.numpy(), (kk[:2].real + kk[:2].imag) + [1, 1])
    np.testing.assert_allclose(w.grad.numpy(), np.conj(kk[2:]) * (1 + 1j) + [1 + 1j, 0])


def test_angle_of_real_tensors_is_zero_or_pi():
    x = torch.tensor([-2.0, 0.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = x.angle()
    assert y.dtype == np.float64 and np.array_equal(y.numpy(), [np.pi, 0.0, 0.0])
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


# --- views: view_as_real, view_as_complex, .real and .imag share memory --------------------------
def test_view_as_real_and_view_as_complex_shapes_dtypes_and_round_trip():
    x = torch.tensor(RNG.standard_normal((3, 4, 2)).astype(np.float32))
    z = torch.view_as_complex(x)
    assert z.shape == (3, 4) and z.dtype == np.complex64
    np.testing.assert_array_equal(z.numpy(), x.numpy()[..., 0] + 1j * x.numpy()[..., 1])
    back = torch.view_as_real(z)
    assert back.shape == (3, 4, 2) and back.dtype == np.float32 and np.array_equal(back.numpy(), x.numpy())
    assert torch.view_as_complex(torch.zeros(2, dtype=torch.float64)).shape == ()  # (2,) -> a 0-d complex
    assert torch.view_as_real(torch.tensor(1 + 2j)).tolist() == [1.0, 2.0]
    zt = torch.zeros(2, 3, dtype=torch.cfloat).t()  # a transposed complex tensor: any strides are viewed
    assert torch.view_as_real(zt).shape == (3, 2, 2)


def test_writes_propagate_through_the_views_both_ways():
    z = torch.tensor([1 + 2j, 3 + 4j])
    r = torch.view_as_real(z)
    r[0, 1] = 9
    assert z.tolist() == [1 + 9j, 3 + 4j]
    z[1] = 0
    assert r.tolist() == [[1.0, 9.0], [0.0, 0.0]]
    x = torch.zeros(2, 2)
    c = torch.view_as_complex(x)
    c[0] = 1 + 1j
    assert x.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert c._base is x and r._base is z
    z.real[0] = 7
    z.imag.mul_(2)
    assert z.tolist() == [7 + 18j, 0j]
    assert z._version == r._version == 4  # one version counter for a tensor and its views


def test_an_in_place_write_into_a_view_as_complex_view_has_the_right_gradient():
    y = leaf((2, 2))
    b = y.clone()
    torch.view_as_complex(b).mul_(1j)  # (a, c) -> (-c, a) in each row
    w = RNG.standard_normal((2, 2))
    (b * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), np.stack([w[:, 1], -w[:, 0]], axis=1))


def test_writes_through_real_and_imag_views_pass_gradcheck():
    def fn(y):
        z = torch.view_as_complex(y.clone())  # (2, 3)
        z[1:].mul_(2 - 1j)
        z.real[0].mul_(3)
        z.imag[:, 1:] = z.real[:, :2] * 2
        return torch.view_as_real(z * z)
    assert gradcheck(fn, [leaf((2, 3, 2))])


def test_view_rules_raise_pytorchs_errors():
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        torch.view_as_real(torch.ones(3, 2))
    with pytest.raises(RuntimeError, match="scalar type: Long"):
        torch.view_as_complex(torch.zeros(3, 2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="scalar type: Half"):
        torch.view_as_complex(torch.zeros(3, 2, dtype=torch.float16))
    with pytest.raises(RuntimeError, match="one or more dimensions"):
        torch.view_as_complex(torch.zeros(()))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        torch.view_as_complex(torch.zeros(3, 3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        torch.view_as_complex(torch.zeros(2, 3).t())
    with pytest.raises(RuntimeError, match="stride divisible by 2 for all but last dimension"):
        torch.view_as_complex(torch.zeros(3, 3)[:, :2])
    with pytest.raises(RuntimeError, match="storage_offset divisible by 2"):
        torch.view_as_complex(torch.zeros(10)[1:3])
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        torch.view_as_complex([1.0, 2.0])
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        torch.ones(2).imag
    r = torch.ones(2)
    assert r.real is r and r.conj() is r


def test_polar_and_complex_values_and_argument_errors():
    r, th = torch.tensor([1.0, 2.0]), torch.tensor([0.0, 1.0])
    z = torch.polar(r, th)
    assert z.dtype == np.complex64
    np.testing.assert_allclose(z.numpy(), [1, 2 * np.exp(1j)], rtol=1e-6)
    c = torch.complex(r, th)
    assert c.dtype == np.complex64 and c.tolist() == [1 + 0j, 2 + 1j]
    assert torch.polar(r.double(), th.double()).dtype == np.complex128
    assert torch.complex(r, th[:, None]).shape == (2, 2)  # broadcasting
    for fn in (torch.polar, torch.complex):
        with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double tensors but got Long"):
            fn(torch.tensor([1, 2]), torch.tensor([0, 1]))
        with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got scalar type Double"):
            fn(r, th.double())


# --- the one check: ops whose complex result or gradient would be wrong refuse ---------------------
@pytest.mark.parametrize("name, call", [
    ("ReLU", lambda z: z.relu()), ("Softmax", lambda z: z.softmax(0)), ("Sigmoid", lambda z: z.sigmoid()),
    ("Amax", lambda z: z.max()), ("Var", lambda z: z.var()), ("Clamp", lambda z: z.clamp(0, 1)),
])
def test_ops_without_a_checked_complex_gradient_refuse(name, call):
    with pytest.raises(NotImplementedError, match=f"^{name} is not implemented for complex tensors"):
        call(torch.tensor([1 + 2j, 3 - 1j]))


def test_ordering_comparisons_and_complex_losses_refuse():
    z = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        z < z  # noqa: B015
    with pytest.raises(ValueError, match="needs a real scalar output, got shape \\(\\), dtype complex64"):
        (z * 2).sum().backward()
    with pytest.raises(NotImplementedError, match="div_floor_cpu"):
        z // 2


@pytest.mark.parametrize("call", [lambda z: z.argmax(), lambda z: torch.argmin(z), lambda z: z.sort(),
                                  lambda z: torch.topk(z, 1), lambda z: z.max(0), lambda z: torch.argsort(z)])
def test_orderings_refuse(call):  # NumPy would order by real part, then imaginary part
    with pytest.raises(RuntimeError, match="does not support complex input"):
        call(torch.tensor([1 + 2j, 3 - 1j]))


def test_casting_complex_to_real_keeps_the_real_part_with_pytorchs_warning():
    z = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128, requires_grad=True)
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        x = z.to(torch.float64)
    assert x.tolist() == [1.0, 3.0]
    (x * torch.tensor([2.0, 5.0], dtype=torch.float64)).sum().backward()
    assert z.grad.tolist() == [2 + 0j, 5 + 0j]


# --- gradients: finite differences in float64 --------------------------------------------------
def test_real_input_through_complex_ops_back_to_a_real_loss():
    a, b = leaf((3, 4, 2)), leaf((4, 2))
    m = leaf((4, 5, 2))

    def fn(a, b, m):
        za, zb = torch.view_as_complex(a), torch.view_as_complex(b)  # (3, 4), (4,)
        zm = torch.view_as_complex(m)  # (4, 5)
        y = (za * zb - za / (zb + 2)).unsqueeze(0).expand(2, 3, 4)  # (2, 3, 4)
        y = y.transpose(0, 1).reshape(3, 8)[:, 1:7].reshape(3, 2, 3).flatten(1)  # (3, 6)
        w = za.conj() @ zm + zb.exp().sum() - (-za).t().contiguous().t().reciprocal().clone()[:, :1]  # (3, 5)
        out = torch.cat([y, w], dim=1)[[0, 2, 2]]  # (3, 11): indexing with repeats
        return torch.view_as_real(out)
    assert gradcheck(fn, [a, b, m])


def test_gradients_of_real_imag_abs_angle_complex():
    def fn(x, y):
        z = torch.complex(x, y)
        return torch.stack([z.real * 3, z.imag ** 2, z.abs(), z.angle(), (z * z).real], dim=0)
    assert gradcheck(fn, [leaf(5), leaf(5)])


def test_polar_gradients_with_respect_to_abs_and_angle():
    r = torch.tensor(RNG.uniform(0.5, 2.0, 6), requires_grad=True)
    assert gradcheck(lambda r, th: torch.view_as_real(torch.polar(r, th)), [r, leaf(6)])
    zero = torch.zeros(3, dtype=torch.float64, requires_grad=True)  # at abs = 0 too (the derivative: cos, sin)
    assert gradcheck(lambda r, th: torch.view_as_real(torch.polar(r, th)), [zero, leaf(3)])


def test_complex_leaf_gradients_match_finite_differences_of_real_and_imaginary_parts():
    z, w = complex_leaf((3, 4)), complex_leaf((4, 2))
    v = torch.tensor(RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2)))

    def fn(z, w):
        y = (z @ w) * v / (z[:, :2] + 3) - z.sum(1, keepdim=True).conj()  # (3, 2)
        return y.abs().sum() + y.angle().mean() + (y.exp().real * 0.1).sum() + torch.view_as_real(y)[..., 1].sum()
    check_complex_leaves(fn, z, w)


def test_gradcheck_takes_complex_inputs_and_outputs():
    w = torch.tensor(RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2)))
    assert gradcheck(lambda z, x: (z @ w) * x.unsqueeze(1) / (z[:, :2] + 3), [complex_leaf((3, 4)), leaf(3)])
    assert gradcheck(lambda z: torch.stack([z.abs(), z.angle()]), [complex_leaf(5)])


def test_every_op_registered_for_complex_passes_gradcheck():
    m = torch.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])

    def holomorphic(z):  # (3, 4) complex -> complex outputs
        s = z + 3
        return torch.stack([z.exp(), s.log(), s.sqrt(), z.tanh(), z.sin(), z.cos(), z ** 2, s ** 0.5, s ** -1.5,
                            torch.einsum("ij,kj->ik", z, z)[:, :1].expand(3, 4)])

    def real_linear(z):
        return torch.cat([z.flip(0), z.roll(1, 1), z.repeat(1, 2)[:, 2:6], z.tril(), z.masked_fill(m, 2j),
                          torch.where(m, z, -z), torch.stack([z, z.t().contiguous().t()]).sum(0),
                          z.diagonal().unsqueeze(0).expand(3, 3).reshape(3, 3)[:, :1].expand(3, 4)], 0)
    for fn in (holomorphic, real_linear):
        assert gradcheck(fn, [complex_leaf((3, 4))])


def test_gradcheck_catches_a_gradient_without_the_conjugate():
    class WrongMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a  # right for real numbers; complex ones need g * conj(b), g * conj(a)
    from tinyattn.compat.complex import TWINS
    TWINS[WrongMul] = WrongMul  # (let the one check pass it, as a registered op)
    try:
        with pytest.raises(torch.GradcheckError, match="gradcheck failed for input 0"):
            gradcheck(lambda z: WrongMul.apply(z, W3), [complex_leaf(3)])
        assert gradcheck(lambda x: WrongMul.apply(x, x), [leaf(3)])  # real inputs: right
    finally:
        del TWINS[WrongMul]


def test_conventions_of_abs_and_angle_at_zero():
    z = torch.tensor([3 + 4j, 0j, -2 + 0j], dtype=torch.complex128, requires_grad=True)
    (z.abs() * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0.6 + 0.8j, 0, -3])  # g * z / |z|, and 0 at z = 0
    z.grad = None
    (z.angle() * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [-0.16 + 0.12j, 0, -1.5j])  # g * i z / |z|^2, and 0 at z = 0


def test_mul_gradient_is_grad_times_conj_of_the_other():
    z, w = complex_leaf(3), complex_leaf(3)
    g = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    (z * w).backward(torch.tensor(g))
    np.testing.assert_allclose(z.grad.numpy(), g * np.conj(w._data), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), g * np.conj(z._data), rtol=1e-12)


# --- Llama's rotary embedding, as Meta's reference model.py writes it ------------------------------
def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def reshape_for_broadcast(freqs_cis, x):
    shape = [d if i == 1 or i == x.ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def numpy_rope(x: np.ndarray, theta: float = 10000.0) -> np.ndarray:
    """The same rotation with real cos/sin: each pair (x_2j, x_2j+1) at position t turned by t * theta^(-2j/D)."""
    B, T, H, D = x.shape
    angles = np.arange(T)[:, None] * theta ** (-np.arange(0, D, 2) / D)  # (T, D/2)
    cos, sin = np.cos(angles)[None, :, None, :], np.sin(angles)[None, :, None, :]  # (1, T, 1, D/2)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = even * cos - odd * sin, even * sin + odd * cos
    return out


def test_llama_rope_matches_a_real_cos_sin_rope_with_gradients():
    B, T, H, D = 2, 6, 3, 8
    xq, xk = leaf((B, T, H, D), np.float32), leaf((B, T, H, D), np.float32)
    freqs_cis = precompute_freqs_cis(D, T)
    assert freqs_cis.dtype == np.complex64 and freqs_cis.shape == (T, D // 2)
    q, k = apply_rotary_emb(xq, xk, freqs_cis)
    assert q.dtype == k.dtype == np.float32 and q.shape == k.shape == (B, T, H, D)
    np.testing.assert_allclose(q.numpy(), numpy_rope(xq.numpy().astype(np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(k.numpy(), numpy_rope(xk.numpy().astype(np.float64)), rtol=1e-5, atol=1e-5)
    wq, wk = RNG.standard_normal((B, T, H, D)), RNG.standard_normal((B, T, H, D))
    ((q * torch.tensor(wq, dtype=torch.float32)).sum() + (k * torch.tensor(wk, dtype=torch.float32)).sum()).backward()
    # the rotation is orthogonal: the gradient is w rotated back, i.e. numpy_rope with the angles negated
    np.testing.assert_allclose(xq.grad.numpy(), _rotate_back(wq), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xk.grad.numpy(), _rotate_back(wk), rtol=1e-4, atol=1e-5)


def _rotate_back(w: np.ndarray, theta: float = 10000.0) -> np.ndarray:
    B, T, H, D = w.shape
    angles = np.arange(T)[:, None] * theta ** (-np.arange(0, D, 2) / D)
    cos, sin = np.cos(angles)[None, :, None, :], np.sin(angles)[None, :, None, :]
    out = np.empty_like(w)
    out[..., 0::2], out[..., 1::2] = w[..., 0::2] * cos + w[..., 1::2] * sin, -w[..., 0::2] * sin + w[..., 1::2] * cos
    return out


def test_llama_rope_in_float64_passes_gradcheck():
    freqs_cis = precompute_freqs_cis(8, 5).to(torch.complex128)

    def rope(x):
        x_ = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_ * reshape_for_broadcast(freqs_cis, x_)).flatten(3)
    assert gradcheck(rope, [leaf((2, 5, 2, 8))])


def test_no_warning_on_the_rope_path():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        apply_rotary_emb(torch.randn(1, 4, 2, 8), torch.randn(1, 4, 2, 8), precompute_freqs_cis(8, 4))
