"""ex05 · attention_backward: dQ, dK, dV against central finite differences of the reference forward,
each reported on its own, and exact to float64 rounding (a derived formula, not finite differences)."""
from ..checkkit import Session, as_tuple, distinct, expect_each, expect_exact
from ..oracle import ref, wrong

NAMES = ("dQ", "dK", "dV")


def check_grads(s: Session, Q, K, V, dout, mask=None) -> None:
    args = (Q, K, V, dout) if mask is None else (Q, K, V, dout, mask)
    got = as_tuple(s.call("attention_backward", *args), 3, "attention_backward")
    # the truth: d<dout, attention(Q, K, V)> / d(each input), by central differences in float64
    numeric = ref.attention_grads_numeric(Q, K, V, dout, mask)
    wrongs = wrong.attention_backward_variants(Q, K, V, dout, mask)
    expect_each([(got[i], numeric[i], name, {mid: [v[i] for v in outs] for mid, outs in wrongs.items()},
                  dict(rtol=1e-5, atol=1e-7, inputs=args[i:i + 1])) for i, name in enumerate(NAMES)])


def run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"
    rng = s.rng
    B, T, S, d, dv = distinct(rng, 5, 2, 6)
    with s.check("gradients match finite differences (self-attention, T = S)"):
        Q, K, V, dout = (rng.standard_normal((B, T, n)) for n in (d, d, dv, dv))
        check_grads(s, Q, K, V, dout)
    with s.check("gradients with a causal mask"):
        Q, K, V, dout = (rng.standard_normal((B, T, n)) for n in (d, d, dv, dv))
        check_grads(s, Q, K, V, dout, ref.causal_mask(T))
    with s.check("cross-attention: T != S and d_v != d_k"):
        Q, K, V, dout = (rng.standard_normal((B, n, m)) for n, m in ((T, d), (S, d), (S, dv), (T, dv)))
        check_grads(s, Q, K, V, dout)
    with s.check("no leading dims: 2-D inputs"):
        Q, K, V, dout = (rng.standard_normal((T, n)) for n in (d, d, dv, dv))
        check_grads(s, Q, K, V, dout)
    with s.check("the derived formulas: exact to float64 rounding, beyond what finite differences reach"):
        Q, K, V, dout = (rng.standard_normal((B, n, m)) for n, m in ((T, d), (S, d), (S, dv), (T, dv)))
        got = as_tuple(s.call("attention_backward", Q, K, V, dout), 3, "attention_backward")
        exact = ref.attention_grads_exact(Q, K, V, dout)
        wrongs = wrong.attention_backward_variants(Q, K, V, dout)
        expect_each([(got[i], exact[i], name, {mid: [v[i] for v in outs] for mid, outs in wrongs.items()},
                      dict(rtol=1e-5, atol=1e-7, inputs=(Q, K, V, dout)[i:i + 1])) for i, name in enumerate(NAMES)])
        expect_exact([(got[i], exact[i], name) for i, name in enumerate(NAMES)])
