"""ex13 · sliding_window_mask(T, window): causal, the diagonal included, exactly `window` keys per late row.

The docstring allows any window >= 1: the checks draw windows from 1 up to several times T
(window = T, just above it and far above it all give the causal mask)."""
from ..oracle import ref, wrong
from ..checkkit import Session, expect_mask, expect_raises


def run(s: Session) -> None:
    rng = s.rng
    # T from a wide range: a mask is a function of (T, window) alone, the student release ships the masks it
    # recorded, and mask(T, w) is mask(T', w)'s top-left corner for any T' >= T: with T in [6, 12) a table
    # copied from the release answered every check on one seed in five
    T = int(rng.integers(6, 40))
    w = int(rng.integers(2, T - 2))
    for label, window in (("a random window, 1 < window < T", w), ("window = 1: only the diagonal", 1),
                          ("window = T - 1: all but the first key in the last row", T - 1),
                          ("window = T is the causal mask", T),
                          ("window > T is the causal mask too", T + int(rng.integers(1, 3))),
                          ("a window much larger than T is the causal mask too", int(rng.integers(3, 10)) * T + 1)):
        with s.check(f"sliding_window_mask: {label}"):
            expect_mask(s.call("sliding_window_mask", T, window), ref.sliding_window_mask(T, window),
                        f"sliding_window_mask({T}, {window})", wrong.sliding_window_variants(T, window))
    with s.check("sliding_window_mask for a short sequence: T = 1 and T = 2, with windows up to 2 T"):
        for t in (1, 2):
            for window in range(1, 2 * t + 1):
                expect_mask(s.call("sliding_window_mask", t, window), ref.sliding_window_mask(t, window),
                            f"sliding_window_mask({t}, {window})", wrong.sliding_window_variants(t, window))
    with s.check("sliding_window_mask raises ValueError for window < 1"):
        expect_raises(s, ValueError, "sliding_window_mask", T, 0, naming=dict(window=0))
