"""ex12 · flash_attention_forward: exact values from tiles, the rescale, and memory bounds the kernel enforces."""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import CheckFailed, Session, StudentRaised, as_array, distinct, expect_close, large_logits

MEMORY_T = 2048          # T = S for the memory check: a (T, T) float64 matrix is 32 MiB
MEMORY_BLOCK = 64
LONG_S = 65536           # the long-keys check: one block of MEMORY_BLOCK queries against LONG_S keys
MEMORY_BUDGET = 16 << 20  # bytes the call may add to the learner's address space


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
    # the kernel's address-space limit, set from outside before the learner's code loads: one float64
    # (T, T) score matrix (32 MiB) is over the budget; tiling the keys, a few (T, block_size)
    # temporaries of 1 MiB each, fits with room to spare (O(T) memory, as it should)
    with s.check(f"memory for T = S = {n}, block_size = {MEMORY_BLOCK} stays within {MEMORY_BUDGET // 2**20} MiB "
                 "(enforced by the kernel)"):
        Q, K, V = (rng.standard_normal((n, dm)) for _ in range(3))
        within_budget(s, Q, K, V, f"flash_attention_forward(T={n})", "")


def long_keys(s: Session) -> None:
    """One block of queries against a long key sequence: only tiling the KEYS (the online softmax)
    keeps memory small here. Tiling the queries alone holds (block_size, S) scores, the whole
    (T, S) matrix at this T (32 MiB, over the budget); Q, K and V themselves (4 MiB) fit easily."""
    rng = s.rng
    T, S, d = MEMORY_BLOCK, LONG_S, 4
    with s.check(f"a long key sequence (T = {T}, S = {S}, block_size = {MEMORY_BLOCK}): the keys are tiled too, "
                 f"within {MEMORY_BUDGET // 2**20} MiB (enforced by the kernel)"):
        Q, K, V = rng.standard_normal((T, d)), rng.standard_normal((S, d)), rng.standard_normal((S, d))
        within_budget(s, Q, K, V, f"flash_attention_forward(T={T}, S={S})",
                      ": walk over key blocks with the online softmax (tiling only the queries still holds a "
                      "(block_size, S) block of scores)")


def within_budget(s: Session, Q, K, V, label: str, advice: str) -> None:
    """Call the learner's forward under the kernel-enforced MEMORY_BUDGET; running out of memory is the
    named mistake, and the result must still be exact."""
    T, S = Q.shape[0], K.shape[0]
    try:
        out = s.call("flash_attention_forward", Q, K, V, MEMORY_BLOCK, memory_limit=MEMORY_BUDGET)
    except StudentRaised as e:
        if e.kind != "MemoryError":
            raise
        raise CheckFailed(f"flash_attention_forward ran out of memory: the ({T}, {S}) float64 score matrix is "
                          f"{T * S * 8 // 2**20} MiB and the budget is {MEMORY_BUDGET // 2**20} MiB{advice} ({e})",
                          "flash_materializes_scores") from None
    expect_close(as_array(out, "flash_attention_forward"), ref.attention_out(Q, K, V), label, inputs=(Q, K, V))
