"""ex12 · flash_attention_forward: exact values from tiles, the rescale, and memory bounds the kernel enforces."""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import CheckFailed, Session, StudentRaised, as_array, distinct, expect_close, large_logits

MEMORY_T = 2048          # T = S for the memory check: a (T, T) float64 matrix is 32 MiB
MEMORY_BLOCK = 64
LONG_S = 65536           # the long-keys check: one block of MEMORY_BLOCK queries against LONG_S keys
MEMORY_BUDGET = 16 << 20  # bytes the call may add to the learner's address space
ROW_T, ROW_S, ROW_D = 4, 1 << 20, 2   # the online-softmax check: a few queries against a million keys
ROW_BUDGET = 2 << 20     # bytes the call may add beyond its inputs: a quarter of one (S,) float64 row of scores

# what the exercise's docstring promises about memory, word for word (tests/test_release.py keeps them in step)
PROMISES = (
    f"the grader measures one call with T = {ROW_T} queries against S = {ROW_S:,} keys (d = {ROW_D}, "
    f"block_size = {MEMORY_BLOCK}) and lets it add at most {ROW_BUDGET >> 20} MiB to what its inputs hold: a "
    "quarter of ONE row of S float64 scores.",
    f"The grader also measures T = S = {MEMORY_T:,} and T = {MEMORY_BLOCK} queries against S = {LONG_S:,} keys "
    f"(block_size = {MEMORY_BLOCK}); each call may add at most {MEMORY_BUDGET >> 20} MiB, inputs included.",
)


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
    one_row_at_a_time(s)
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


def one_row_at_a_time(s: Session) -> None:
    """The online softmax, measured: a few queries against a million keys, and what the call may add to
    the memory its inputs already hold is a quarter of one row of scores. An exact softmax over all keys,
    even one query row at a time, holds a (S,) row (8 MiB) and runs out; walking over key blocks needs
    (block_size, block_size) temporaries. The kernel counts, from the moment the call starts."""
    rng = s.rng
    Q, K, V = rng.standard_normal((ROW_T, ROW_D)), rng.standard_normal((ROW_S, ROW_D)), rng.standard_normal((ROW_S, 1))
    label = f"flash_attention_forward(T={ROW_T}, S={ROW_S})"
    with s.check(f"the online softmax, measured: T = {ROW_T} queries, S = {ROW_S:,} keys, at most "
                 f"{ROW_BUDGET >> 20} MiB beyond the inputs (less than one row of scores; enforced by the kernel)"):
        measured_call(s, Q, K, V, label, f"{label} ran out of memory: one row of {ROW_S:,} float64 scores is "
                      f"{ROW_S * 8 >> 20} MiB and the call may add {ROW_BUDGET >> 20} MiB. A softmax over all the "
                      "keys at once, even for one query at a time, is not the online softmax: walk over key blocks, "
                      "keeping the running max, denominator and numerator per query, and slice K and V (views), "
                      "never copy them", call_budget=ROW_BUDGET)


def within_budget(s: Session, Q, K, V, label: str, advice: str) -> None:
    """Call the learner's forward under the kernel-enforced MEMORY_BUDGET; running out of memory is the
    named mistake, and the result must still be exact."""
    T, S = Q.shape[0], K.shape[0]
    measured_call(s, Q, K, V, label, f"flash_attention_forward ran out of memory: the ({T}, {S}) float64 score "
                  f"matrix is {T * S * 8 // 2**20} MiB and the budget is {MEMORY_BUDGET // 2**20} MiB{advice}",
                  memory_limit=MEMORY_BUDGET)


def measured_call(s: Session, Q, K, V, label: str, out_of_memory: str, **budget) -> None:
    """The learner's forward under a budget the kernel enforces (`budget`: Session.call's memory_limit or
    call_budget): running out of memory is the named mistake, said as `out_of_memory`; the result must be exact."""
    try:
        out = s.call("flash_attention_forward", Q, K, V, MEMORY_BLOCK, **budget)
    except StudentRaised as e:
        if e.kind != "MemoryError":
            raise
        raise CheckFailed(f"{out_of_memory} ({e})", "flash_materializes_scores") from None
    expect_close(as_array(out, "flash_attention_forward"), ref.attention_out(Q, K, V), label, inputs=(Q, K, V))
