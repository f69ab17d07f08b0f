"""ex05 · attention_backward: dQ, dK, dV against central finite differences of the reference forward,
each reported on its own, and exact to float64 rounding (a derived formula, not finite differences).

Two parts, scored separately: attention_backward (no mask) and masks: a causal mask, and masks that
are NOT causal (an arbitrary (T, S) pattern in cross-attention, a padding mask broadcast from
(B, 1, S)), so an answer that ignores the mask or assumes a causal one is named."""
import numpy as np

from ..checkkit import Session, as_tuple, call_derived, distinct, expect_each, expect_exact
from ..oracle import ref, wrong

NAMES = ("dQ", "dK", "dV")
COST_B, COST_T, COST_D = 2, 64, 128    # dK alone needs T * d = 8192 perturbed forwards; honest variants <= 54


def check_grads(s: Session, Q, K, V, dout, mask=None) -> None:
    args = (Q, K, V, dout) if mask is None else (Q, K, V, dout, mask)
    got = as_tuple(s.call("attention_backward", *args), 3, "attention_backward")
    # the truth: d<dout, attention(Q, K, V)> / d(each input), by central differences in float64
    numeric = ref.attention_grads_numeric(Q, K, V, dout, mask)
    wrongs = wrong.attention_backward_variants(Q, K, V, dout, mask)
    expect_each([(got[i], numeric[i], name, {mid: [v[i] for v in outs] for mid, outs in wrongs.items()},
                  dict(rtol=1e-5, atol=1e-7, inputs=args[i:i + 1])) for i, name in enumerate(NAMES)])


def check_exact(s: Session, Q, K, V, dout, mask=None) -> None:
    args = (Q, K, V, dout) if mask is None else (Q, K, V, dout, mask)
    got = as_tuple(s.call("attention_backward", *args), 3, "attention_backward")
    exact = ref.attention_grads_exact(Q, K, V, dout, mask)
    wrongs = wrong.attention_backward_variants(Q, K, V, dout, mask)
    expect_each([(got[i], exact[i], name, {mid: [v[i] for v in outs] for mid, outs in wrongs.items()},
                  dict(rtol=1e-5, atol=1e-7, inputs=(Q, K, V, dout)[i:i + 1])) for i, name in enumerate(NAMES)])
    expect_exact([(got[i], exact[i], name) for i, name in enumerate(NAMES)])


def check_cost(s: Session, mask=None) -> None:
    """A derived backward costs a few forwards; a numerical one (even one that perturbs a whole batch, row
    or column at once) needs one forward per entry of K at least. Measured, then checked exactly."""
    B, T, d = COST_B, COST_T, COST_D
    Q, K, V, dout = (s.rng.standard_normal((B, T, d)) for _ in range(4))
    args = (Q, K, V, dout) if mask is None else (Q, K, V, dout, mask)
    got = as_tuple(call_derived(s, "attention_backward", lambda: ref.attention_out(Q, K, V, mask), args), 3,
                   "attention_backward")
    exact = ref.attention_grads_exact(*args)
    expect_each([(got[i], exact[i], name, None, dict(rtol=1e-5, atol=1e-7)) for i, name in enumerate(NAMES)])
    expect_exact([(got[i], exact[i], name) for i, name in enumerate(NAMES)])


def any_mask(rng: np.random.Generator, T: int, S: int) -> np.ndarray:
    """A (T, S) bool mask that is not causal in either direction: every query keeps at least one key,
    query 0 sees a later key, and the last query misses an earlier one."""
    m = rng.random((T, S)) < 0.6
    m[np.arange(T), rng.integers(0, S, size=T)] = True          # every row keeps a key (no all-masked row)
    m[0, S - 1] = True                                           # a "future" key a causal mask would hide
    m[T - 1, 0] = False                                          # a "past" key a causal mask would show
    m[T - 1, S - 2] = True
    return m


def run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"
    rng = s.rng
    B, T, S, d, dv = distinct(rng, 5, 2, 6)
    with s.check("gradients match finite differences (self-attention, T = S)", "attention_backward"):
        Q, K, V, dout = (rng.standard_normal((B, T, n)) for n in (d, d, dv, dv))
        check_grads(s, Q, K, V, dout)
    with s.check("cross-attention: T != S and d_v != d_k", "attention_backward"):
        Q, K, V, dout = (rng.standard_normal((B, n, m)) for n, m in ((T, d), (S, d), (S, dv), (T, dv)))
        check_grads(s, Q, K, V, dout)
    with s.check("no leading dims: 2-D inputs", "attention_backward"):
        Q, K, V, dout = (rng.standard_normal((T, n)) for n in (d, d, dv, dv))
        check_grads(s, Q, K, V, dout)
    with s.check("the derived formulas: exact to float64 rounding, beyond what finite differences reach",
                 "attention_backward"):
        Q, K, V, dout = (rng.standard_normal((B, n, m)) for n, m in ((T, d), (S, d), (S, dv), (T, dv)))
        check_exact(s, Q, K, V, dout)
    with s.check("costs a few forward passes, not one per entry (derived, not numerical)", "attention_backward"):
        check_cost(s)

    T2, S2 = distinct(rng, 2, 3, 7)
    with s.check("gradients with a causal mask", "masks"):
        Q, K, V, dout = (rng.standard_normal((B, T, n)) for n in (d, d, dv, dv))
        check_grads(s, Q, K, V, dout, ref.causal_mask(T))
    with s.check("gradients with an arbitrary (T, S) mask, not causal (cross-attention)", "masks"):
        Q, K, V, dout = (rng.standard_normal((B, n, m)) for n, m in ((T2, d), (S2, d), (S2, dv), (T2, dv)))
        check_grads(s, Q, K, V, dout, any_mask(rng, T2, S2))
    with s.check("gradients with a padding mask of shape (B, 1, S), broadcast over the queries", "masks"):
        Q, K, V, dout = (rng.standard_normal((B, n, m)) for n, m in ((T2, d), (S2, d), (S2, dv), (T2, dv)))
        lengths = rng.integers(1, S2 + 1, size=B)
        lengths[0] = S2 - 1                                     # at least one sequence really padded
        pad = (np.arange(S2)[None, None, :] < lengths[:, None, None])        # (B, 1, S)
        check_grads(s, Q, K, V, dout, pad)
    with s.check("with an arbitrary mask: exact to float64 rounding", "masks"):
        Q, K, V, dout = (rng.standard_normal((B, n, m)) for n, m in ((T2, d), (S2, d), (S2, dv), (T2, dv)))
        check_exact(s, Q, K, V, dout, any_mask(rng, T2, S2))
    with s.check("with a mask: costs a few forward passes, not one per entry", "masks"):
        check_cost(s, any_mask(rng, COST_T, COST_T))
