"""ex09 · sinusoidal_encoding(T, d_model): sines in the even columns, cosines in the odd ones."""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import Session, expect_close, expect_float


def run(s: Session) -> None:
    rng = s.rng
    for label, T, d in (("a random (T, d_model)", int(rng.integers(3, 40)), 2 * int(rng.integers(2, 17))),
                        ("a long sequence: T = 128, d_model = 64", 128, 64)):
        with s.check(f"sinusoidal_encoding for {label}"):
            out = s.call("sinusoidal_encoding", T, d)
            # float64: a little slack for other ways to write the frequencies (exp/log, powers);
            # float32 (as PyTorch builds the table): the angle pos * freq alone is off by ~1e-5 at pos 127
            tol = {} if getattr(out, "dtype", None) == np.float32 else {"rtol": 1e-5, "atol": 1e-6}
            expect_close(out, ref.sinusoidal(T, d), f"sinusoidal_encoding({T}, {d})",
                         {"positional_sin_cos_swapped": [wrong.sinusoidal_swapped(T, d)],
                          "positional_exponent_i_not_2i": [wrong.sinusoidal_exponent(T, d, "pair"),
                                                           wrong.sinusoidal_exponent(T, d, "column")]}, **tol)
            expect_float(out, f"sinusoidal_encoding({T}, {d})")
