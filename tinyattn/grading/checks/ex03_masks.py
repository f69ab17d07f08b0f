"""ex03 · causal_mask(T) and apply_mask(scores, mask): True = may attend, -inf before the softmax."""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import CheckFailed, Session, as_array, distinct, expect_close, expect_float, expect_mask

MASKED = -1e9   # anything at or below this counts as "masked": softmax gives it exactly zero weight


def check_applied(s: Session, scores: np.ndarray, mask: np.ndarray) -> None:
    got = as_array(s.call("apply_mask", scores, mask), "apply_mask(scores, mask)")
    variants = wrong.apply_mask_variants(scores, mask)
    if got.shape == scores.shape and got.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            got = np.where(got <= MASKED, -np.inf, got)      # -1e9 and -inf both hide a key
    expect_close(got, ref.apply_mask(scores, mask), "apply_mask(scores, mask)", variants)


def run(s: Session) -> None:
    rng = s.rng
    T = int(rng.integers(4, 9))
    with s.check("causal_mask(T) for a random T"):
        expect_mask(s.call("causal_mask", T), ref.causal_mask(T), f"causal_mask({T})",
                    {"mask_inverted_future_leak": wrong.causal_inverted(T),
                     "mask_excludes_diagonal": wrong.causal_no_diagonal(T)})
    with s.check("causal_mask(1) lets the only token see itself"):
        # for T = 1 "True = blocked" and "no diagonal" give the same [[False]]: offering both names neither
        expect_mask(s.call("causal_mask", 1), np.ones((1, 1), dtype=bool), "causal_mask(1)",
                    {"mask_excludes_diagonal": wrong.causal_no_diagonal(1),
                     "mask_inverted_future_leak": wrong.causal_inverted(1)})
    B, H = distinct(rng, 2, 2, 4)
    scores = rng.standard_normal((B, H, T, T))
    with s.check("apply_mask with a (T, T) mask puts -inf where the mask is False"):
        mask = rng.random((T, T)) < 0.6
        mask[0, 0], mask[0, 1] = True, False                  # at least one kept and one hidden entry
        check_applied(s, scores, mask)
    with s.check("apply_mask with a (B, 1, 1, S) padding mask (broadcasting)"):
        lengths = rng.integers(1, T, size=B)
        pad = (np.arange(T)[None, :] < lengths[:, None])[:, None, None, :]     # (B, 1, 1, S)
        check_applied(s, scores, pad)
    with s.check("apply_mask keeps a float dtype"):
        s32 = scores.astype(np.float32)
        out = as_array(s.call("apply_mask", s32, ref.causal_mask(T)), "apply_mask(float32 scores, mask)")
        if out.shape != s32.shape:
            raise CheckFailed(f"apply_mask(float32 scores, mask) has shape {out.shape}, expected {s32.shape}")
        expect_float(out, "apply_mask(float32 scores, mask)", s32)
