"""ex01 · attention_scores(Q, K) = Q Kᵀ / sqrt(d_k): shapes, values, dtypes and the scaling mistakes."""
import numpy as np

from .. import references as ref
from ..checkkit import Session, distinct, expect_close, expect_float


def variants(Q, K) -> dict[str, list]:
    raw = np.asarray(Q, np.float64) @ np.swapaxes(np.asarray(K, np.float64), -1, -2)   # (..., T, S)
    d = Q.shape[-1]
    return {"missing_scale": [raw], "scale_by_d_not_sqrt": [raw / d],
            "weights_transposed": [np.swapaxes(raw, -1, -2) / np.sqrt(d)]}


def run(s: Session) -> None:
    rng = s.rng
    T, S, d = distinct(rng, 3, 2, 9)
    with s.check("2-D inputs: Q (T, d_k), K (S, d_k) -> scores (T, S)"):
        Q, K = rng.standard_normal((T, d)), rng.standard_normal((S, d))
        out = s.call("attention_scores", Q, K)
        expect_close(out, ref.scores(Q, K), "scores", variants(Q, K))
        expect_float(out, "scores", Q, K)
    with s.check("leading dims: (B, H, T, d_k) x (B, H, S, d_k) -> (B, H, T, S)"):
        B, H = distinct(rng, 2, 2, 4)
        Q, K = rng.standard_normal((B, H, T, d)), rng.standard_normal((B, H, S, d))
        expect_close(s.call("attention_scores", Q, K), ref.scores(Q, K), "scores", variants(Q, K))
    with s.check("float32 inputs give float scores"):
        Q, K = rng.standard_normal((2, T, d), dtype=np.float32), rng.standard_normal((2, S, d), dtype=np.float32)
        out = s.call("attention_scores", Q, K)
        expect_close(out, ref.scores(Q, K), "scores", variants(Q, K), inputs=(Q, K))
        expect_float(out, "scores", Q, K)
