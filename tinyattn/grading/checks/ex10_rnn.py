"""ex10 · rnn_forward and rnn_backward (BPTT), the backward checked against finite differences and,
to float64 rounding, against the derived formulas. Two parts: rnn_forward and rnn_backward."""
import numpy as np

from tinyattn.gradcheck import numerical_grad

from ..oracle import ref, wrong
from ..checkkit import Session, as_array, as_tuple, call_derived, distinct, expect_close, expect_each, expect_exact

NAMES = ("dx", "dh0", "dW_xh", "dW_hh", "db")
# float64 states to 1e-9: a step is a matmul of D + H <= 10 terms and a tanh (|tanh'| <= 1), exact to ~1e-15 however
# it is written; a forward computed in float32 and returned as float64 is 1e-7 off (it passed rtol 1e-6 on 25% of seeds)
FORWARD_TOL = dict(rtol=1e-9, atol=1e-12)
COST = (32, 24, 32, 64)      # B, T, D, H: W_hh alone needs H * H = 4096 perturbed forwards; honest <= 17


def params(rng, B, T, D, H):
    return (rng.standard_normal((B, T, D)), rng.standard_normal((B, H)) * 0.5,
            rng.standard_normal((D, H)) / np.sqrt(D), rng.standard_normal((H, H)) / np.sqrt(H),
            rng.standard_normal(H) * 0.1)


def run(s: Session) -> None:
    rng = s.rng
    B, T, D, H = distinct(rng, 4, 2, 5)
    with s.check("rnn_forward: hs (B, T, H) with h_t = tanh(x_t W_xh + h_{t-1} W_hh + b)", "rnn_forward"):
        p = params(rng, B, T, D, H)
        expect_close(s.call("rnn_forward", *p), ref.rnn_forward(*p), "hs",
                     {"weights_transposed": [wrong.rnn_forward_transposed(*p)]}, inputs=p, **FORWARD_TOL)
    with s.check("rnn_forward with a single time step", "rnn_forward"):
        p = params(rng, B, 1, D, H)
        expect_close(s.call("rnn_forward", *p), ref.rnn_forward(*p), "hs", inputs=p, **FORWARD_TOL)
    with s.check("rnn_backward: all five gradients match finite differences", "rnn_backward"):
        p = params(rng, B, T, D, H)
        hs, dhs = ref.rnn_forward(*p), rng.standard_normal((B, T, H))
        got = as_tuple(s.call("rnn_backward", *p, hs, dhs), 5, "rnn_backward")
        numeric = ref.rnn_grads_numeric(*p, dhs)
        wrongs = wrong.rnn_backward_variants(*p, hs, dhs)
        expect_each([(got[i], numeric[i], name, {mid: [w[i] for w in outs] for mid, outs in wrongs.items()},
                      dict(rtol=1e-5, atol=1e-7, inputs=p[i:i + 1])) for i, name in enumerate(NAMES)])
    with s.check("rnn_backward is the derived BPTT: exact to float64 rounding", "rnn_backward"):
        p = params(rng, B, T, D, H)
        hs, dhs = ref.rnn_forward(*p), rng.standard_normal((B, T, H))
        exact = ref.rnn_grads_exact(*p, dhs)
        got = as_tuple(s.call("rnn_backward", *p, hs, dhs), 5, "rnn_backward")
        expect_each([(got[i], exact[i], name, None, dict(inputs=p[i:i + 1])) for i, name in enumerate(NAMES)])
        expect_exact([(got[i], exact[i], name) for i, name in enumerate(NAMES)])
    with s.check("rnn_backward costs a few forward passes, not one per entry (derived, not numerical)",
                 "rnn_backward"):
        p = params(rng, *COST)
        hs, dhs = ref.rnn_forward(*p), rng.standard_normal(COST[:2] + COST[3:])
        got = as_tuple(call_derived(s, "rnn_backward", lambda: ref.rnn_forward(*p), (*p, hs, dhs)), 5,
                       "rnn_backward")
        exact = ref.rnn_grads_exact(*p, dhs)
        expect_each([(got[i], exact[i], name, None, dict(inputs=p[i:i + 1])) for i, name in enumerate(NAMES)])
        expect_exact([(got[i], exact[i], name) for i, name in enumerate(NAMES)])
    with s.check("rnn_backward agrees with finite differences of YOUR rnn_forward", "rnn_backward"):
        # needs no recorded answer: your forward and backward must agree on fresh inputs
        p = params(rng, B, T, D, H)
        dhs = rng.standard_normal((B, T, H))
        hs = as_array(s.call("rnn_forward", *p), "hs")
        got = as_tuple(s.call("rnn_backward", *p, hs, dhs), 5, "rnn_backward")
        for i, name in enumerate(NAMES):
            def loss(v, i=i):
                q = list(p)
                q[i] = v
                return float(np.sum(as_array(s.call("rnn_forward", *q), "hs") * dhs))
            expect_close(got[i], numerical_grad(loss, p[i]), f"{name} against finite differences of your "
                         "rnn_forward", rtol=1e-5, atol=1e-7, inputs=p[i:i + 1])
