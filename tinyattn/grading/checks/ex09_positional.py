"""ex09 · sinusoidal_encoding(T, d_model): sines in the even columns, cosines in the odd ones, at sizes drawn from
the seed (see `run`: a table copied from the student release's recorded answers must not answer them)."""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import Session, expect_close, expect_float


def run(s: Session) -> None:
    rng = s.rng
    # Both sizes come from the seed. The table is a function of (T, d_model) alone, and the student release
    # ships the tables it recorded: PE(T, d) is PE(T', d')'s first T rows and every (d' / d)-th column pair
    # whenever T <= T' and d / 2 divides d' / 2, so a fixed size (T = 128, d_model = 64 was one) is answered by
    # a copied table. The long one's d_model / 2 is a prime in [17, 61]: no smaller table answers it, and a
    # recorded long table only where the seed drew the same prime and a T at least as long.
    long_d = 2 * int(rng.choice([17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61]))
    for label, T, d in (("a random (T, d_model)", int(rng.integers(3, 40)), 2 * int(rng.integers(2, 17))),
                        ("a long sequence: 100 <= T <= 128, d_model / 2 a prime", int(rng.integers(100, 129)),
                         long_d)):
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
