"""The second batch of census-tail names against PyTorch 2.13: the in-place family (abs_ ... pow_,
addcmul_, addcdiv_, baddbmm_, addmm_, index_add_) with the gradients through them, the BLAS-style
products (baddbmm, addbmm, addmv, addr, mv, vdot, inner, kron, tensordot), and the shape helpers
(movedim, tile, take_along_dim, tensor_split, diag_embed, block_diag, broadcast_*, atleast_*, ...)."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(9)
A, B = rng.uniform(0.5, 2.0, (4, 3)), rng.standard_normal((4, 3))
C3, D3 = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3, 5))


def both(fn, *arrays, dtype="float64"):
    res = []
    for lib in (torch, tinyattn):
        ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
        outs = fn(lib, *ts)
        outs = outs if isinstance(outs, tuple) else (outs,)
        total = sum((o.double() * lib.tensor(np.linspace(0.5, 2, o.numel()).reshape(tuple(o.shape)))).sum()
                    for o in outs if o.dtype in (lib.float32, lib.float64) and o.requires_grad)
        if not isinstance(total, int):
            total.backward()
        res.append(([o.detach().numpy() for o in outs], [str(o.dtype).split(".")[-1] for o in outs],
                    [None if t.grad is None else t.grad.numpy() for t in ts]))
    return res


INPLACE = [(name, (lambda n: lambda l, x, y: getattr(x * 1, n)())(name)) for name in
           ("abs_", "neg_", "sqrt_", "rsqrt_", "log_", "sin_", "cos_", "floor_", "ceil_", "trunc_", "frac_", "reciprocal_",
            "square_")] + [
    ("pow_", lambda l, x, y: (x * 1).pow_(3)), ("pow_ tensor", lambda l, x, y: (x * 1).pow_(y)),
    ("round_", lambda l, x, y: (x * 10).round_()), ("clip_", lambda l, x, y: (x * 1).clip_(0.8, 1.5)),
    ("addcmul_", lambda l, x, y: (x * 1).addcmul_(y, y, value=0.1)), ("addcdiv_", lambda l, x, y: (y * 1).addcdiv_(y, x.sqrt() + 1e-8, value=-0.5)),
    ("addcmul", lambda l, x, y: l.addcmul(x, x, y)), ("addcdiv", lambda l, x, y: l.addcdiv(x, y, x, value=2)),
    ("addmm_", lambda l, x, y: (x[:, :1] * 1).expand(4, 4).contiguous().addmm_(x, y.t(), beta=0.5, alpha=2)),
    ("index_add_", lambda l, x, y: (x * 1).index_add_(0, l.tensor([0, 2, 0]), y[:3], alpha=2)),
]
PRODUCTS = [
    ("baddbmm", lambda l, c, d: l.baddbmm(c[:, :, :1], c, d, beta=0.5, alpha=0.125)),
    ("baddbmm beta0", lambda l, c, d: c[:, :1, :1].baddbmm(c, d, beta=0)),
    ("baddbmm_", lambda l, c, d: (c.bmm(d) * 1).baddbmm_(c, d, alpha=2)),
    ("addbmm", lambda l, c, d: l.addbmm(c[0, :, :1], c, d)), ("mv", lambda l, c, d: l.mv(c[0], d[0, :, 0])),
    ("addmv", lambda l, c, d: l.addmv(c[0, :, 0], c[0], d[0, :, 0], beta=2, alpha=3)),
    ("addr", lambda l, c, d: l.addr(c[0], c[0, :, 0], d[0, 0, :3], alpha=0.5)),
    ("vdot", lambda l, c, d: l.vdot(c[0, 0], d[0, :, 0])), ("inner", lambda l, c, d: l.inner(c, d[0].t())),
    ("dist", lambda l, c, d: l.dist(c[0, 0], d[0, :, 0], 3)), ("kron", lambda l, c, d: l.kron(c[0], d[0, :2, :2])),
    ("tensordot 2", lambda l, c, d: l.tensordot(c, d.permute(1, 0, 2), dims=1)),
    ("tensordot lists", lambda l, c, d: l.tensordot(c, d, dims=([0, 2], [0, 1]))),
]
SHAPES = [
    ("movedim", lambda l, c, d: l.movedim(c, 0, -1)), ("moveaxis", lambda l, c, d: c.moveaxis((0, 1), (2, 0))),
    ("tile", lambda l, c, d: l.tile(c, (2,))), ("tile more", lambda l, c, d: c[0, 0].tile((2, 3))),
    ("take_along_dim", lambda l, c, d: l.take_along_dim(c, l.tensor([[[2], [0], [1], [1]]]), 2)),
    ("take_along_dim flat", lambda l, c, d: c.take_along_dim(l.tensor([5, 0, 7]))),
    ("tensor_split", lambda l, c, d: l.tensor_split(c, 3, 1)), ("tensor_split idx", lambda l, c, d: c.tensor_split([1, 3], 2)),
    ("hsplit", lambda l, c, d: l.hsplit(c[0], 3)), ("vsplit", lambda l, c, d: c[0].vsplit([1])),
    ("fliplr", lambda l, c, d: l.fliplr(c[0])), ("flipud", lambda l, c, d: c[0].flipud()),
    ("diagonal", lambda l, c, d: l.diagonal(c, 1, 1, 2)), ("diag_embed", lambda l, c, d: l.diag_embed(c)),
    ("diag_embed offset", lambda l, c, d: l.diag_embed(c[0], -1)), ("diag_embed dims", lambda l, c, d: l.diag_embed(c[0], 1, 0, 2)),
    ("block_diag", lambda l, c, d: l.block_diag(c[0], d[0, 0], d[1, :2, :2])),
    ("broadcast_to", lambda l, c, d: l.broadcast_to(c[0, :1], (2, 4, 3))),
    ("broadcast_tensors", lambda l, c, d: l.broadcast_tensors(c[:, :1], d[0, :, :1].t())),
    ("atleast_3d", lambda l, c, d: l.atleast_3d(c[0, 0], c[0])), ("atleast_2d", lambda l, c, d: l.atleast_2d(c[0, 0])),
    ("logit", lambda l, c, d: l.logit(l.sigmoid(c))), ("logit eps", lambda l, c, d: l.sigmoid(c * 5).logit(0.05)),
    ("masked_select", lambda l, c, d: l.masked_select(c, c > 0)), ("nanmean", lambda l, c, d: l.nanmean(c, 1)),
    ("scatter", lambda l, c, d: l.scatter(c[0], 0, l.tensor([[1, 0, 3]]), d[0, :1, :3])),
    ("scatter_add", lambda l, c, d: l.scatter_add(c[0], 1, l.tensor([[0, 0, 2]] * 4), d[0].t()[:4])),
    ("cosine_similarity", lambda l, c, d: l.cosine_similarity(c, c.flip(0), 2)),
    ("pairwise_distance", lambda l, c, d: l.pairwise_distance(c, c.flip(1))),
]


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-13), ("float32", 5e-6)])
@pytest.mark.parametrize("name,fn", INPLACE + PRODUCTS + SHAPES, ids=[c[0] for c in INPLACE + PRODUCTS + SHAPES])
def test_values_dtypes_and_every_gradient_match_pytorch(name, fn, dtype, tol):
    arrays = (A, B) if (name, fn) in INPLACE else (C3, D3)
    (vt, dt, gt), (va, da, ga) = both(fn, *arrays, dtype=dtype)
    assert da == dt
    for a, t in zip(va, vt):
        assert a.shape == t.shape
        np.testing.assert_allclose(a, t, rtol=tol, atol=tol)
    for a, t in zip(ga, gt):
        assert (a is None) == (t is None)
        if a is not None:
            np.testing.assert_allclose(a, t, rtol=tol, atol=tol)


PLAIN = [("isin", lambda l: l.isin(l.tensor([1, 2, 3, 2]), l.tensor([2, 5]))),
         ("isin invert", lambda l: l.isin(l.tensor([[1, 2], [3, 4]]), l.tensor([4]), invert=True)),
         ("logspace", lambda l: l.logspace(0, 2, 5)), ("logspace base", lambda l: l.logspace(-1, 3, 4, base=2.0)),
         ("argwhere", lambda l: l.argwhere(l.tensor([[0, 1], [2, 0]]))),
         ("kron int", lambda l: l.kron(l.tensor([[1, 2], [3, 4]]), l.tensor([[1, 0], [0, 1]]))),
         ("int abs_", lambda l: l.tensor([-1, 2]).abs_()), ("int square_", lambda l: l.tensor([-3, 2]).square_()),
         ("int pow_", lambda l: l.tensor([3, 2]).pow_(2)), ("fill_diagonal_", lambda l: l.zeros(3, 4).fill_diagonal_(5.0)),
         ("fill_diagonal_ wrap", lambda l: l.zeros(7, 3).fill_diagonal_(2.0, wrap=True)),
         ("random_ shape", lambda l: l.tensor(list(l.zeros(2, 3, dtype=l.int64).random_(4, 5).shape)))]


@pytest.mark.parametrize("name,fn", PLAIN, ids=[c[0] for c in PLAIN])
def test_integer_and_plain_results_match_pytorch(name, fn):
    got = [fn(lib) for lib in (torch, tinyattn)]
    assert str(got[1].dtype).split(".")[-1] == str(got[0].dtype).split(".")[-1]
    np.testing.assert_allclose(got[1].numpy(), got[0].numpy(), rtol=1e-6)


ERRORS = [(lambda l: l.tensor([1, 2]).sqrt_(), RuntimeError, "result type Float can't be cast to the desired output type Long"),
          (lambda l: l.tensor([1, 2]).pow_(0.5), RuntimeError, "can't be cast to the desired output type Long"),
          (lambda l: l.ones(3, requires_grad=True).abs_(), RuntimeError, "a leaf Variable that requires grad"),
          (lambda l: l.ones(3, dtype=l.int64).addcdiv_(l.ones(3, dtype=l.int64), l.ones(3, dtype=l.int64)), RuntimeError,
           "Integer division with addcdiv is no longer supported"),
          (lambda l: l.is_nonzero(l.ones(2)), RuntimeError, "more than one value is ambiguous"),
          (lambda l: l.is_nonzero(l.ones(0)), RuntimeError, "no values is ambiguous"),
          (lambda l: l.fliplr(l.ones(3)), RuntimeError, "Input must be >= 2-d."),
          (lambda l: l.ones(3).exponential_(-1.0), RuntimeError, "exponential_ expects lambda > 0.0")]


@pytest.mark.parametrize("call,exc,text", ERRORS)
def test_errors_are_pytorchs(call, exc, text):
    for lib in (torch, tinyattn):
        with pytest.raises(exc, match=text):
            call(lib)


def test_random_fills_and_flags():
    for lib in (torch, tinyattn):
        e = lib.ones(20000, dtype=lib.float64).exponential_(4.0)
        assert e.dtype == lib.float64 and abs(e.mean().item() - 0.25) < 0.01 and e.min().item() >= 0
        r = lib.zeros(20000, dtype=lib.int64).random_(2, 5)
        assert set(r.tolist()) == {2, 3, 4}
        assert set(lib.zeros(1000).random_(3).tolist()) == {0.0, 1.0, 2.0}
        assert lib.is_nonzero(lib.tensor([0.5])) is True and lib.is_nonzero(lib.tensor(0)) is False
        lib.use_deterministic_algorithms(True)
        assert lib.are_deterministic_algorithms_enabled() is True
        lib.use_deterministic_algorithms(False)
        assert lib.tensor([1]).is_signed() and not lib.tensor([1], dtype=lib.uint8).is_signed()
