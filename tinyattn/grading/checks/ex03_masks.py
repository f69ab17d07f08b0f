"""ex03 · causal_mask(T) and apply_mask(scores, mask): True = may attend, -inf before the softmax.

Two parts, scored separately: causal_mask and apply_mask. apply_mask must put -inf (not a large
negative number) where the mask is False, and keep the dtype of the scores, as its docstring says.
"""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import CheckFailed, Session, as_array, distinct, expect_close, expect_dtype, expect_mask


def check_applied(s: Session, scores: np.ndarray, mask: np.ndarray) -> None:
    got = as_array(s.call("apply_mask", scores, mask), "apply_mask(scores, mask)")
    want = ref.apply_mask(scores, mask)
    variants = wrong.apply_mask_variants(scores, mask)
    if got.shape == want.shape and got.dtype.kind == "f":
        hidden = np.broadcast_to(~np.asarray(mask, dtype=bool), want.shape)
        with np.errstate(invalid="ignore"):
            finite_fill = hidden & np.isfinite(got) & (got < -1e4)        # e.g. -1e9, or np.finfo's min
        if finite_fill.any():
            idx = tuple(int(i) for i in np.argwhere(finite_fill)[0])
            raise CheckFailed(f"apply_mask(scores, mask) puts {got[idx]:g} where the mask is False (first at index "
                              f"{idx}), expected -inf as the docstring says: a finite fill still gives a row whose "
                              "keys are all masked a uniform softmax instead of no weights, and in float16 or after "
                              "adding a larger score it is no longer 'minus infinity'")
    expect_close(got, want, "apply_mask(scores, mask)", variants)
    # a copy of the scores with -inf put in: the kept entries are the scores themselves, in their dtype (float32
    # digits returned as float64, or a float32 copy of float64 scores, passed the tolerances above)
    expect_dtype(got, scores.dtype, "apply_mask(scores, mask)", "the docstring promises the same dtype as scores")
    if not np.array_equal(got, want):
        idx = tuple(int(i) for i in np.argwhere(got != want)[0])
        raise CheckFailed(f"apply_mask(scores, mask) differs from the scores at index {idx} where the mask is True: "
                          f"{_exact(got[idx], want[idx])}; apply_mask copies the scores (np.where(mask, scores, "
                          "-np.inf)), so they must come back exactly, not rounded")


def _exact(g, w) -> str:
    return f"got {float(g)!r}, expected {float(w)!r}"


def run(s: Session) -> None:
    rng = s.rng
    T = int(rng.integers(4, 9))
    with s.check("causal_mask(T) for a random T", "causal_mask"):
        expect_mask(s.call("causal_mask", T), ref.causal_mask(T), f"causal_mask({T})",
                    {"mask_inverted_future_leak": wrong.causal_inverted(T),
                     "mask_excludes_diagonal": wrong.causal_no_diagonal(T)})
    with s.check("causal_mask(1) lets the only token see itself", "causal_mask"):
        # for T = 1 "True = blocked" and "no diagonal" give the same [[False]]: offering both names neither
        expect_mask(s.call("causal_mask", 1), np.ones((1, 1), dtype=bool), "causal_mask(1)",
                    {"mask_excludes_diagonal": wrong.causal_no_diagonal(1),
                     "mask_inverted_future_leak": wrong.causal_inverted(1)})
    B, H = distinct(rng, 2, 2, 4)
    scores = rng.standard_normal((B, H, T, T))
    with s.check("apply_mask with a (T, T) mask puts -inf where the mask is False", "apply_mask"):
        mask = rng.random((T, T)) < 0.6
        mask[0, 0], mask[0, 1] = True, False                  # at least one kept and one hidden entry
        check_applied(s, scores, mask)
    with s.check("apply_mask with a (B, 1, 1, S) padding mask (broadcasting)", "apply_mask"):
        lengths = rng.integers(1, T, size=B)
        pad = (np.arange(T)[None, :] < lengths[:, None])[:, None, None, :]     # (B, 1, 1, S)
        check_applied(s, scores, pad)
    with s.check("apply_mask keeps the dtype: float32 scores give float32 scores", "apply_mask"):
        s32 = scores.astype(np.float32)
        mask = ref.causal_mask(T)
        out = as_array(s.call("apply_mask", s32, mask), "apply_mask(float32 scores, mask)")
        if out.shape != s32.shape:
            raise CheckFailed(f"apply_mask(float32 scores, mask) has shape {out.shape}, expected {s32.shape}")
        expect_dtype(out, np.float32, "apply_mask(float32 scores, mask)",
                     "the docstring promises the same shape and dtype as scores")
        check_applied(s, s32, mask)
