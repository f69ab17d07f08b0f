"""ex02 · softmax and softmax_backward: axis handling, stability for huge logits, dtype, the full Jacobian.

Two parts, scored separately: softmax (after notebook 01) and softmax_backward (after notebook 02).
"""
import numpy as np

from tinyattn.gradcheck import numerical_grad

from ..checkkit import (CheckFailed, Session, as_array, call_derived, distinct, expect_close, expect_dtype,
                        expect_exact, huge_logit_rows)
from ..oracle import ref, wrong

FORWARD, BACKWARD = "softmax", "softmax_backward"
COST_SHAPE = (512, 64)       # a numerical gradient perturbs 32768 entries; the honest variants cost <= 40 forwards


def backward_variants(y, dy, axis) -> dict:
    return {"softmax_backward_missing_term": wrong.softmax_backward_diagonal(y, dy),
            "softmax_backward_wrong_axis": wrong.softmax_backward_other_axes(y, dy, axis)}


def run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"        # math.exp(1000) raises OverflowError
    rng = s.rng
    A, B, C = distinct(rng, 3, 2, 6)
    x = rng.standard_normal((A, B, C)) * 2.0
    with s.check("softmax over the last axis (the default)", FORWARD):
        expect_close(s.call("softmax", x), ref.softmax(x, -1), "softmax(x)",
                     {"softmax_wrong_axis": wrong.softmax_other_axes(x, -1)}, inputs=(x,))
    for axis in (0, 1):
        with s.check(f"softmax(x, axis={axis})", FORWARD):
            expect_close(s.call("softmax", x, axis=axis), ref.softmax(x, axis), f"softmax(x, axis={axis})",
                         {"softmax_wrong_axis": wrong.softmax_other_axes(x, axis)}, inputs=(x,))
    with s.check("large logits: whole rows near +1000 and near -1000 give finite probabilities", FORWARD):
        # a naive exp(1000) overflows to inf (and exp(-1000) underflows to 0): inf/inf and 0/0 are nan;
        # rows near +1000 and rows near -1000 together also catch subtracting one max for the whole array
        big = rng.standard_normal((2 * A, C + 2)) * 3.0 + np.repeat([[1000.0], [-1000.0]], A, axis=0)
        expect_close(s.call("softmax", big), ref.softmax(big, -1), "softmax(large logits)",
                     {"softmax_wrong_axis": wrong.softmax_other_axes(big, -1)}, nonfinite_mistake="unstable_softmax",
                     inputs=(big,))
    with s.check("a large spread inside one row (like [0, 1000]) and mixed signs stay finite", FORWARD):
        # only the row MAX makes every exponent <= 0: the row min or mean leaves exp(1000) in such rows.
        # rows of 6 to 40 keys: the wrong shifts overflow at every width
        spread = huge_logit_rows(rng, int(rng.integers(3, 3 * A + 4)), int(rng.integers(6, 41)))
        expect_close(s.call("softmax", spread), ref.softmax(spread, -1), "softmax(rows like [0, 1000] and "
                     "[-1000, 0, 1000])", nonfinite_mistake="unstable_softmax", inputs=(spread,))
    with s.check("float32 in, float32 out (same dtype as x, as the docstring says)", FORWARD):
        x32 = x.astype(np.float32)
        got = s.call("softmax", x32)
        expect_close(got, ref.softmax(x32, -1), "softmax(float32 x)",
                     {"softmax_wrong_axis": wrong.softmax_other_axes(x32, -1)}, inputs=(x32,))
        expect_dtype(got, np.float32, "softmax(float32 x)", "the docstring asks for the same dtype as x")

    y, dy = ref.softmax(x, -1), rng.standard_normal((A, B, C))
    with s.check("softmax_backward(y, dy) over the last axis", BACKWARD):
        expect_close(s.call("softmax_backward", y, dy), ref.softmax_backward(y, dy, -1), "dx",
                     backward_variants(y, dy, -1), inputs=(y, dy))
    with s.check("softmax_backward(y, dy, axis=1)", BACKWARD):
        y1 = ref.softmax(x, 1)
        expect_close(s.call("softmax_backward", y1, dy, axis=1), ref.softmax_backward(y1, dy, 1), "dx",
                     backward_variants(y1, dy, 1), inputs=(y1, dy))
    x2, g = rng.standard_normal((B, C)), rng.standard_normal((B, C))
    y2 = ref.softmax(x2, -1)
    with s.check("softmax_backward agrees with finite differences of softmax", BACKWARD):
        expect_close(s.call("softmax_backward", y2, g), ref.softmax_grad_numeric(x2, g), "dx", rtol=1e-5,
                     atol=1e-7, variants=backward_variants(y2, g, -1))
    with s.check("softmax_backward is the derived formula: exact to float64 rounding", BACKWARD):
        x4, g4 = rng.standard_normal((A, B, C)) * 2.0, rng.standard_normal((A, B, C))
        y4 = ref.softmax(x4, -1)
        exact = ref.softmax_backward(y4, g4, -1)
        got = s.call("softmax_backward", y4, g4)
        expect_close(got, exact, "dx", backward_variants(y4, g4, -1), inputs=(y4, g4))
        expect_exact([(got, exact, "dx")])
    with s.check("softmax_backward is a formula in y: it holds for a y whose slices do not sum to 1", BACKWARD):
        # no x has softmax(x) = y here: a gradient found by differentiating softmax at a preimage of y (x = log y,
        # by finite differences, a complex step or dual numbers, however few forwards it batches them into)
        # answers for y / sum(y) instead; the derived formula needs y alone
        y5, g5 = rng.uniform(0.05, 1.0, (A, B, C)), rng.standard_normal((A, B, C))
        exact = ref.softmax_backward(y5, g5, -1)
        got = s.call("softmax_backward", y5, g5)
        normalised = y5 / y5.sum(axis=-1, keepdims=True)
        expect_close(got, exact, "dx", {**backward_variants(y5, g5, -1),
                                        "preimage_gradient": [ref.softmax_backward(normalised, g5, -1)]},
                     inputs=(y5, g5))
        expect_exact([(got, exact, "dx")])
    with s.check("softmax_backward costs a few forward passes, not one per entry (derived, not numerical)",
                 BACKWARD):
        xc, gc = rng.standard_normal(COST_SHAPE) * 2.0, rng.standard_normal(COST_SHAPE)
        yc = ref.softmax(xc, -1)
        got = call_derived(s, BACKWARD, lambda: ref.softmax(xc, -1), (yc, gc))
        exact = ref.softmax_backward(yc, gc, -1)
        expect_close(got, exact, "dx", backward_variants(yc, gc, -1), inputs=(yc, gc))
        expect_exact([(got, exact, "dx")])
    with s.check("softmax_backward agrees with finite differences of YOUR softmax", BACKWARD):
        # needs no recorded answer: your two functions must agree with each other on fresh inputs
        x3, g3 = rng.standard_normal((B, C)), rng.standard_normal((B, C))
        y3 = as_array(s.call("softmax", x3), "softmax(x)")
        numeric = numerical_grad(lambda z: float(np.sum(as_array(s.call("softmax", z), "softmax(x)") * g3)), x3)
        got = as_array(s.call("softmax_backward", y3, g3), "dx")
        if got.shape != numeric.shape:
            raise CheckFailed(f"dx has shape {got.shape}, expected {numeric.shape} (the shape of y)")
        expect_close(got, numeric, "dx against finite differences of your softmax", rtol=1e-5, atol=1e-7,
                     variants={"softmax_backward_missing_term": [y3 * g3, y3 * (1.0 - y3) * g3],
                               "softmax_backward_wrong_axis": [y3 * (g3 - np.sum(g3 * y3, axis=0, keepdims=True))]})
