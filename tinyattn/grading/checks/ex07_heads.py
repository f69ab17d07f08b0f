"""ex07 · split_heads / merge_heads: which channels each head owns, and the transpose that keeps tokens apart.

Two parts, scored separately: split_heads and merge_heads (the round trip needs both: merge_heads's part).
Moving channels loses nothing: the result must be exact, in the input's precision (float32 from float64 fails,
as in ex01, and so do float32's digits returned as float64, which passed rtol 1e-6 on every seed)."""
from ..oracle import ref, wrong
from ..checkkit import Session, as_array, distinct, expect_close, expect_raises

EXACT_COPY = dict(rtol=0.0, atol=0.0)      # a reshape and a transpose copy values: nothing to round


def run(s: Session) -> None:
    rng = s.rng
    B, T, H, d_k = distinct(rng, 4, 2, 6)
    x = rng.standard_normal((B, T, H * d_k))
    with s.check("split_heads (B, T, C) -> (B, H, T, d_k)", "split_heads"):
        expect_close(s.call("split_heads", x, H), ref.split_heads(x, H), f"split_heads(x {x.shape}, {H})",
                     {"heads_mixed_no_transpose": [wrong.split_no_transpose(x, H)]}, inputs=(x,), **EXACT_COPY)
    with s.check("merge_heads (B, H, T, d_k) -> (B, T, C)", "merge_heads"):
        y = rng.standard_normal((B, H, T, d_k))
        expect_close(s.call("merge_heads", y), ref.merge_heads(y), f"merge_heads(x {y.shape})",
                     {"heads_mixed_no_transpose": [wrong.merge_no_transpose(y)]}, inputs=(y,), **EXACT_COPY)
    with s.check("merge_heads(split_heads(x)) gives back x", "merge_heads"):
        parts = as_array(s.call("split_heads", x, H), "split_heads(x)")
        back = s.call("merge_heads", parts)
        expect_close(back, x, "merge_heads(split_heads(x))", inputs=(x,), **EXACT_COPY)
    with s.check("split_heads raises ValueError when C is not divisible by n_heads", "split_heads"):
        bad = rng.standard_normal((B, T, H * d_k + 1))             # H >= 2 never divides H * d_k + 1
        expect_raises(s, ValueError, "split_heads", bad, H, naming=dict(C=H * d_k + 1, n_heads=H))
