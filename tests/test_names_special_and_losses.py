"""torch.special's names, lgamma / digamma / polygamma / mvlgamma / i0 / sinc, cross, aminmax, diagflat,
diag_embed (the method), rad2deg / deg2rad, matrix_power and randint_like without PyTorch: values against
math.lgamma, math.erfc and hand values, identities (recurrences, reflections), every gradient by float64 finite
differences over every element (tinyattn.gradcheck). Against PyTorch:
tests/oracle/test_names_special_and_losses_torch.py."""
import math
import warnings

import numpy as np
import pytest

import tinyattn as torch
from tinyattn import gradcheck

rng = np.random.default_rng(20)


def leaf(values):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def grid_without_poles(lo, hi, n):
    x = np.linspace(lo, hi, n)
    return x[~((x <= 0) & (x == np.round(x)))]


def test_lgamma_within_1e14_of_math_lgamma():
    x = np.concatenate([grid_without_poles(-30.3, 60, 9001), np.geomspace(1e-300, 1e300, 3001),
                        -np.geomspace(1e-12, 25, 2001) - 0.5 * 0])
    x = x[~((x <= 0) & (x == np.round(x)))]
    got = torch.lgamma(torch.tensor(x, dtype=torch.float64)).numpy()
    ref = np.array([math.lgamma(v) for v in x])
    assert (np.abs(got - ref) / np.maximum(1.0, np.abs(ref))).max() < 1e-14
    assert torch.lgamma(torch.tensor([1.0, 2.0])).tolist() == [0.0, 0.0]  # exact zeros, in float32 too
    poles = torch.lgamma(torch.tensor([0.0, -0.0, -1.0, -7.0, math.inf, -math.inf])).tolist()
    assert poles == [math.inf] * 6 and math.isnan(torch.lgamma(torch.tensor(math.nan)).item())


def test_digamma_and_polygamma_identities():
    x = np.concatenate([grid_without_poles(-12.3, 40, 2001), np.geomspace(1e-6, 1e6, 500)])
    x = x[np.abs(x - np.round(x)) > 0.05]  # (beside a pole the shift x + 1 itself rounds, and psi magnifies that)
    t = torch.tensor(x, dtype=torch.float64)
    psi = torch.digamma(t).numpy()
    assert np.allclose(torch.digamma(t + 1).numpy(), psi + 1 / x, rtol=1e-13, atol=1e-12)  # psi(x+1) = psi(x) + 1/x
    assert abs(torch.digamma(torch.tensor(1.0, dtype=torch.float64)).item() + 0.5772156649015329) < 1e-15
    assert abs(torch.digamma(torch.tensor(0.5, dtype=torch.float64)).item()
               - (-0.5772156649015329 - 2 * math.log(2))) < 1e-15
    assert torch.digamma(torch.tensor([0.0, -0.0, math.inf])).tolist() == [-math.inf, math.inf, math.inf]
    assert np.isnan(torch.digamma(torch.tensor([-1.0, -3.0, -math.inf])).numpy()).all()
    x, t = x[x > 0.5], t[torch.tensor(x > 0.5)]  # (below, the two sides cancel to far fewer digits)
    for n in (1, 2, 3, 5):  # psi^(n)(x+1) = psi^(n)(x) + (-1)^(n+1) n! / x^(n+1)
        p = torch.polygamma(n, t).numpy()
        rhs = p - (-1.0) ** (n + 1) * math.factorial(n) / x ** (n + 1)
        assert np.allclose(torch.polygamma(n, t + 1).numpy(), rhs, rtol=1e-11, atol=1e-12)
    assert abs(torch.polygamma(1, torch.tensor(1.0, dtype=torch.float64)).item() - math.pi ** 2 / 6) < 1e-15
    assert abs(torch.polygamma(2, torch.tensor(1.0, dtype=torch.float64)).item() + 2 * 1.2020569031595942) < 1e-14
    assert torch.polygamma(0, t).numpy().tolist() == torch.digamma(t).tolist()
    with pytest.raises(RuntimeError, match="does not support negative n"):
        torch.polygamma(-1, t)


def test_mvlgamma_is_a_sum_of_lgammas():
    x = torch.tensor([2.0, 3.5], dtype=torch.float64)
    want = [sum(math.lgamma(v - i / 2) for i in range(3)) + 3 * 2 / 4 * math.log(math.pi) for v in (2.0, 3.5)]
    assert np.allclose(torch.mvlgamma(x, 3).numpy(), want, rtol=1e-14)
    assert torch.special.multigammaln(x, 1).tolist() == torch.lgamma(x).tolist()
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        torch.mvlgamma(x, 0)
    assert torch.mvlgamma(torch.tensor([3]), 2).dtype == torch.float32


def test_bessel_against_series_and_asymptotics():
    # hand values (Abramowitz-Stegun table 9.8): I0(1), I1(1), I0(2.5)
    v = torch.special.i0(torch.tensor([1.0, 2.5, -1.0], dtype=torch.float64)).numpy()
    assert np.allclose(v, [1.2660658777520082, 3.2898391440501231, 1.2660658777520082], rtol=1e-15)
    assert abs(torch.special.i1(torch.tensor(1.0, dtype=torch.float64)).item() - 0.5651591039924851) < 1e-15
    half = np.linspace(0, 60, 1201)
    x = np.concatenate([-half[:0:-1], half])  # symmetric exactly
    t = torch.tensor(x, dtype=torch.float64)
    i0, i1 = torch.special.i0(t).numpy(), torch.special.i1(t).numpy()
    assert np.allclose(torch.special.i0e(t).numpy(), i0 * np.exp(-np.abs(x)), rtol=1e-14)
    assert np.allclose(torch.special.i1e(t).numpy(), i1 * np.exp(-np.abs(x)), rtol=1e-14, atol=1e-300)
    # the Wronskian-like identity I0(x) I1'(x) ... simplest: I1 is odd, I0 even, both continuous across |x| = 30
    assert np.array_equal(i1[::-1], -i1) and np.array_equal(i0[::-1], i0)
    near = torch.special.i0e(torch.tensor([30.0, np.nextafter(30.0, 31)], dtype=torch.float64)).numpy()
    assert abs(near[0] - near[1]) < 1e-15
    assert torch.special.i0e(torch.tensor([800.0], dtype=torch.float64)).item() > 0  # no e^800 formed


def test_normal_tails_keep_relative_accuracy():
    x = np.linspace(-26, 26, 1041)
    got = torch.special.erfc(torch.tensor(x, dtype=torch.float64)).numpy()
    ref = np.array([math.erfc(v) for v in x])
    assert (np.abs(got - ref) / ref).max() < 1e-14
    ndtr = torch.special.ndtr(torch.tensor(x, dtype=torch.float64)).numpy()
    assert (np.abs(ndtr - 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in x])) / ndtr).max() < 1e-13
    big = torch.tensor([-40.0, -10.0, 3.0], dtype=torch.float64)
    ln = torch.special.log_ndtr(big).numpy()
    assert abs(ln[1] - math.log(0.5 * math.erfc(10 / math.sqrt(2)))) < 1e-13 * abs(ln[1])
    assert abs(ln[0] - (-804.6084420137538)) < 1e-12 * 805  # where ndtr itself underflows
    ex = torch.special.erfcx(torch.tensor([0.0, 1.0, 30.0, -1.0], dtype=torch.float64)).numpy()
    assert np.allclose(ex, [1.0, math.exp(1) * math.erfc(1), 0.018795888861416751, math.exp(1) * math.erfc(-1)],
                       rtol=1e-14)
    p = np.concatenate([np.geomspace(1e-300, 0.5, 400), 1 - np.geomspace(1e-15, 0.5, 200)])
    back = torch.special.ndtr(torch.special.ndtri(torch.tensor(p, dtype=torch.float64))).numpy()
    assert (np.abs(back - p) / np.minimum(p, 1 - p)).max() < 1e-12
    assert torch.special.ndtri(torch.tensor([0.0, 0.5, 1.0])).tolist() == [-math.inf, 0.0, math.inf]
    assert np.isnan(torch.special.ndtri(torch.tensor([-0.1, 1.1])).numpy()).all()
    for f in (torch.special.erfcx, torch.special.log_ndtr):
        with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
            f(torch.tensor([1.0], dtype=torch.float16))


def test_entr_sinc_xlog1py_by_hand():
    e = torch.special.entr(torch.tensor([0.5, 0.0, -1.0, 1.0], dtype=torch.float64)).tolist()
    assert e[:3] == [0.5 * math.log(2), 0.0, -math.inf] and e[3] == 0
    s = torch.sinc(torch.tensor([0.0, 0.5, 2.5], dtype=torch.float64)).numpy()
    assert np.allclose(s, [1.0, 2 / math.pi, 1 / (2.5 * math.pi)], rtol=1e-15, atol=0)
    x = torch.special.xlog1py(torch.tensor([0.0, 2.0]), torch.tensor([-1.0, 1.0]))
    assert x.tolist() == [0.0, pytest.approx(2 * math.log(2))]
    assert torch.special.xlog1py(2, torch.tensor([1.0])).tolist() == [pytest.approx(2 * math.log(2))]
    assert torch.special.xlog1py(torch.tensor([1, 2]), torch.tensor([1, 2])).dtype == torch.float32


def test_special_aliases_are_the_same_ops():
    x = torch.tensor([[0.5, -1.0], [2.0, 3.0]], dtype=torch.float64)
    assert torch.special.softmax(x, 1).tolist() == torch.softmax(x, 1).tolist()
    assert torch.special.log_softmax(x, 0).tolist() == torch.log_softmax(x, 0).tolist()
    assert torch.special.logsumexp(x, 1).tolist() == torch.logsumexp(x, 1).tolist()
    assert torch.special.expm1(x).tolist() == x.expm1().tolist() and torch.special.log1p(x.abs()).tolist() == \
        x.abs().log1p().tolist()
    assert torch.special.exp2(torch.tensor([1, 3])).tolist() == [2.0, 8.0]
    assert torch.special.round(torch.tensor([1.26]), decimals=1).tolist() == [pytest.approx(1.3)]
    assert torch.special.psi is torch.special.digamma and torch.special.gammaln is torch.lgamma


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_integer_inputs_compute_in_the_default_float(dtype):
    t = torch.tensor([1, 0, 1], dtype=dtype)
    for f in (torch.lgamma, torch.digamma, torch.i0, torch.sinc, torch.special.i1, torch.special.ndtr,
              torch.special.entr, lambda v: torch.polygamma(1, v), torch.rad2deg, torch.deg2rad):
        assert f(t).dtype == torch.float32


def test_gradients_by_finite_differences():
    pos = leaf(rng.uniform(0.3, 6.0, (3, 4)))
    mixed = leaf(rng.uniform(-3.2, 4.0, (3, 4)) + 0.05)
    assert gradcheck(torch.lgamma, [mixed]) and gradcheck(torch.digamma, [mixed])
    assert gradcheck(lambda a: torch.polygamma(2, a), [pos]) and gradcheck(lambda a: a.polygamma(1), [mixed])
    assert gradcheck(lambda a: torch.mvlgamma(a + 2, 3), [pos])
    for f in (torch.i0, torch.special.i0e, torch.special.i1, torch.special.i1e, torch.sinc, torch.special.erfc,
              torch.special.erfcx, torch.special.ndtr, torch.special.log_ndtr):
        assert gradcheck(f, [mixed])
    assert gradcheck(lambda a: torch.special.i1e(a * 20), [mixed])  # across |x| = 30
    assert gradcheck(torch.special.entr, [pos])
    assert gradcheck(torch.special.ndtri, [leaf(rng.uniform(0.01, 0.99, (3, 4)))])
    assert gradcheck(torch.special.xlog1py, [mixed, pos])
    z = leaf([0.0])
    torch.special.i1(z).sum().backward()
    assert z.grad.tolist() == [0.5]  # I1'(0) = 1/2, the limit of I0 - I1/x


def test_cross_rules():
    a, b = leaf(rng.standard_normal((2, 3, 4))), leaf(rng.standard_normal((2, 3, 4)))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        c = torch.cross(a, b)  # the first dim of size 3: dim 1
    an, bn = a.detach().numpy(), b.detach().numpy()
    assert np.allclose(c.detach().numpy(), np.cross(an, bn, axis=1))
    assert np.allclose(torch.linalg.cross(a.transpose(1, 2), b.transpose(1, 2)).detach().numpy(),
                       np.cross(an, bn, axis=1).transpose(0, 2, 1))
    with pytest.raises(RuntimeError, match="dimension -1 must have length 3. Got 4 and 4"):
        torch.linalg.cross(a, b)
    with pytest.raises(RuntimeError, match="no dimension of size 3"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.cross(torch.ones(4), torch.ones(4))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        torch.linalg.cross(torch.tensor([1, 2, 3]), torch.tensor([4.0, 5, 6]))
    assert torch.linalg.cross(torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])).tolist() == [-3, 6, -3]
    assert torch.linalg.cross(torch.ones(4, 1, 3), torch.ones(1, 5, 3)).shape == (4, 5, 3)
    assert gradcheck(lambda x, y: x.cross(y, dim=1), [a, b])


def test_aminmax_diagflat_diag_embed_degrees():
    x = torch.tensor([[1, 5, 2], [0, -1, 3]])
    r = torch.aminmax(x)
    assert (r.min.item(), r.max.item()) == (-1, 5) and type(r).__name__ == "aminmax"
    r = torch.aminmax(x, dim=1, keepdim=True)
    assert r.min.tolist() == [[1], [-1]] and r.max.tolist() == [[5], [3]]
    with pytest.raises(RuntimeError, match="cannot compute aminmax over an empty dimension"):
        torch.aminmax(torch.tensor([]))
    xf = leaf([[1.0, 5, 5], [0, -1, 3]])
    r = torch.aminmax(xf, dim=1)
    (r.min.sum() + 2 * r.max.sum()).backward()
    assert xf.grad.tolist() == [[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]  # ties share, as amax
    assert torch.diagflat(torch.tensor([[1, 2], [3, 4]]), 1).tolist() == np.diag([1, 2, 3, 4], 1).tolist()
    assert torch.ones(2, 3).diag_embed().shape == (2, 3, 3) and torch.ones(2, 3).diag_embed(1, 0, 2).shape == (4, 2, 4)
    assert torch.rad2deg(torch.tensor([math.pi])).tolist() == [pytest.approx(180.0)]
    assert torch.deg2rad(torch.tensor([180])).tolist() == [pytest.approx(math.pi)]
    assert gradcheck(lambda a: a.diagflat(-1), [leaf(rng.standard_normal((2, 2)))])


def test_matrix_power():
    m = leaf([[2.0, 1.0], [1.0, 3.0]])
    mn = m.detach().numpy()
    for k in (0, 1, 2, 3, 5, -1, -2):
        assert np.allclose(torch.linalg.matrix_power(m, k).detach().numpy(), np.linalg.matrix_power(mn, k))
    assert torch.matrix_power(torch.tensor([[1, 1], [0, 1]]), 3).tolist() == [[1, 3], [0, 1]]
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        torch.matrix_power(torch.tensor([[1, 1], [0, 1]]), -1)
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        torch.linalg.matrix_power(torch.ones(2, 3), 2)
    with pytest.raises(TypeError, match="must be int, not float"):
        torch.linalg.matrix_power(m, 1.0)
    batch = leaf(rng.standard_normal((2, 3, 3)))
    for k in (3, -2):
        assert gradcheck(lambda a: a.matrix_power(k), [batch])


def test_randint_like():
    torch.manual_seed(0)
    x = torch.zeros(200, 3)
    r = torch.randint_like(x, 2, 5)
    assert r.dtype == torch.float32 and r.shape == (200, 3) and set(np.unique(r.numpy())) == {2.0, 3.0, 4.0}
    assert torch.randint_like(torch.zeros(2, dtype=torch.int32), 10).dtype == torch.int32
    assert torch.randint_like(x, high=4, dtype=torch.int64).dtype == torch.int64
    torch.manual_seed(3)
    a = torch.randint_like(x, 7)
    torch.manual_seed(3)
    assert torch.randint_like(x, 7).tolist() == a.tolist()  # drawn from tinyattn's generator
    with pytest.raises(RuntimeError, match="from=5 >= to=2"):
        torch.randint_like(x, 5, 2)
    with pytest.raises(RuntimeError, match="out of bounds for bool"):
        torch.randint_like(torch.zeros(2, dtype=torch.bool), 3)


# ------------------------------------------------------------------ losses, pdist, rrelu, lp_pool
import tinyattn.nn.functional as F  # noqa: E402


def test_poisson_nll_loss_by_hand():
    x, y = torch.tensor([0.3, -0.2, 1.0], dtype=torch.float64), torch.tensor([0.0, 1.0, 5.0], dtype=torch.float64)
    want = [math.exp(0.3), math.exp(-0.2) + 0.2, math.exp(1.0) - 5.0]
    assert np.allclose(F.poisson_nll_loss(x, y, reduction="none").numpy(), want, rtol=1e-15)
    full = F.poisson_nll_loss(x, y, full=True, reduction="none").numpy()
    assert np.allclose(full, want[:2] + [want[2] + 5 * math.log(5) - 5 + 0.5 * math.log(2 * math.pi * 5)])
    raw = F.poisson_nll_loss(x.abs(), y, log_input=False, reduction="sum").item()
    assert raw == pytest.approx(sum(a - b * math.log(a + 1e-8) for a, b in zip([0.3, 0.2, 1.0], [0.0, 1.0, 5.0])))
    assert torch.nn.PoissonNLLLoss()(x, y).item() == pytest.approx(sum(want) / 3)
    assert gradcheck(lambda a, b: F.poisson_nll_loss(a, b, full=True), [leaf([0.3, -0.2, 1.0]), leaf([0.5, 2.0, 5.0])])


def test_multi_margin_losses_by_hand():
    x = torch.tensor([[0.1, 0.2, 0.4, 0.8]], dtype=torch.float64)
    # PyTorch's documented example: target 3 -> (1 - 0.8 + 0.1) + (1 - 0.8 + 0.2) + (1 - 0.8 + 0.4), over C = 4
    assert F.multi_margin_loss(x, torch.tensor([3])).item() == pytest.approx(0.325)
    assert F.multilabel_margin_loss(x, torch.tensor([[3, 0, -1, 1]])).item() == pytest.approx(0.85)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, torch.tensor([3]), p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, torch.tensor([4]))
    w = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    two = F.multi_margin_loss(x, torch.tensor([1]), p=2, weight=w).item()
    assert two == pytest.approx(2 * ((1 - 0.2 + 0.1) ** 2 + (1 - 0.2 + 0.4) ** 2 + (1 - 0.2 + 0.8) ** 2) / 4)
    xs = leaf(rng.standard_normal((3, 5)))
    assert gradcheck(lambda a: F.multi_margin_loss(a, torch.tensor([0, 4, 2]), p=2, margin=0.7), [xs])
    t = torch.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1]])
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, t, reduction="none"), [xs])
    assert torch.nn.MultiLabelMarginLoss()(xs, t).item() == pytest.approx(F.multilabel_margin_loss(xs, t).item())


def test_triplet_with_distance_and_pdist():
    a, p, n = leaf(rng.standard_normal((4, 3))), leaf(rng.standard_normal((4, 3))), leaf(rng.standard_normal((4, 3)))
    plain = F.triplet_margin_with_distance_loss(a, p, n).item()
    assert plain == pytest.approx(F.triplet_margin_loss(a, p, n).item())
    cos = lambda u, v: 1 - F.cosine_similarity(u, v)  # noqa: E731
    assert gradcheck(lambda u, v, w: F.triplet_margin_with_distance_loss(u, v, w, distance_function=cos, swap=True,
                                                                          margin=0.3), [a, p, n])
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(a, p, n, margin=0)
    x = leaf(rng.standard_normal((5, 3)))
    xn = x.detach().numpy()
    want = [np.linalg.norm(xn[i] - xn[j]) for i in range(5) for j in range(i + 1, 5)]
    assert np.allclose(F.pdist(x).detach().numpy(), want)
    assert np.allclose(F.pdist(x, 1).detach().numpy(), [np.abs(xn[i] - xn[j]).sum() for i in range(5)
                                                        for j in range(i + 1, 5)])
    for q in (1, 2, 3.5):
        assert gradcheck(lambda v: F.pdist(v, q), [x])
    dup = leaf([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])
    F.pdist(dup).sum().backward()
    assert np.isfinite(dup.grad.numpy()).all()  # a zero distance has gradient 0, not NaN
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(x[0])


def test_rrelu_and_lp_pool():
    x = leaf([-1.0, 0.0, 2.0, -3.0])
    y = F.rrelu(x, 0.1, 0.3)  # eval: the mean slope 0.2, at 0 too
    y.sum().backward()
    assert np.allclose(y.detach().numpy(), [-0.2, 0.0, 2.0, -0.6]) and x.grad.tolist() == [0.2, 0.2, 1.0, 0.2]
    torch.manual_seed(5)
    m = torch.nn.RReLU()
    big = torch.tensor(-np.ones(2000))
    s = -m(big).numpy()
    assert s.min() >= 1 / 8 and s.max() <= 1 / 3 and abs(s.mean() - (1 / 8 + 1 / 3) / 2) < 0.01
    torch.manual_seed(5)
    assert (-m(big).numpy()).tolist() == s.tolist()  # from tinyattn's generator
    assert m.eval()(big).numpy().tolist() == [-(1 / 8 + 1 / 3) / 2] * 2000
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.2)
    with pytest.raises(NotImplementedError, match="leaky_relu_cpu"):
        F.rrelu(torch.tensor([-1, 2]))
    z = leaf(np.abs(rng.standard_normal((2, 3, 7))) + 0.1)
    out = F.lp_pool1d(z, 2, 3)
    zn = z.detach().numpy()
    assert np.allclose(out.detach().numpy(), np.sqrt((zn[..., :6] ** 2).reshape(2, 3, 2, 3).sum(-1)))
    assert np.allclose(F.lp_pool1d(z, float("inf"), 3).detach().numpy(), zn[..., :6].reshape(2, 3, 2, 3).max(-1))
    assert gradcheck(lambda v: F.lp_pool1d(v, 3, 2, 1), [z])
    w = leaf(np.abs(rng.standard_normal((1, 2, 4, 6))) + 0.1)
    assert np.allclose(torch.nn.LPPool2d(1, (2, 3))(w).detach().numpy(),
                       w.detach().numpy().reshape(1, 2, 2, 2, 2, 3).sum((3, 5)))
    assert gradcheck(lambda v: F.lp_pool2d(v, 2, 2, 1), [w])


def test_affine_grid_and_grid_sample():
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=torch.float64)
    for align in (False, True):
        grid = F.affine_grid(theta, (1, 1, 3, 4), align_corners=align)
        xs = np.linspace(-1, 1, 4) if align else (np.arange(4) * 2 + 1) / 4 - 1
        assert np.allclose(grid[0, 0, :, 0].numpy(), xs) and grid.shape == (1, 3, 4, 2)
        img = torch.tensor(rng.standard_normal((1, 2, 3, 4)))
        # the identity transform reads every pixel back exactly, in each mode and padding
        for mode in ("bilinear", "nearest"):
            for pad in ("zeros", "border", "reflection"):
                out = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=align)
                assert np.allclose(out.numpy(), img.numpy(), atol=1e-12)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(theta, (1, 1, 2, 2))
    img = torch.tensor([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]], dtype=torch.float64)
    g = torch.tensor([[[[0.0, 0.0], [-1.0, -1.0], [1.5, 0.0]]]], dtype=torch.float64)  # centre, corner, outside
    # x = 1.5 is pixel column 2.5 (align_corners): half of column 2 (3 and 6, mean 4.5), half outside (0)
    assert np.allclose(F.grid_sample(img, g, align_corners=True).numpy().ravel(), [3.5, 1.0, 2.25])
    assert np.allclose(F.grid_sample(img, g, padding_mode="border", align_corners=True).numpy().ravel(),
                       [3.5, 1.0, 4.5])
    # reflection: column 2.5 mirrors to 1.5, the mean of 2, 3, 5, 6
    assert np.allclose(F.grid_sample(img, g, padding_mode="reflection", align_corners=True).numpy().ravel(),
                       [3.5, 1.0, 4.0])
    x = leaf(rng.standard_normal((2, 2, 4, 5)))
    grid = leaf(rng.uniform(-1.3, 1.3, (2, 3, 4, 2)))
    for pad in ("zeros", "border", "reflection"):
        for align in (False, True):
            assert gradcheck(lambda a, b: F.grid_sample(a, b, padding_mode=pad, align_corners=align), [x, grid])
    th = leaf(rng.standard_normal((2, 2, 3)))
    assert gradcheck(lambda t, a: F.grid_sample(a, F.affine_grid(t, (2, 2, 3, 3), align_corners=False),
                                                align_corners=False), [th, x])
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(x, grid, mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.grid_sample(x, grid.float(), align_corners=False)


def test_in_place_forms_and_torch_aliases():
    x = torch.tensor([0.5, 2.5], dtype=torch.float64)
    for name, args in (("lgamma", ()), ("digamma", ()), ("polygamma", (2,)), ("mvlgamma", (1,)), ("i0", ()),
                       ("sinc", ()), ("erfc", ()), ("rad2deg", ()), ("deg2rad", ())):
        y = x.clone()
        assert getattr(y, name + "_")(*args) is y and y.tolist() == getattr(x, name)(*args).tolist()
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.tensor([1, 2]).lgamma_()  # a float result does not fit an int tensor
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf([1.0]).sinc_()
    a = leaf([0.5, 1.5])
    b = a * 1
    b.digamma_()
    b.sum().backward()
    assert np.allclose(a.grad.numpy(), torch.polygamma(1, a.detach()).numpy())  # the gradient goes through
    assert torch.erfc_(torch.tensor([0.0])).tolist() == [1.0] and torch.sinc_(torch.tensor([0.0])).tolist() == [1.0]
    assert torch.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0]])).tolist() == [5.0]
    assert torch.rrelu(torch.tensor([-1.0, 2.0]), 0.1, 0.3).tolist() == [pytest.approx(-0.2), 2.0]
