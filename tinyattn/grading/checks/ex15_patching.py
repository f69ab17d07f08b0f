"""ex15 · patch_heads: activation patching of every head's output, clean -> corrupted, on a NumPy model.

The reference (references.patch_heads) is written from the exercise's own `forward`, copied there, so a
learner who edits theirs is still judged against the model the docstring describes. Wrong answers the checks name: the
grid transposed (heads x layers), a row patched all at once (every head of a layer together), the
corrupted run itself (nothing patched), and a clean input that the learner's code changed."""
import numpy as np

from ..checkkit import Session, as_array, expect_close, expect_dtype
from ..oracle import ref, wrong


def _problem(rng, L: int, H: int, B: int, T: int):
    V, C, d = 11, 8, 4
    params = {"W_E": rng.standard_normal((V, C)), "W_U": rng.standard_normal((C, V))}
    for l in range(L):
        for m in "QKV":
            params[f"W_{m}.{l}"] = rng.standard_normal((H, C, d)) * 0.8
        params[f"W_O.{l}"] = rng.standard_normal((H, d, C)) * 0.8
    clean = rng.integers(0, V, (B, T))
    corrupted = clean.copy()
    where = rng.integers(0, T - 1, B)  # one token changed per row, before the last position
    corrupted[np.arange(B), where] = (clean[np.arange(B), where] + rng.integers(1, V, B)) % V
    answer = rng.integers(0, V, B)
    return params, clean, corrupted, answer


def run(s: Session) -> None:
    rng = s.rng
    for label, (L, H, B, T) in (("2 layers of 3 heads, a batch of 4", (2, 3, 4, 6)),
                                ("3 layers of 2 heads (not square: layers and heads can't be swapped)", (3, 2, 3, 7)),
                                ("1 layer of 4 heads, one sentence", (1, 4, 1, 5))):
        params, clean, corrupted, answer = _problem(rng, L, H, B, T)
        want = ref.patch_heads(params, clean, corrupted, answer)
        variants = {"patch_grid_transposed": [want.T],  # (a square grid that is symmetric passes before this)
                    "patch_nothing_patched": [np.full(want.shape, wrong.patch_heads_unpatched(params, clean, corrupted,
                                                                                               answer))],
                    "patch_heads_together": [wrong.patch_heads_layer_at_once(params, clean, corrupted, answer)]}
        with s.check(f"patch_heads: {label}"):
            got = as_array(s.call("patch_heads", params, clean, corrupted, answer), "patch_heads")
            if got.shape == want.shape:       # (a wrong shape is named below, with its variants)
                expect_dtype(got, np.float64, "patch_heads(...)", "the docstring asks for a float64 grid (a float32 "
                             "one keeps 7 digits of each log-probability)")
            expect_close(got, want, "patch_heads(...)", variants, rtol=1e-6, atol=1e-8)
