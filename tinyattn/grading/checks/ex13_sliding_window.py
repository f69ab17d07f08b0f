"""ex13 · sliding_window_mask(T, window): causal, the diagonal included, exactly `window` keys per late row."""
from ..oracle import ref, wrong
from ..checkkit import Session, expect_mask, expect_raises


def run(s: Session) -> None:
    rng = s.rng
    T = int(rng.integers(6, 12))
    w = int(rng.integers(2, T - 2))
    for label, window in (("a random window, 1 < window < T", w), ("window = 1: only the diagonal", 1),
                          ("window >= T is the causal mask", T + int(rng.integers(0, 3)))):
        with s.check(f"sliding_window_mask: {label}"):
            expect_mask(s.call("sliding_window_mask", T, window), ref.sliding_window_mask(T, window),
                        f"sliding_window_mask({T}, {window})", wrong.sliding_window_variants(T, window))
    with s.check("sliding_window_mask raises ValueError for window < 1"):
        expect_raises(s, ValueError, "sliding_window_mask", T, 0, naming=dict(window=0))
