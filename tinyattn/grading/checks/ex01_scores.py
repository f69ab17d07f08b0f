"""ex01 · attention_scores(Q, K) = Q Kᵀ / sqrt(d_k): shapes, dtypes, values and the scaling mistakes."""
import numpy as np

from ..checkkit import Session, distinct, expect_close
from ..oracle import ref, wrong


def run(s: Session) -> None:
    rng = s.rng
    T, S, d = distinct(rng, 3, 2, 9)
    with s.check("2-D inputs: Q (T, d_k), K (S, d_k) -> scores (T, S)"):
        Q, K = rng.standard_normal((T, d)), rng.standard_normal((S, d))
        expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), "scores", wrong.scores_variants(Q, K),
                     inputs=(Q, K))
    with s.check("leading dims: (B, H, T, d_k) x (B, H, S, d_k) -> (B, H, T, S)"):
        B, H = distinct(rng, 2, 2, 4)
        Q, K = rng.standard_normal((B, H, T, d)), rng.standard_normal((B, H, S, d))
        expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), "scores", wrong.scores_variants(Q, K),
                     inputs=(Q, K))
    with s.check("sizes of 1: one query, one key, d_k = 1, a batch of one"):
        # every input drawn before the first call: what a later check draws never depends on the learner's answer
        pairs = [(rng.standard_normal(q_shape), rng.standard_normal(k_shape)) for q_shape, k_shape in
                 (((1, 1), (1, 1)), ((1, d), (S, d)), ((T, 1), (S, 1)), ((1, 1, 1, d), (1, 1, S, d)))]
        for Q, K in pairs:
            q_shape, k_shape = Q.shape, K.shape
            expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), f"scores for Q {q_shape}, K {k_shape}",
                         wrong.scores_variants(Q, K), inputs=(Q, K))
    with s.check("float32 inputs give float scores"):
        Q, K = rng.standard_normal((2, T, d), dtype=np.float32), rng.standard_normal((2, S, d), dtype=np.float32)
        expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), "scores", wrong.scores_variants(Q, K),
                     inputs=(Q, K))
