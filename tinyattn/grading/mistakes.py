"""Known misconceptions: an id the grader can name, and a one-paragraph hint for each.

A check attaches a mistake id only when the learner's output equals (on the same random
inputs) what the known-wrong variant computes, or, for memory and overflow mistakes, when
the specific symptom appears. The variants themselves live in `wrong.py`.
"""
from __future__ import annotations

MISTAKES: dict[str, str] = {
    "missing_scale": (
        "Your result matches attention WITHOUT the 1/sqrt(d_k) factor. The scores Q·K grow with the "
        "dimension: a dot product of d_k unit-variance terms has variance d_k, so for d_k = 64 typical "
        "scores are around ±8 and the softmax becomes nearly one-hot, with vanishing gradients. Divide the "
        "scores by sqrt(d_k) (and, in a backward pass, remember that the same factor multiplies dQ and dK)."
    ),
    "scale_by_d_not_sqrt": (
        "Your result matches scores divided by d_k instead of sqrt(d_k). The goal of the scale is to bring "
        "the variance of q·k (which is d_k for unit-variance entries) back to 1; variance scales with the "
        "square of a factor, so the right divisor is sqrt(d_k). Dividing by d_k over-shrinks the scores and "
        "makes the attention too uniform."
    ),
    "unstable_softmax": (
        "Your softmax overflows for large logits: exp(1000) is inf in floating point (math.exp raises "
        "OverflowError) and inf/inf is nan. Softmax does not change if you subtract the same number from every "
        "entry of a row, so subtract EACH ROW'S MAXIMUM first (x - x.max(axis, keepdims=True)): then the "
        "largest exponent is exp(0) = 1 and nothing can overflow. The row's min or mean is not enough (a row "
        "like [-1000, 0, 1000] still has exp(1000)), nor is one max for the whole array (a row near -1000 "
        "underflows to 0/0). In flash attention the running max m plays the same role."
    ),
    "softmax_wrong_axis": (
        "Your weights are normalised along the wrong axis: the values match a softmax over a different "
        "axis than the one asked for. In attention the scores are (..., T, S) with one row per query, and "
        "each query's weights over the keys must sum to 1, so the softmax runs over the LAST axis (the keys). "
        "Check the axis of both the max and the sum, and use keepdims=True so they broadcast back."
    ),
    "softmax_backward_missing_term": (
        "Your softmax gradient keeps only the diagonal of the Jacobian (something like y * dy or "
        "y * (1 - y) * dy). Because every output shares the same denominator, raising one logit lowers all "
        "other probabilities: dy_i/dx_j = y_i (δ_ij - y_j). Contracting with dy gives "
        "dx = y * (dy - sum(dy * y, axis, keepdims=True)); the subtracted sum is the missing term."
    ),
    "mask_inverted_future_leak": (
        "Your mask is the wrong way round: the result matches attention where True means BLOCK (or where "
        "queries see the future). In tinyattn, as in PyTorch's boolean attn_mask, True means 'may attend'. "
        "For a causal mask, query i may see keys j <= i: the lower triangle including the diagonal "
        "(np.tril), and you hide keys with np.where(mask, scores, -inf). Letting a query see later tokens "
        "leaks the answer during training, and a model trained that way fails when generating."
    ),
    "mask_excludes_diagonal": (
        "Your mask hides the diagonal: each query is not allowed to attend to its own position. A token "
        "should see itself and the past (j <= i), not only the strict past (j < i). With the diagonal "
        "missing, the first query has no key at all and its softmax row is nan. Use np.tril(..., k=0) or the "
        "comparison j <= i."
    ),
    "mask_after_softmax": (
        "You applied the mask after the softmax (zeroing weights) instead of before it. The zeroed rows no "
        "longer sum to 1, and the remaining weights were normalised together with the future keys, so "
        "information from masked positions still leaks in through the denominator. Put -inf into the SCORES "
        "where the mask is False, then take the softmax: exp(-inf) = 0 removes those keys cleanly."
    ),
    "mask_fill_zero": (
        "You filled masked scores with 0 instead of -inf. A score of 0 is an ordinary score: exp(0) = 1, so "
        "the masked key still gets a sizeable weight. Masking must make the weight exactly zero after the "
        "softmax, which needs exp(score) = 0, i.e. score = -inf (np.where(mask, scores, -np.inf))."
    ),
    "weights_transposed": (
        "A matrix is used transposed. In attention the scores are Q Kᵀ, so row i belongs to query i and "
        "column j to key j (K Qᵀ swaps the roles); in a backward pass dV = Pᵀ dout, not P dout; in a layer "
        "like x @ W the weight's layout decides which side it goes on (h @ W_hh, and W_hhᵀ on the way back). "
        "Write the shape of every operand next to each matmul and check that the contracted dims match."
    ),
    "heads_mixed_no_transpose": (
        "Your heads mix different tokens: the result matches reshaping (B, T, C) straight to (B, H, T, d_k). "
        "A reshape only reinterprets the flat memory, so that slices the sequence rather than each token's "
        "channels. Reshape to (B, T, H, d_k) first (cutting each token's channels into heads), then swap the "
        "T and H axes: transpose(0, 2, 1, 3), or .transpose(1, 2) on a Tensor. Merging heads is the reverse: "
        "transpose back, then reshape."
    ),
    "kv_repeat_tiled_not_interleaved": (
        "Your key/value heads are tiled instead of interleaved: query head h uses kv head h % H_kv instead "
        "of h // n_rep. In grouped-query attention consecutive query heads form a group sharing ONE kv head, "
        "so each kv head must be repeated n_rep times in a row: np.repeat(k, n_rep, axis=1) (PyTorch: "
        "repeat_interleave), not np.tile (PyTorch: .repeat)."
    ),
    "flash_missing_rescale": (
        "Your online softmax forgets to rescale what was accumulated when the running max grows. The "
        "partial sums l and acc were computed relative to the old max m; when a new block raises it to "
        "m_new, both must be multiplied by alpha = exp(m - m_new) before adding the new block's terms. "
        "Without it the result is only right when the first block already holds each row's maximum."
    ),
    "flash_materializes_scores": (
        "Your flash attention gives the right numbers but its peak memory shows it builds an array as big "
        "as (T, S) (or close to it). The point of flash attention is that memory stays O(T·d): tile the "
        "queries AND the keys so every temporary is at most (block_size, block_size), and carry the running "
        "max, denominator and numerator per row instead of a full score matrix."
    ),
    "kv_cache_not_appended": (
        "Your decoding step does not grow the cache: the outputs match attending to the current token only "
        "(or to a cache that never changes). Each step must append the new key and value along the time "
        "axis (np.concatenate([K, k_t], axis=2)), attend over that whole cache, and RETURN the new cache, "
        "because the caller feeds it back into the next step."
    ),
    "kv_cache_wrong_order": (
        "Your cache holds the right keys and values in the wrong order: the new step goes in FRONT "
        "(np.concatenate([k_t, K], axis=2)) instead of at the end. Attention itself ignores the order of the "
        "keys, so the outputs still look right, but everything that reads the cache by position breaks: "
        "positional encodings such as RoPE, sliding windows that drop the oldest entries, and any code that "
        "expects K[:, :, t] to be step t. Append: np.concatenate([K, k_t], axis=2)."
    ),
    "unbroadcast_wrong_axes": (
        "Your unbroadcast sums over the wrong axes. NumPy aligns shapes on the RIGHT, so the extra axes a "
        "broadcast adds are the LEADING ones: sum axis 0 while grad has more dims than the target, then sum "
        "(with keepdims=True) every axis where the target has size 1 but grad does not. Summing trailing axes "
        "gives the wrong values, and often the wrong shape."
    ),
    "positional_sin_cos_swapped": (
        "Your encoding has sine and cosine swapped: the even columns must hold sin(pos / 10000^(2i/d)) and "
        "the odd columns cos(...) of the same angle. Row 0 (position 0) is a quick test: it must be "
        "[0, 1, 0, 1, ...] since sin(0) = 0 and cos(0) = 1."
    ),
    "window_off_by_one": (
        "Your sliding window is one key too wide or too narrow. With window w, query i sees exactly the keys "
        "i - w + 1, ..., i: itself and the w - 1 before it, so the condition is 0 <= i - j < w (strictly "
        "less). Count the True entries of a late row: there must be exactly w."
    ),
    "bptt_missing_carry": (
        "Your backward pass through time forgets the gradient that flows back from the next step. h_t "
        "affects the loss directly (dhs[:, t]) AND through h_{t+1}, so the gradient at step t is "
        "dhs[:, t] + dh_next, where dh_next = da_{t+1} W_hhᵀ is carried backwards through the loop (starting "
        "from zeros at the last step, and ending as dh0)."
    ),
}


def hint(mistake_id: str | None) -> str:
    """The hint paragraph for `mistake_id` ('' for None or an unknown id)."""
    return MISTAKES.get(mistake_id or "", "")
