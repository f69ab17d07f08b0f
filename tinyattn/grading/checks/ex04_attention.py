"""ex04 · attention(Q, K, V, mask) -> (out, weights): values, masks, causal and padding invariance, stability.

Two parts, scored separately: attention without a mask (after notebook 01) and masks (after notebook 04).
"""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import CheckFailed, Session, as_tuple, diagnose, distinct, expect_close, expect_shape, large_logits


def attend(s: Session, Q, K, V, mask=None, what: str = "attention") -> tuple[np.ndarray, np.ndarray]:
    """Call the learner's attention and check both outputs against the reference and every variant."""
    args = (Q, K, V) if mask is None else (Q, K, V, mask)
    out, w = as_tuple(s.call("attention", *args), 2, what)
    return attend_values(Q, K, V, mask, out, w, what)


def attend_values(Q, K, V, mask, out, w, what: str, nonfinite: str | None = "unstable_softmax"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(out, w) from the learner's attention(Q, K, V, mask), checked against the reference and every variant;
    nonfinite: the mistake a nan/inf where the answer is finite means on these inputs."""
    ref_out, ref_w = ref.attention(Q, K, V, mask)
    # the weights first: a wrong softmax or mask is easiest to see (and to name) there
    expect_close(w, ref_w, f"{what}: weights", wrong.attention_variants(Q, K, V, mask, which=1),
                 nonfinite_mistake=nonfinite, inputs=(Q, K, V))
    expect_close(out, ref_out, f"{what}: out", wrong.attention_variants(Q, K, V, mask, which=0),
                 nonfinite_mistake=nonfinite, inputs=(Q, K, V))
    return np.asarray(out), np.asarray(w)


def run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"        # math.exp(1000) raises OverflowError
    rng = s.rng
    B, H, T, S, d, dv = distinct(rng, 6, 2, 8)
    with s.check("self-attention values (B, H, T, T)", "attention"):
        x = [rng.standard_normal((B, H, T, n)) for n in (d, d, dv)]
        attend(s, *x)
    with s.check("cross-attention shapes: T queries, S keys, d_v != d_k", "attention"):
        attend(s, rng.standard_normal((B, T, d)), rng.standard_normal((B, S, d)), rng.standard_normal((B, S, dv)))
    with s.check("no leading dims: Q, K, V are 2-D", "attention"):
        attend(s, rng.standard_normal((T, d)), rng.standard_normal((T, d)), rng.standard_normal((T, dv)))
    causal = ref.causal_mask(T)
    Q, K, V = (rng.standard_normal((B, H, T, n)) for n in (d, d, dv))
    with s.check("a causal (T, T) mask", "masks"):
        attend(s, Q, K, V, causal)
    with s.check("causal invariance: changing future keys and values leaves earlier outputs alone", "masks"):
        # its own T >= 3 and a cut t with a future after it: with T = 2 and t = 1 nothing would change
        Tc = int(rng.integers(3, 9))
        t = int(rng.integers(0, Tc - 1))
        causal = ref.causal_mask(Tc)
        Q, K, V = (rng.standard_normal((B, H, Tc, n)) for n in (d, d, dv))
        K2, V2 = K.copy(), V.copy()
        K2[..., t + 1:, :] = rng.standard_normal(K2[..., t + 1:, :].shape) * 3.0
        V2[..., t + 1:, :] = rng.standard_normal(V2[..., t + 1:, :].shape) * 3.0
        variants = wrong.attention_variants(Q, K, V, causal, which=0)
        out1, _ = as_tuple(s.call("attention", Q, K, V, causal), 2, "attention")
        out2, _ = as_tuple(s.call("attention", Q, K2, V2, causal), 2, "attention")
        out1, out2 = np.asarray(out1, np.float64), np.asarray(out2, np.float64)
        if out1.shape != out2.shape or not np.allclose(out1[..., :t + 1, :], out2[..., :t + 1, :], equal_nan=True):
            raise CheckFailed(f"changing keys/values after position {t} changed the outputs at positions <= {t}: "
                              "future tokens leak into the past", diagnose(out1, variants, 1e-6, 1e-8))
    with s.check("padding: padded keys get zero weight and do not change the output", "masks"):
        lengths = rng.integers(1, S, size=B)
        pad = (np.arange(S)[None, :] < lengths[:, None])[:, None, None, :]       # (B, 1, 1, S)
        Qp, Kp, Vp = (rng.standard_normal((B, H, n, m)) for n, m in ((T, d), (S, d), (S, dv)))
        out1, w1 = attend(s, Qp, Kp, Vp, pad, "padded attention")
        Kp2, Vp2 = Kp.copy(), Vp.copy()
        hidden = np.broadcast_to(~pad[:, :, 0, :], (B, H, S))                    # (B, H, S) padded keys
        Kp2[hidden] = 100.0
        Vp2[hidden] = -100.0
        out2, _ = as_tuple(s.call("attention", Qp, Kp2, Vp2, pad), 2, "attention")
        if not np.allclose(np.asarray(out2, np.float64), out1, equal_nan=True):
            raise CheckFailed("changing the keys/values of padded positions changed the output")
    with s.check("large logits under a padding mask: padded keys score highest and still get zero weight", "masks"):
        # Twice: the kept keys' scores near -50, then below -30000, the padded keys' far above them. A finite fill
        # (-1e4, as some libraries write) hides the padded keys the first time only, so the second names it; a
        # fill of 0, a mask ignored or inverted shows the first time, named by its variant. Weights zeroed after
        # the softmax and renormalised are right the first time and 0 / 0 the second.
        lengths = rng.integers(1, S, size=B)
        pad = (np.arange(S)[None, :] < lengths[:, None])[:, None, None, :]       # (B, 1, 1, S)
        kept = np.broadcast_to(pad[:, :, 0, :], (B, H, S))                       # (B, H, S)
        calls = []
        for level in (50.0, 40000.0):
            Qp, Kp, Vp = (rng.standard_normal((B, H, n, m)) for n, m in ((T, d), (S, d), (S, dv)))
            a = np.sqrt(level) * d ** 0.25                                        # a * a / sqrt(d) = level
            Qp[..., 0] = -a
            Kp[..., 0] = np.where(kept, a, -a)
            calls.append((Qp, Kp, Vp, ref.attention(Qp, Kp, Vp, pad)[1],
                          wrong.attention_variants(Qp, Kp, Vp, pad, which=1)))
        got = [as_tuple(s.call("attention", Qp, Kp, Vp, pad), 2, "attention") for Qp, Kp, Vp, _, _ in calls]
        for (Qp, Kp, Vp, ref_w, variants), (out, w), level in zip(calls, got, (50, 40000)):
            w = expect_shape(w, ref_w.shape, "masked attention(large logits): weights")
            hidden = np.broadcast_to(~pad, w.shape)
            with np.errstate(all="ignore"):
                leak = np.isfinite(w.astype(np.float64)) & hidden & (w != 0)
            if leak.any():
                raise CheckFailed(f"padded keys got weight in {int(leak.sum())} of {int(hidden.sum())} places (up "
                                  f"to {float(np.max(np.abs(w[leak]))):.3g}) where every kept key scores about "
                                  f"-{level} and the padded ones far above: a masked key must get exactly zero weight "
                                  "whatever the scores", diagnose(w, variants, 1e-6, 1e-8) if level == 50
                                  else "mask_fill_finite")
            # (out, w) must still be right. A nan here is 0 / 0: weights zeroed after the softmax and renormalised,
            # or exp taken before subtracting the row max; either could be it, so none is named
            attend_values(Qp, Kp, Vp, pad, out, w, "masked attention(large logits)", nonfinite=None)
    with s.check("large logits (scores in the thousands, mixed signs, spread inside rows) stay finite", "attention"):
        Q, K = large_logits(rng, (B, T, d), (B, T, d))
        attend(s, Q, K, rng.standard_normal((B, T, dv)), what="attention(large logits)")
    with s.check("float32 in, float out", "attention"):
        attend(s, *[rng.standard_normal((B, T, n)).astype(np.float32) for n in (d, d, dv)])
