"""ex12 · flash_attention_forward: exact values from tiles, the rescale, and a tracemalloc memory bound."""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import CheckFailed, Session, as_array, distinct, expect_close, large_logits

MEMORY_T = 1024          # T = S for the memory check
MEMORY_BLOCK = 64
LONG_S = 16384           # the long-keys check: one block of MEMORY_BLOCK queries against LONG_S keys


def run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"
    rng = s.rng
    T, S = distinct(rng, 2, 20, 50)
    d, dv = distinct(rng, 2, 3, 8)
    block = int(rng.integers(1, 9))              # any block_size >= 1 (and one larger than T, S below)
    with s.check("matches exact attention when T and S are not multiples of block_size"):
        Q, K, V = rng.standard_normal((T, d)), rng.standard_normal((S, d)), rng.standard_normal((S, dv))
        Q = Q * 2.0                                   # sharper rows: the running max changes between blocks
        expect_close(s.call("flash_attention_forward", Q, K, V, block), ref.attention_out(Q, K, V),
                     f"flash_attention_forward(block_size={block})", wrong.flash_variants(Q, K, V, block),
                     nonfinite_mistake="unstable_softmax")
    with s.check("block_size larger than T and S"):
        Q, K, V = rng.standard_normal((5, d)), rng.standard_normal((7, d)), rng.standard_normal((7, dv))
        expect_close(s.call("flash_attention_forward", Q, K, V, 16), ref.attention_out(Q, K, V),
                     "flash_attention_forward(block_size=16)", wrong.flash_variants(Q, K, V, 16),
                     nonfinite_mistake="unstable_softmax")
    with s.check("large logits (scores in the thousands, mixed signs, spread inside rows) stay finite"):
        Q, K = large_logits(rng, (T, d), (S, d))
        V = rng.standard_normal((S, dv))
        expect_close(s.call("flash_attention_forward", Q, K, V, block), ref.attention_out(Q, K, V),
                     "flash_attention_forward(large logits)", wrong.flash_variants(Q, K, V, block),
                     nonfinite_mistake="unstable_softmax")
    long_keys(s)
    n, dm = MEMORY_T, 16
    # half of one float64 (T, T) matrix: any full score matrix (8 MiB) is over it, while tiling only the
    # keys, a few (T, block_size) temporaries of 0.5 MiB each, stays under it (O(T) memory, as it should)
    bound = n * n * 8 // 2
    with s.check(f"peak memory for T = S = {n}, block_size = {MEMORY_BLOCK} stays under {bound // 2**20} MiB"):
        Q, K, V = (rng.standard_normal((n, dm)) for _ in range(3))
        out = as_array(s.call("flash_attention_forward", Q, K, V, MEMORY_BLOCK, trace_memory=True),
                       "flash_attention_forward")
        peak = s.last_peak
        want = ref.attention_out(Q, K, V)
        if peak > bound:
            right = out.shape == want.shape and np.allclose(out, want, rtol=1e-5, atol=1e-7)
            raise CheckFailed(f"peak memory during the call was {peak / 2**20:.1f} MiB; a ({n}, {n}) float64 score "
                              f"matrix alone is {n * n * 8 / 2**20:.0f} MiB and the limit is {bound / 2**20:.0f} MiB",
                              "flash_materializes_scores" if right else None)
        expect_close(out, want, f"flash_attention_forward(T={n})", inputs=(Q, K, V))


def long_keys(s: Session) -> None:
    """One block of queries against a long key sequence: only tiling the KEYS (the online softmax)
    keeps memory small here. Tiling the queries alone holds (block_size, S) scores, the whole
    (T, S) matrix at this T; copies of Q, K and V (O((T + S) d)) fit under the limit easily."""
    rng = s.rng
    T, S, d = MEMORY_BLOCK, LONG_S, 4
    bound = T * S * 8 // 4            # a quarter of the (T, S) float64 scores: 2 MiB
    with s.check(f"a long key sequence (T = {T}, S = {S}, block_size = {MEMORY_BLOCK}): the keys are tiled too, "
                 f"peak memory under {bound // 2**20} MiB"):
        Q, K, V = rng.standard_normal((T, d)), rng.standard_normal((S, d)), rng.standard_normal((S, d))
        want = ref.attention_out(Q, K, V)
        out = as_array(s.call("flash_attention_forward", Q, K, V, MEMORY_BLOCK, trace_memory=True),
                       "flash_attention_forward")
        peak = s.last_peak
        if peak > bound:
            right = out.shape == want.shape and np.allclose(out, want, rtol=1e-5, atol=1e-7)
            raise CheckFailed(f"peak memory during the call was {peak / 2**20:.1f} MiB; the ({T}, {S}) float64 score "
                              f"matrix is {T * S * 8 / 2**20:.0f} MiB and the limit is {bound / 2**20:.0f} MiB: walk "
                              "over key blocks with the online softmax (tiling only the queries still holds a "
                              "(block_size, S) block of scores)", "flash_materializes_scores" if right else None)
        expect_close(out, want, f"flash_attention_forward(T={T}, S={S})", inputs=(Q, K, V))
