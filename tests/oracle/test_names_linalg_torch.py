"""tinyattn/linalg.py against PyTorch 2.13: inv, det, slogdet, logdet, solve (matrix and vector right-hand
sides), cholesky (lower and upper), cholesky_inverse and the norms, batched; values and every gradient in
float64 to 1e-10 relative, and the errors' types and words."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(13)
M = rng.standard_normal((2, 3, 3))
SPD = M @ M.transpose(0, 2, 1) + 3 * np.eye(3)  # symmetric positive definite
RHS = rng.standard_normal((2, 3, 2))


def run(lib, fn, *arrays):
    ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    outs = out if isinstance(out, tuple) else (out,)
    total = sum((o * lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)))).sum()
                for o in outs if o.requires_grad)
    total.backward()
    return [o.detach().numpy() for o in outs] + [t.grad.numpy() for t in ts]


CASES = [("inv", lambda l, a: l.linalg.inv(a), (M,)), ("inverse", lambda l, a: l.inverse(a[0]), (M,)),
         ("det", lambda l, a: l.linalg.det(a), (M,)), ("det method", lambda l, a: a[1].det(), (M,)),
         ("slogdet", lambda l, a: l.linalg.slogdet(a), (M,)), ("logdet", lambda l, a: l.logdet(a), (SPD,)),
         ("solve", lambda l, a, b: l.linalg.solve(a, b), (M, RHS)),
         ("solve vector", lambda l, a, b: l.linalg.solve(a, b[..., 0]), (M, RHS)),
         ("cholesky", lambda l, a: l.linalg.cholesky(a), (SPD,)),
         ("cholesky upper", lambda l, a: l.linalg.cholesky(a, upper=True), (SPD,)),
         ("cholesky of a product", lambda l, m: l.linalg.cholesky(m @ m.mT + 3 * l.eye(3, dtype=l.float64)), (M,)),
         ("cholesky_inverse", lambda l, a: l.cholesky_inverse(l.linalg.cholesky(a)), (SPD,)),
         ("vector_norm", lambda l, a: l.linalg.vector_norm(a), (M,)),
         ("vector_norm dim", lambda l, a: l.linalg.vector_norm(a, 3, dim=(1, 2), keepdim=True), (M,)),
         ("vector_norm inf", lambda l, a: l.linalg.vector_norm(a, float("inf"), dim=-1), (M,)),
         ("matrix_norm", lambda l, a: l.linalg.matrix_norm(a), (M,)), ("norm", lambda l, a: l.linalg.norm(a[0]), (M,)),
         ("norm dim", lambda l, a: l.linalg.norm(a, dim=1), (M,)), ("norm fro", lambda l, a: l.linalg.norm(a[1], "fro"), (M,)),
         ("norm ord 1", lambda l, a: l.linalg.norm(a[0, 0], 1), (M,))]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_values_and_every_gradient_match_pytorch(name, fn, arrays):
    want, got = run(torch, fn, *arrays), run(tinyattn, fn, *arrays)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


ERRORS = [(lambda l: l.linalg.inv(l.zeros(2, 2)), "singular"),
          (lambda l: l.linalg.cholesky(l.tensor([[1.0, 2.0], [2.0, 1.0]])), "not positive-definite"),
          (lambda l: l.linalg.solve(l.ones(2, 2), l.ones(2)), "singular"),
          (lambda l: l.linalg.cholesky(l.ones(2, 3)), "must be batches of square matrices"),
          (lambda l: l.linalg.norm(l.ones(2, 2, 2), "fro"), "the input must be 1D or 2D. Got 3D")]


@pytest.mark.parametrize("call,text", ERRORS)
def test_errors_are_runtime_errors_with_pytorchs_words(call, text):
    for lib in (torch, tinyattn):
        with pytest.raises(RuntimeError, match=text):
            call(lib)
    with pytest.raises(tinyattn.linalg.LinAlgError if "singular" in text or "definite" in text else RuntimeError):
        call(tinyattn)
