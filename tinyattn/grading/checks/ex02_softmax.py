"""ex02 · softmax and softmax_backward: axis handling, stability for huge logits, the full Jacobian."""
import numpy as np

from tinyattn.gradcheck import numerical_grad

from .. import references as ref
from .. import wrong
from ..checkkit import Session, distinct, expect_close, expect_float


def run(s: Session) -> None:
    rng = s.rng
    A, B, C = distinct(rng, 3, 2, 6)
    x = rng.standard_normal((A, B, C)) * 2.0
    with s.check("softmax over the last axis (the default)"):
        expect_close(s.call("softmax", x), ref.softmax(x, -1), "softmax(x)",
                     {"softmax_wrong_axis": wrong.softmax_other_axes(x, -1)})
    for axis in (0, 1):
        with s.check(f"softmax(x, axis={axis})"):
            expect_close(s.call("softmax", x, axis=axis), ref.softmax(x, axis), f"softmax(x, axis={axis})",
                         {"softmax_wrong_axis": wrong.softmax_other_axes(x, axis)})
    with s.check("large logits (around ±1000) give finite probabilities"):
        # a naive exp(1000) overflows to inf (and exp(-1000) underflows to 0): inf/inf and 0/0 are nan
        big = rng.standard_normal((A, C)) * 3.0 + rng.choice([-1000.0, 1000.0], size=(A, 1))
        expect_close(s.call("softmax", big), ref.softmax(big, -1), "softmax(large logits)",
                     {"softmax_wrong_axis": wrong.softmax_other_axes(big, -1)}, nonfinite_mistake="unstable_softmax")
    with s.check("float32 in, float out"):
        x32 = x.astype(np.float32)
        out = s.call("softmax", x32)
        expect_close(out, ref.softmax(x32, -1), "softmax(float32 x)",
                     {"softmax_wrong_axis": wrong.softmax_other_axes(x32, -1)}, inputs=(x32,))
        expect_float(out, "softmax(float32 x)", x32)

    y, dy = ref.softmax(x, -1), rng.standard_normal((A, B, C))
    with s.check("softmax_backward(y, dy) over the last axis"):
        expect_close(s.call("softmax_backward", y, dy), ref.softmax_backward(y, dy, -1), "dx",
                     {"softmax_backward_missing_term": wrong.softmax_backward_diagonal(y, dy)})
    with s.check("softmax_backward(y, dy, axis=1)"):
        y1 = ref.softmax(x, 1)
        expect_close(s.call("softmax_backward", y1, dy, axis=1), ref.softmax_backward(y1, dy, 1), "dx",
                     {"softmax_backward_missing_term": wrong.softmax_backward_diagonal(y1, dy)})
    with s.check("softmax_backward agrees with finite differences of softmax"):
        x2, g = rng.standard_normal((B, C)), rng.standard_normal((B, C))
        numeric = numerical_grad(lambda z: float(np.sum(ref.softmax(z, -1) * g)), x2)
        y2 = ref.softmax(x2, -1)
        expect_close(s.call("softmax_backward", y2, g), numeric, "dx", rtol=1e-5, atol=1e-7,
                     variants={"softmax_backward_missing_term": wrong.softmax_backward_diagonal(y2, g)})
