"""ex11 · repeat_kv and gqa_attention: interleaved (not tiled) kv heads, then ordinary (stable) attention.

Two parts, scored separately: repeat_kv and gqa_attention. A result less precise than the inputs (float32 from
float64) fails, as in ex01 and ex04: float32 tolerances would let an answer off by 1e-4 pass."""
from ..oracle import ref, wrong
from ..checkkit import Session, distinct, expect_close, large_logits


def run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"
    rng = s.rng
    B, T, S, d, dv = distinct(rng, 5, 2, 6)
    H_kv, n_rep = distinct(rng, 2, 2, 4)          # H = H_kv * n_rep in {6, 8, 12}, never one fixed size
    with s.check("repeat_kv (B, H_kv, T, d) -> (B, H_kv * n_rep, T, d), interleaved", "repeat_kv"):
        k = rng.standard_normal((B, H_kv, T, d))
        expect_close(s.call("repeat_kv", k, n_rep), ref.repeat_kv(k, n_rep), f"repeat_kv(k {k.shape}, {n_rep})",
                     {"kv_repeat_tiled_not_interleaved": [wrong.repeat_kv_tiled(k, n_rep)]}, inputs=(k,),
                     rtol=0.0, atol=0.0)                # copies of k: exact (float32's digits passed rtol 1e-6)
    with s.check("repeat_kv with n_rep = 1 changes nothing", "repeat_kv"):
        k = rng.standard_normal((B, H_kv, T, d))
        expect_close(s.call("repeat_kv", k, 1), k, "repeat_kv(k, 1)", inputs=(k,), rtol=0.0, atol=0.0)
    for label, h_kv in (("grouped: H_kv < H", H_kv), ("multi-query: H_kv = 1", 1),
                        ("H_kv = H is multi-head attention", H_kv * n_rep)):
        with s.check(f"gqa_attention, {label}", "gqa_attention"):
            q = rng.standard_normal((B, H_kv * n_rep, T, d))
            k, v = rng.standard_normal((B, h_kv, S, d)), rng.standard_normal((B, h_kv, S, dv))
            expect_close(s.call("gqa_attention", q, k, v), ref.gqa(q, k, v), "gqa_attention(q, k, v)",
                         wrong.gqa_variants(q, k, v), nonfinite_mistake="unstable_softmax", inputs=(q, k, v))
    with s.check("large logits (scores in the thousands, mixed signs, spread inside rows) stay finite",
                 "gqa_attention"):
        q, k = large_logits(rng, (B, H_kv * n_rep, T, d), (B, H_kv, S, d))
        v = rng.standard_normal((B, H_kv, S, dv))
        expect_close(s.call("gqa_attention", q, k, v), ref.gqa(q, k, v), "gqa_attention(large logits)",
                     wrong.gqa_variants(q, k, v), nonfinite_mistake="unstable_softmax", inputs=(q, k, v))
