"""Known misconceptions: an id the grader can name, and a one-paragraph hint for each.

A check attaches a mistake id only when the learner's output equals (on the same random
inputs) what the known-wrong variant computes, or, for memory and overflow mistakes, when
the specific symptom appears. The variants themselves live in `wrong.py`.
"""
from __future__ import annotations

MISTAKES: dict[str, str] = {
    "numerical_gradient": (
        "This gradient was computed numerically, not derived: on the large inputs the grader measures, your "
        "backward took the CPU time of hundreds of forward passes. Finite differences, a complex step "
        "(f(x + ih).imag / h), dual numbers or a batch of perturbed forwards all need one forward pass per "
        "input entry they perturb, and they are exact enough to pass on small inputs. A derived backward "
        "reuses the forward's intermediate results and costs about as much as a forward pass or two. Derive "
        "the formula by the chain rule (the docstring states it), then write it with array operations; use "
        "your finite differences only to check it. If you did derive it, the cost is Python loops over single "
        "entries: loops over a batch or over rows are fine, but a loop for every entry of a matrix product is "
        "hundreds of times slower than one matrix product or one sum over an axis."
    ),
    "preimage_gradient": (
        "Your softmax_backward gives the gradient of softmax at a point x whose softmax is y / sum(y), not the "
        "formula in y: it is right whenever y is a softmax output, and wrong for a y whose slices do not sum to 1. "
        "The backward of softmax needs y alone and its formula (the docstring states it) holds for any y: a layer "
        "saves its output y, and may be handed one that rounding or a mixed precision moved off the simplex. Do not "
        "renormalise y or rebuild an input from log(y) and differentiate softmax there (by finite differences, a "
        "complex step or dual numbers): derive the formula and write it in y and dy."
    ),
    "not_real": (
        "Your code made a complex number or an object array. ex02, ex05, ex06 and ex10 ask for a backward derived "
        "by the chain rule, which is real arithmetic from start to end; a complex step (f(x + ih).imag / h) or dual "
        "numbers compute a gradient without deriving it, so these exercises run where no such value can exist. "
        "Derive the formula (the docstring states it), write it with real arrays, and use your own finite "
        "differences only to check it."
    ),
    "modifies_input": (
        "Your function wrote into an array it was given (an in-place operation: an augmented assignment, a slice "
        "assignment or a copy into an argument). The caller still owns that array and uses it afterwards: "
        "in attention the same scores, keys or gradients feed several computations, so changing them in "
        "place corrupts results elsewhere, silently. Compute into a new array and leave the arguments as "
        "they came; returning a modified argument counts too, even when its values are right."
    ),
    "mask_ignored": (
        "Your result matches attention computed WITHOUT the mask you were given: every query still weighs every "
        "key, so with a causal mask each position reads the future, and with a padding mask the padded keys take "
        "part. The mask argument is not optional decoration: where it is False the score must become minus "
        "infinity BEFORE the softmax, so that the weight is exactly zero there. Check that the branch for a "
        "mask runs at all, and that the softmax then reads the masked scores (a masked copy assigned to a new name and "
        "never used again is a common slip)."
    ),
    "mask_ignored_in_backward": (
        "Your gradients match attention computed WITHOUT the mask you were given. The backward pass must "
        "recompute the same forward pass as the loss used: the masked scores set to minus infinity before the "
        "softmax, so the weights P are exactly zero on every masked key. Then dV gets nothing from a masked "
        "key, and the softmax backward (which multiplies by P) sends no gradient through it to Q or K. Without "
        "the mask, P spreads weight over keys the forward pass never looked at."
    ),
    "mask_assumed_causal": (
        "Your gradients match a CAUSAL mask (each query sees the keys at or before its own position), not the "
        "mask you were given. The mask argument can be any pattern broadcastable to (..., T, S): padding that "
        "hides the last keys of a short sequence, a sliding window, a cross-attention mask where T and S "
        "differ. Use the mask argument itself, whatever its pattern and whatever its broadcast shape."
    ),
    "missing_scale": (
        "Your result matches attention WITHOUT the 1/sqrt(d_k) factor. The scores Q·K grow with the "
        "dimension: a dot product of d_k unit-variance terms has variance d_k, so for d_k = 64 typical "
        "scores are around ±8 and the softmax becomes nearly one-hot, with vanishing gradients. The scale "
        "belongs to the scores, before the softmax; in a backward pass it comes back wherever the scores "
        "were differentiated."
    ),
    "scale_missing_in_backward": (
        "Your forward pass scales the scores by 1/sqrt(d_k), but your backward pass forgets that factor: "
        "dQ and dK are sqrt(d_k) times too large, while dV (which never passes through the scores) is right. "
        "The chain rule goes through every operation of the forward pass, and scaling is one of them: the "
        "scores S = c Q Kᵀ depend on Q and K through the constant c, so the gradient of S with respect to "
        "either carries the same c. Follow the forward pass backwards step by step, scale included."
    ),
    "scale_by_d_not_sqrt": (
        "Your result matches scores divided by d_k instead of sqrt(d_k). The goal of the scale is to bring "
        "the variance of q·k (which is d_k for unit-variance entries) back to 1; variance scales with the "
        "square of a factor, so the divisor whose square is d_k is the right one. Dividing by d_k "
        "over-shrinks the scores and makes the attention too uniform."
    ),
    "unstable_softmax": (
        "Your softmax overflows for large logits: exp(1000) is inf in floating point (math.exp raises "
        "OverflowError) and inf/inf is nan. Softmax does not change if you subtract the same number from every "
        "entry of one slice, so choose, for EACH slice separately, the number that makes the largest exponent "
        "exactly 0: then nothing can overflow, and at least one term of the denominator is 1. A slice's "
        "minimum or mean is not enough (a row like [-1000, 0, 1000] still has exp(1000)), nor is one number "
        "for the whole array (a row far below the others underflows to 0/0). In flash attention the running "
        "max m plays the same role."
    ),
    "softmax_wrong_axis": (
        "Your weights are normalised along the wrong axis: the values match a softmax over a different "
        "axis than the one asked for. In attention the scores are (..., T, S) with one row per query, and "
        "each query's weights over the keys must sum to 1, so the softmax runs over the keys. Check which "
        "axis every reduction (the max and the sum) runs over, and that the reduced result still lines up "
        "with the array it is combined with."
    ),
    "softmax_backward_missing_term": (
        "Your softmax gradient keeps only the diagonal of the Jacobian (something like y·dy or y(1 - y)·dy). "
        "Because every output shares the same denominator, raising one logit lowers all the other "
        "probabilities: dy_i/dx_j = y_i (δ_ij - y_j), which is not zero off the diagonal. Contract the WHOLE "
        "Jacobian with the upstream gradient: the off-diagonal part adds, for every x_j, a term that involves "
        "the weighted sum of dy over its slice. Writing out a 2-element softmax by hand shows it."
    ),
    "softmax_backward_wrong_axis": (
        "Your softmax gradient has both terms, but the weighted sum of dy (the term every output shares) is "
        "taken along the wrong axis. The sum comes from the Jacobian of ONE softmax slice: only outputs that "
        "share a denominator influence each other, so it runs along the axis the softmax normalised (the "
        "keys, the last axis, for attention weights), never across different queries or batch entries."
    ),
    "mask_inverted_future_leak": (
        "Your mask is the wrong way round: the result matches attention where True means BLOCK (or where "
        "queries see the future). In tinyattn, as in PyTorch's boolean attn_mask for "
        "F.scaled_dot_product_attention, True means 'may attend'. For a causal mask, query i may see keys "
        "j <= i: the lower triangle with the diagonal, and the hidden entries are the ones where the mask is "
        "False. Letting a query see later tokens leaks the answer during training, and a model trained that "
        "way fails when generating."
    ),
    "mask_excludes_diagonal": (
        "Your mask hides the diagonal: each query is not allowed to attend to its own position. A token "
        "should see itself and the past (j <= i), not only the strict past (j < i). With the diagonal "
        "missing, the first query has no key at all and its softmax row is nan. Check the comparison "
        "between query and key positions, or which diagonal your triangle starts from."
    ),
    "mask_after_softmax": (
        "You applied the mask after the softmax (zeroing weights) instead of before it. The zeroed rows no "
        "longer sum to 1, and the remaining weights were normalised together with the future keys, so "
        "information from masked positions still leaks in through the denominator. Hide the keys in the "
        "SCORES, with a value whose exponential is exactly 0, and only then take the softmax."
    ),
    "mask_fill_zero": (
        "You filled masked scores with 0 instead of -inf. A score of 0 is an ordinary score: exp(0) = 1, so "
        "the masked key still gets a sizeable weight. Masking must make the weight exactly zero after the "
        "softmax, so the filled score must be the one number whose exponential is exactly 0."
    ),
    "mask_fill_finite": (
        "You filled masked scores with a finite number (such as -1e4 or -10000) instead of -inf. That hides a "
        "key only while every real score is far above the fill value: when the kept keys score lower still, "
        "the masked keys get the weight. Fill with minus infinity: its exponential is exactly 0 whatever the other "
        "scores are."
    ),
    "weights_transposed": (
        "A matrix is used transposed. In attention the scores are Q Kᵀ, so row i belongs to query i and "
        "column j to key j (K Qᵀ swaps the roles); in a backward pass each gradient has the shape of its "
        "input, which decides which factor is transposed; in a layer like x @ W the weight's layout decides "
        "which side it goes on, and the backward pass uses its transpose. Write the shape of every operand "
        "next to each matmul and check that the contracted dims match."
    ),
    "heads_mixed_no_transpose": (
        "Your heads mix different tokens: the result matches reshaping (B, T, C) straight to (B, H, T, d_k). "
        "A reshape only reinterprets the flat memory, so that slices the sequence rather than each token's "
        "channels. A head owns a slice of every token's channels: first cut each token's C channels into "
        "(H, d_k) while T is still the second axis, and only then move the head axis in front of the time "
        "axis. Merging heads undoes the same two steps in reverse order."
    ),
    "kv_repeat_tiled_not_interleaved": (
        "Your key/value heads are tiled instead of interleaved: query head h uses kv head h % H_kv instead "
        "of h // n_rep. In grouped-query attention consecutive query heads form a group sharing ONE kv head, "
        "so each kv head must appear n_rep times in a row (k0 k0 k1 k1, not k0 k1 k0 k1). NumPy's and "
        "PyTorch's repeat functions differ here: check which one repeats each element and which one repeats "
        "the whole array."
    ),
    "flash_missing_rescale": (
        "Your online softmax forgets to rescale what was accumulated when the running max grows. The "
        "partial sums l and acc were computed relative to the old max m; when a new block raises it to "
        "m_new, each term already summed is too large by a factor exp(m_new - m) compared with the new "
        "block's terms, so both l and acc must be brought to the new max before the new terms are added. "
        "Without it the result is only right when the first block already holds each row's maximum."
    ),
    "flash_materializes_scores": (
        "Your flash attention gives the right numbers but its peak memory shows it builds an array as big "
        "as (T, S) (or close to it). The point of flash attention is that memory stays O(T·d): walk over "
        "blocks of keys (and of queries) so every temporary is at most (block_size, block_size), and carry "
        "the running max, denominator and numerator per row instead of a full score matrix. Tiling only "
        "the queries is not enough: each query block then still holds its scores against every key."
    ),
    "kv_cache_not_appended": (
        "Your decoding step does not grow the cache: the outputs match attending to the current token only "
        "(or to a cache that never changes). Each step must add the new key and value to the cache along "
        "the time axis, attend over the whole grown cache, and RETURN that cache, because the caller feeds "
        "it back into the next step."
    ),
    "kv_cache_wrong_order": (
        "Your cache holds the right keys and values in the wrong order: the new step goes in FRONT instead "
        "of at the end. Attention itself ignores the order of the keys, so the outputs still look right, but "
        "everything that reads the cache by position breaks: positional encodings such as RoPE, sliding "
        "windows that drop the oldest entries, and any code that expects entry t along the time axis to be "
        "step t. The oldest step comes first, the newest last."
    ),
    "unbroadcast_wrong_axes": (
        "Your unbroadcast sums over the wrong axes. NumPy aligns shapes on the RIGHT, so the extra axes a "
        "broadcast adds are the LEADING ones; those are summed away entirely, and every axis where the "
        "target has size 1 but the gradient does not is summed while keeping it as size 1. Summing trailing "
        "axes gives the wrong values, and often the wrong shape."
    ),
    "positional_sin_cos_swapped": (
        "Your encoding has sine and cosine swapped: the even columns must hold the sine of the angle and "
        "the odd columns the cosine of the same angle. Row 0 (position 0) is a quick test: it must be "
        "[0, 1, 0, 1, ...] since sin(0) = 0 and cos(0) = 1."
    ),
    "positional_exponent_i_not_2i": (
        "Your frequencies use the wrong exponent: the table matches 10000^(i/d_model) with i the pair index "
        "(or each column's own index) where the formula has 10000^(2i/d_model). Columns 2i and 2i + 1 form "
        "one sin/cos pair and share ONE frequency, and the exponent runs over the even column index 2i, so "
        "from the first pair to the last the wavelength grows from 2π to nearly 10000·2π. With i alone the "
        "frequencies decay only half as fast (the longest wavelength is about 100·2π), and with the column "
        "index the sine and cosine of a pair no longer share an angle. Check columns 2 and 3 of row 1: both "
        "use the angle 1 / 10000^(2/d_model)."
    ),
    "window_off_by_one": (
        "Your sliding window is one key too wide or too narrow. With window w, query i sees exactly the keys "
        "i - w + 1, ..., i: itself and the w - 1 before it, so the distance i - j ranges over 0, ..., w - 1. "
        "Count the True entries of a late row: there must be exactly w."
    ),
    "bptt_missing_carry": (
        "Your backward pass through time forgets the gradient that flows back from the next step. h_t "
        "affects the loss directly (through dhs at step t) AND through h_{t+1}, so the gradient at step t is "
        "the sum of both. The second one is carried backwards through the loop: it starts at zero after the "
        "last step, each step computes it for the step before from the gradient through its tanh and W_hh, "
        "and what is left after step 0 is dh0."
    ),
    "graph_cut_by_numpy": (
        "Some weights got no gradient: a step of your forward went through NumPy (a Tensor's values taken out "
        "as an array and worked on with NumPy's functions), and the Tensor made from its result does not "
        "remember where its values came from, so autograd stops there. The values are right, which is why the "
        "forward checks pass; the backward is not. A mask applied with NumPy is the usual place: apply it "
        "with the Tensor method masked_fill (it fills where its argument is True), and keep every step "
        "from x to the output in Tensor ops."
    ),
    "patch_grid_transposed": (
        "Your grid is transposed: row h, column l holds what belongs at [l, h]. The grid has one row per "
        "layer and one column per head, shape (n_layers, n_heads), as TransformerLens's patching grids and "
        "the exercise's docstring lay it out. Fill grid[layer, head], not grid[head, layer]."
    ),
    "patch_nothing_patched": (
        "Every entry of your grid is the corrupted run's own metric: no patch reached the model. A hook must "
        "RETURN the array to use instead (a hook that writes into a copy and returns nothing changes "
        "nothing), and it must be registered under the hook point's exact name, \"blocks.{l}.attn.hook_z\"; "
        "a misspelt name is never called."
    ),
    "patch_heads_together": (
        "Each row of your grid is constant: all heads of a layer were patched at once, so every head of the "
        "layer gets the same number. Activation patching asks about one component at a time: for head h, "
        "replace only z[:, :, h] (every position, that head's slice) with the clean run's, and rerun."
    ),
}


def hint(mistake_id: str | None) -> str:
    """The hint paragraph for `mistake_id` ('' for None or an unknown id)."""
    return MISTAKES.get(mistake_id or "", "")
