"""ex09 · sinusoidal_encoding(T, d_model): sines in the even columns, cosines in the odd ones."""
from .. import references as ref
from .. import wrong
from ..checkkit import Session, expect_close, expect_float


def run(s: Session) -> None:
    rng = s.rng
    for label, T, d in (("a random (T, d_model)", int(rng.integers(3, 40)), 2 * int(rng.integers(2, 17))),
                        ("a long sequence: T = 128, d_model = 64", 128, 64)):
        with s.check(f"sinusoidal_encoding for {label}"):
            out = s.call("sinusoidal_encoding", T, d)
            expect_close(out, ref.sinusoidal(T, d), f"sinusoidal_encoding({T}, {d})",
                         {"positional_sin_cos_swapped": [wrong.sinusoidal_swapped(T, d)]}, rtol=1e-5, atol=1e-6)
            expect_float(out, f"sinusoidal_encoding({T}, {d})")
