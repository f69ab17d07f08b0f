"""ex06 · unbroadcast and matmul_backward, checked against finite differences over broadcast shapes.

Two parts, scored separately: unbroadcast and matmul_backward."""
import numpy as np

from tinyattn.gradcheck import numerical_grad

from ..oracle import ref, wrong
from ..checkkit import CheckFailed, Session, as_tuple, call_derived, distinct, expect_close, expect_each, \
    expect_exact

# C = A @ B: a numerical gradient needs one forward per inner index at least (2 * COST_K); honest <= 22
COST_B, COST_H, COST_N, COST_K = 2, 3, 16, 4096


def check_unbroadcast(s: Session, grad: np.ndarray, shape: tuple) -> None:
    out = s.call("unbroadcast", grad, shape)
    # a sum of at most 60 float64 terms is exact to ~1e-14: float32's digits (a float32 sum, returned as float32 or
    # as float64) are 1e-7 off, and a float64 grad asks for a float64 gradient
    expect_close(out, ref.unbroadcast(grad, shape), f"unbroadcast(grad {grad.shape}, {shape})",
                 wrong.unbroadcast_variants(grad, shape), rtol=1e-9, atol=1e-11, inputs=(grad,))


def explain_broadcast(A, B, dC, dA, dB) -> None:
    """CheckFailed when a gradient was left at the broadcast shape of the product (never summed back)."""
    full = {"dA": dC.shape[:-1] + (A.shape[-1],), "dB": dC.shape[:-2] + B.shape[-2:]}     # (..., n, k), (..., k, m)
    for name, got, x in (("dA", dA, A), ("dB", dB, B)):
        if np.shape(got) == full[name] != x.shape:
            raise CheckFailed(f"{name} has shape {full[name]}, the broadcast shape of the product, but its input has "
                              f"shape {x.shape}: it was broadcast in the forward pass, so sum the gradient back to "
                              f"its shape (unbroadcast's job)")


def check_matmul(s: Session, A: np.ndarray, B: np.ndarray) -> None:
    dC = s.rng.standard_normal(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + (A.shape[-2], B.shape[-1]))
    dA, dB = as_tuple(s.call("matmul_backward", A, B, dC), 2, "matmul_backward")
    numeric_A = numerical_grad(lambda a: float(np.sum((a @ B) * dC)), A)
    numeric_B = numerical_grad(lambda b: float(np.sum((A @ b) * dC)), B)
    full_A, full_B = dC @ np.swapaxes(B, -1, -2), np.swapaxes(A, -1, -2) @ dC      # before unbroadcasting
    explain_broadcast(A, B, dC, dA, dB)
    expect_each([(dA, numeric_A, "dA", wrong.unbroadcast_variants(full_A, A.shape), dict(rtol=1e-5, atol=1e-7)),
                 (dB, numeric_B, "dB", wrong.unbroadcast_variants(full_B, B.shape), dict(rtol=1e-5, atol=1e-7))])


def run(s: Session) -> None:
    rng = s.rng
    a, b, c = distinct(rng, 3, 2, 5)
    n = int(rng.integers(2, 5))
    with s.check("unbroadcast sums the leading axes: (n, n, n) -> (n, n)", "unbroadcast"):
        check_unbroadcast(s, rng.standard_normal((n, n, n)), (n, n))
    with s.check("unbroadcast keeps size-1 axes: (A, B, C) -> (A, 1, C)", "unbroadcast"):
        check_unbroadcast(s, rng.standard_normal((a, b, c)), (a, 1, c))
    with s.check("unbroadcast does both: (A, B, C) -> (B, 1)", "unbroadcast"):
        check_unbroadcast(s, rng.standard_normal((a, b, c)), (b, 1))
    with s.check("unbroadcast sums two or more extra leading axes: (A, B, C, D) -> (D,) and -> (1, D)", "unbroadcast"):
        e = int(rng.integers(2, 5))
        g1, g2 = rng.standard_normal((a, b, c, e)), rng.standard_normal((a, b, c, e))   # drawn before any call
        check_unbroadcast(s, g1, (e,))
        check_unbroadcast(s, g2, (1, e))
    with s.check("unbroadcast to a scalar shape ()", "unbroadcast"):
        check_unbroadcast(s, rng.standard_normal((a, b)), ())
    with s.check("unbroadcast leaves a matching shape alone", "unbroadcast"):
        check_unbroadcast(s, rng.standard_normal((a, b, c)), (a, b, c))

    B, H, i, k, m = distinct(rng, 5, 2, 6)
    with s.check("matmul_backward, 2-D: (n, k) @ (k, m)", "matmul_backward"):
        check_matmul(s, rng.standard_normal((i, k)), rng.standard_normal((k, m)))
    with s.check("matmul_backward, batched: (B, n, k) @ (B, k, m)", "matmul_backward"):
        check_matmul(s, rng.standard_normal((B, i, k)), rng.standard_normal((B, k, m)))
    with s.check("matmul_backward, a shared weight: (B, H, n, k) @ (k, m)", "matmul_backward"):
        check_matmul(s, rng.standard_normal((B, H, i, k)), rng.standard_normal((k, m)))
    with s.check("matmul_backward, both broadcast: (B, 1, n, k) @ (1, H, k, m)", "matmul_backward"):
        check_matmul(s, rng.standard_normal((B, 1, i, k)), rng.standard_normal((1, H, k, m)))
    with s.check("matmul_backward is the derived formula: exact to float64 rounding", "matmul_backward"):
        A, Bm = rng.standard_normal((B, 1, i, k)), rng.standard_normal((H, k, m))
        dC = rng.standard_normal((B, H, i, m))
        exact = ref.matmul_grads_exact(A, Bm, dC)
        dA, dB = as_tuple(s.call("matmul_backward", A, Bm, dC), 2, "matmul_backward")
        explain_broadcast(A, Bm, dC, dA, dB)
        expect_each([(dA, exact[0], "dA", None, {}), (dB, exact[1], "dB", None, {})])
        expect_exact([(dA, exact[0], "dA"), (dB, exact[1], "dB")])
    with s.check("matmul_backward costs a few forward passes, not one per entry (derived, not numerical)",
                 "matmul_backward"):
        A = rng.standard_normal((COST_B, 1, COST_N, COST_K))
        Bm = rng.standard_normal((COST_H, COST_K, COST_N))
        dC = rng.standard_normal((COST_B, COST_H, COST_N, COST_N))
        dA, dB = as_tuple(call_derived(s, "matmul_backward", lambda: A @ Bm, (A, Bm, dC)), 2, "matmul_backward")
        exact = ref.matmul_grads_exact(A, Bm, dC)
        explain_broadcast(A, Bm, dC, dA, dB)
        expect_each([(dA, exact[0], "dA", None, {}), (dB, exact[1], "dB", None, {})])
        expect_exact([(dA, exact[0], "dA"), (dB, exact[1], "dB")])
