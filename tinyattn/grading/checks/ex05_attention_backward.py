"""ex05 · attention_backward: dQ, dK, dV against central finite differences of the reference forward."""
from tinyattn.gradcheck import numerical_grad

from .. import references as ref
from .. import wrong
from ..checkkit import Session, as_tuple, distinct, expect_close

NAMES = ("dQ", "dK", "dV")


def check_grads(s: Session, Q, K, V, dout, mask=None) -> None:
    args = (Q, K, V, dout) if mask is None else (Q, K, V, dout, mask)
    got = as_tuple(s.call("attention_backward", *args), 3, "attention_backward")
    # the truth: d<dout, attention(Q, K, V)> / d(each input), by central differences in float64
    loss = [lambda x: ref.attention_loss(x, K, V, dout, mask),
            lambda x: ref.attention_loss(Q, x, V, dout, mask),
            lambda x: ref.attention_loss(Q, K, x, dout, mask)]
    wrongs = {mid: [wrong.safe(wrong.attention_backward, Q, K, V, dout, mask, **kw) for kw in knobs]
              for mid, knobs in wrong.ATTENTION_BACKWARD_KNOBS.items()}
    for i, (name, x) in enumerate(zip(NAMES, (Q, K, V))):
        numeric = numerical_grad(loss[i], x)
        variants = {mid: [v[i] for v in outs if v is not None] for mid, outs in wrongs.items()}
        expect_close(got[i], numeric, name, variants, rtol=1e-5, atol=1e-7)


def run(s: Session) -> None:
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
