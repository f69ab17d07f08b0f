"""ex01 · attention_scores(Q, K) = Q Kᵀ / sqrt(d_k): shapes, dtypes, values and the scaling mistakes."""
import numpy as np

from ..checkkit import Session, distinct, expect_close
from ..oracle import ref, wrong

# float64 in: the scores to float64 rounding. A matmul of d_k <= 9 terms is exact to ~1e-15 however it is written
# (einsum, a loop, the scale first or last); the default rtol 1e-6 let scores computed in float32 and returned
# as float64 pass on 15% of seeds
F64 = dict(rtol=1e-9, atol=1e-12)


def run(s: Session) -> None:
    rng = s.rng
    T, S, d = distinct(rng, 3, 2, 9)
    with s.check("2-D inputs: Q (T, d_k), K (S, d_k) -> scores (T, S)"):
        Q, K = rng.standard_normal((T, d)), rng.standard_normal((S, d))
        expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), "scores", wrong.scores_variants(Q, K),
                     inputs=(Q, K), **F64)
    with s.check("leading dims: (B, H, T, d_k) x (B, H, S, d_k) -> (B, H, T, S)"):
        B, H = distinct(rng, 2, 2, 4)
        Q, K = rng.standard_normal((B, H, T, d)), rng.standard_normal((B, H, S, d))
        expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), "scores", wrong.scores_variants(Q, K),
                     inputs=(Q, K), **F64)
    with s.check("sizes of 1: one query, one key, d_k = 1, a batch of one"):
        # every input drawn before the first call: what a later check draws never depends on the learner's answer
        pairs = [(rng.standard_normal(q_shape), rng.standard_normal(k_shape)) for q_shape, k_shape in
                 (((1, 1), (1, 1)), ((1, d), (S, d)), ((T, 1), (S, 1)), ((1, 1, 1, d), (1, 1, S, d)))]
        for Q, K in pairs:
            q_shape, k_shape = Q.shape, K.shape
            expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), f"scores for Q {q_shape}, K {k_shape}",
                         wrong.scores_variants(Q, K), inputs=(Q, K), **F64)
    with s.check("float32 inputs give float scores"):
        Q, K = rng.standard_normal((2, T, d), dtype=np.float32), rng.standard_normal((2, S, d), dtype=np.float32)
        expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), "scores", wrong.scores_variants(Q, K),
                     inputs=(Q, K))
