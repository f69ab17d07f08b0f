"""Mutants of the solutions, one known mistake each: (mistake id, exercise id, [(old, new, count), ...]).

Each substitution must match exactly `count` times in the solution file (so a mutant can not
silently stop mutating when a solution is edited). Used by tests/test_grading.py.
"""

MUTANTS = [
    # --- the required ids, one mutant each at least ---
    ("missing_scale", "ex01", [("return scores / math.sqrt(d_k)", "return scores", 1)]),
    ("scale_by_d_not_sqrt", "ex01", [("scores / math.sqrt(d_k)", "scores / d_k", 1)]),
    ("weights_transposed", "ex01", [("scores = Q @ np.swapaxes(K, -1, -2)", "scores = K @ np.swapaxes(Q, -1, -2)", 1)]),
    ("unstable_softmax", "ex02", [("z = x - x.max(axis=axis, keepdims=True)", "z = x", 1)]),
    ("numerical_gradient", "ex06", [(
        "    dA = dC @ np.swapaxes(B, -1, -2)     # (..., n, m) @ (..., m, k) -> (..., n, k)\n"
        "    dB = np.swapaxes(A, -1, -2) @ dC     # (..., k, n) @ (..., n, m) -> (..., k, m)\n",
        "    def numeric(f, x):                   # central differences with a step of 1, one entry at a time:\n"
        "        g = np.zeros(x.shape)            # exact for a linear map, and costly\n"
        "        for i in np.ndindex(*x.shape):\n"
        "            e = np.zeros(x.shape)\n"
        "            e[i] = 1.0\n"
        "            g[i] = (np.sum(f(x + e) * dC) - np.sum(f(x - e) * dC)) / 2\n"
        "        return g\n"
        "    dA, dB = numeric(lambda a: a @ B, A), numeric(lambda b: A @ b, B)\n", 1)]),
    ("softmax_wrong_axis", "ex02", [("z = x - x.max(axis=axis, keepdims=True)", "z = x - x.max(axis=0, keepdims=True)", 1),
                                    ("e.sum(axis=axis, keepdims=True)", "e.sum(axis=0, keepdims=True)", 1)]),
    ("softmax_backward_missing_term", "ex02", [("return y * (dy - inner)", "return y * dy", 1)]),
    # a complex value in a confined exercise (the derived backwards run real arithmetic only)
    ("not_real", "ex02", [("return y * (dy - inner)", "return (y * (dy - inner)).astype(\"complex128\").real", 1)]),
    # right on the simplex only: renormalising y, as a gradient taken at a preimage x = log y does
    ("preimage_gradient", "ex02", [("    inner = (dy * y).sum(axis=axis, keepdims=True)\n",
                                    "    y = y / y.sum(axis=axis, keepdims=True)\n"
                                    "    inner = (dy * y).sum(axis=axis, keepdims=True)\n", 1)]),
    ("mask_inverted_future_leak", "ex03", [("return np.tril(", "return np.triu(", 1)]),
    ("mask_excludes_diagonal", "ex03", [("np.tril(np.ones((T, T), dtype=bool))", "np.tril(np.ones((T, T), dtype=bool), k=-1)", 1)]),
    ("mask_fill_zero", "ex03", [("np.array(-np.inf, dtype=scores.dtype)", "np.array(0.0, dtype=scores.dtype)", 1)]),
    ("mask_after_softmax", "ex04", [
        ("    if mask is not None:\n        # -inf before the softmax: exp(-inf) = 0, so a masked key gets exactly zero weight\n"
         "        scores = np.where(mask, scores, -np.inf)\n", "", 1),
        ("    weights = weights / weights.sum(axis=-1, keepdims=True)\n",
         "    weights = weights / weights.sum(axis=-1, keepdims=True)\n    if mask is not None:\n"
         "        weights = np.where(mask, weights, 0.0)\n", 1)]),
    ("mask_ignored", "ex04", [
        ("    if mask is not None:\n        # -inf before the softmax: exp(-inf) = 0, so a masked key gets exactly zero weight\n"
         "        scores = np.where(mask, scores, -np.inf)\n", "", 1)]),
    ("mask_fill_zero", "ex04", [("np.where(mask, scores, -np.inf)", "np.where(mask, scores, 0.0)", 1)]),
    # BERT's old -10000: right until every kept key scores lower still (ex04's masked large logits)
    ("mask_fill_finite", "ex04", [("np.where(mask, scores, -np.inf)", "np.where(mask, scores, -1e4)", 1)]),
    ("mask_inverted_future_leak", "ex04", [("np.where(mask, scores, -np.inf)", "np.where(mask, -np.inf, scores)", 1)]),
    ("missing_scale", "ex04", [("scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)", "scores = Q @ np.swapaxes(K, -1, -2)", 1)]),
    ("scale_by_d_not_sqrt", "ex04", [("/ math.sqrt(d_k)", "/ d_k", 1)]),
    ("unstable_softmax", "ex04", [("    scores = scores - scores.max(axis=-1, keepdims=True)\n", "", 1)]),
    ("softmax_wrong_axis", "ex04", [("scores.max(axis=-1", "scores.max(axis=-2", 1), ("weights.sum(axis=-1", "weights.sum(axis=-2", 1)]),
    ("weights_transposed", "ex04", [("scores = Q @ np.swapaxes(K, -1, -2)", "scores = K @ np.swapaxes(Q, -1, -2)", 1)]),
    ("scale_missing_in_backward", "ex05", [("dQ = dS @ K * scale", "dQ = dS @ K", 1), ("@ Q * scale", "@ Q", 1)]),
    ("softmax_backward_wrong_axis", "ex02", [("inner = (dy * y).sum(axis=axis, keepdims=True)",
                                              "inner = (dy * y).sum(axis=0, keepdims=True)", 1)]),
    ("softmax_backward_wrong_axis", "ex05", [("(dP * P).sum(axis=-1, keepdims=True)", "(dP * P).sum(axis=-2, keepdims=True)", 1)]),
    ("positional_exponent_i_not_2i", "ex09", [("two_i / d_model", "(two_i // 2) / d_model", 1)]),
    ("softmax_backward_missing_term", "ex05", [("dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))", "dS = P * dP", 1)]),
    ("weights_transposed", "ex05", [("dV = np.swapaxes(P, -1, -2) @ dout", "dV = P @ dout", 1)]),
    ("unbroadcast_wrong_axes", "ex06", [("grad = grad.sum(axis=0)", "grad = grad.sum(axis=-1)", 1)]),
    ("heads_mixed_no_transpose", "ex07", [("x = x.reshape(B, T, n_heads, d_k)", "x = x.reshape(B, n_heads, T, d_k)", 1),
                                          ("    return x.transpose(0, 2, 1, 3)\n", "    return x\n", 1)]),
    ("heads_mixed_no_transpose", "ex08", [("(x).view(B, T, H, d_k).transpose(1, 2)", "(x).view(B, H, T, d_k)", 3)]),
    ("missing_scale", "ex08", [(" / math.sqrt(d_k)", "", 1)]),
    ("mask_inverted_future_leak", "ex08", [("masked_fill(~np.asarray(mask, dtype=bool)", "masked_fill(np.asarray(mask, dtype=bool)", 1)]),
    # the mask applied in NumPy: right values, the graph cut (W_q and W_k get no gradient through a masked forward)
    ("graph_cut_by_numpy", "ex08", [(
        'scores = scores.masked_fill(~np.asarray(mask, dtype=bool), float("-inf"))',
        'scores = type(scores)(np.where(np.asarray(mask, dtype=bool), scores.numpy(), -np.inf))', 1)]),
    ("positional_sin_cos_swapped", "ex09", [("pe[:, 0::2] = np.sin(angle)", "pe[:, 0::2] = np.cos(angle)", 1),
                                            ("pe[:, 1::2] = np.cos(angle)", "pe[:, 1::2] = np.sin(angle)", 1)]),
    ("weights_transposed", "ex10", [("h @ W_hh + b", "h @ W_hh.T + b", 1)]),
    ("bptt_missing_carry", "ex10", [("dh = dhs[:, t] + dh_next", "dh = dhs[:, t]", 1)]),
    ("kv_repeat_tiled_not_interleaved", "ex11", [("return np.repeat(k, n_rep, axis=1)", "return np.tile(k, (1, n_rep, 1, 1))", 1)]),
    ("flash_missing_rescale", "ex12", [("acc = alpha[:, None] * acc + p @ V", "acc = acc + p @ V", 1)]),
    ("flash_materializes_scores", "ex12", [("    T, d = Q.shape\n", "    s = Q @ K.T / math.sqrt(Q.shape[1])\n"
                                            "    p = np.exp(s - s.max(axis=1, keepdims=True))\n"
                                            "    return (p / p.sum(axis=1, keepdims=True)) @ V\n", 1)]),
    ("unstable_softmax", "ex12", [("m_new = np.maximum(m, s.max(axis=1))", "m_new = np.zeros_like(m)", 1)]),
    ("missing_scale", "ex12", [("q = Q[i0:i0 + block_size] * scale", "q = Q[i0:i0 + block_size]", 1)]),
    ("unstable_softmax", "ex11", [("    s = s - s.max(axis=-1, keepdims=True)\n", "", 1)]),
    ("unstable_softmax", "ex14", [("    s = s - s.max(axis=-1, keepdims=True)\n", "", 1)]),
    ("missing_scale", "ex14", [(" / math.sqrt(q_t.shape[-1])", "", 1)]),
    ("window_off_by_one", "ex13", [("(i - j < window)", "(i - j <= window)", 1)]),
    ("mask_excludes_diagonal", "ex13", [("(j <= i) & (i - j < window)", "(j < i) & (i - j < window)", 1)]),
    ("mask_inverted_future_leak", "ex13", [("(j <= i) & (i - j < window)", "(j >= i) & (j - i < window)", 1)]),
    ("kv_cache_not_appended", "ex14", [("return out, (K, V)", "return out, cache", 1)]),
    ("kv_cache_wrong_order", "ex14", [("np.concatenate([cache[0], k_t], axis=2)", "np.concatenate([k_t, cache[0]], axis=2)", 1),
                                      ("np.concatenate([cache[1], v_t], axis=2)", "np.concatenate([v_t, cache[1]], axis=2)", 1)]),
    ("patch_grid_transposed", "ex15", [("    return grid\n", "    return grid.T\n", 1)]),
    ("patch_nothing_patched", "ex15", [("                return z\n", "", 1)]),  # the hook returns None
    ("patch_heads_together", "ex15", [("z[:, :, head] = clean[:, :, head]", "z[:] = clean", 1)]),
    # --- the blind spots of the first red-team run: each still named ---
    ("unstable_softmax", "ex02", [("z = x - x.max(axis=axis, keepdims=True)", "z = x - x.min(axis=axis, keepdims=True)", 1)]),
    ("unstable_softmax", "ex02", [("z = x - x.max(axis=axis, keepdims=True)", "z = x - x.mean(axis=axis, keepdims=True)", 1)]),
    ("unstable_softmax", "ex02", [("z = x - x.max(axis=axis, keepdims=True)", "z = x - x.max()", 1)]),
    ("unstable_softmax", "ex02", [("    e = np.exp(z)\n", "    import math\n    e = np.array([math.exp(v) for v in x.ravel().tolist()]).reshape(x.shape)\n", 1)]),
    ("unstable_softmax", "ex04", [("scores = scores - scores.max(axis=-1, keepdims=True)", "scores = scores - scores.min(axis=-1, keepdims=True)", 1)]),
    ("unstable_softmax", "ex04", [("scores = scores - scores.max(axis=-1, keepdims=True)", "scores = scores - scores.mean(axis=-1, keepdims=True)", 1)]),
    ("missing_scale", "ex05", [("scale = 1.0 / math.sqrt(Q.shape[-1])", "scale = 1.0", 1)]),
    ("softmax_backward_missing_term", "ex05", [("dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))", "dS = P * (1 - P) * dP", 1)]),
    ("flash_missing_rescale", "ex12", [("l = alpha * l + p.sum(axis=1)", "l = l + p.sum(axis=1)", 1)]),
    # --- an answer that writes into its arguments: every check where it happens fails (issue 39) ---
    ("modifies_input", "ex03", [("    return np.where(mask, scores, np.array(-np.inf, dtype=scores.dtype))\n",
                                 "    np.copyto(scores, -np.inf, where=~np.broadcast_to(mask, scores.shape))\n"
                                 "    return scores.copy()\n", 1)]),
    # --- ex05's masks part: any mask, not only a causal one (issue 39) ---
    ("mask_ignored_in_backward", "ex05", [("    if mask is not None:\n        s = np.where(mask, s, -np.inf)\n", "", 1)]),
    ("mask_assumed_causal", "ex05", [("s = np.where(mask, s, -np.inf)",
                                      "s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)", 1)]),
    # --- ex12: an exact softmax one query row at a time is not the online softmax (measured, issue 39) ---
    ("flash_materializes_scores", "ex12", [("    T, d = Q.shape\n", "    out = np.empty((Q.shape[0], V.shape[1]))\n"
                                            "    for i in range(Q.shape[0]):\n"
                                            "        s = K @ Q[i] / math.sqrt(Q.shape[1])\n        s -= s.max()\n"
                                            "        np.exp(s, out=s)\n        out[i] = (s @ V) / s.sum()\n"
                                            "    return out\n", 1)]),
    # --- one mutant per part: only the other part earns its points ---
    ("scale_missing_in_backward", "ex05", [("dK = np.swapaxes(dS, -1, -2) @ Q * scale", "dK = np.swapaxes(dS, -1, -2) @ Q", 1)]),
]


# Wrong answers the red team found passing (issue 39), each with the verdict it must get from the real grader (its
# own process, sandboxed where the machine allows): (what, exercise id, substitutions as above, status,
# {part: points it must earn}, words its failing checks must say). tests/test_grading.py grades them all.
VERDICTS = [
    ("squeezes the size-1 axes away", "ex01",
     [("return scores / math.sqrt(d_k)", "return np.squeeze(scores) / math.sqrt(d_k)", 1)],
     "failed", {"attention_scores": 0}, ["sizes of 1", "has shape"]),
    ("unbroadcast sums one extra leading axis (and special-cases ())", "ex06",
     [("    while grad.ndim > len(shape):\n",
       "    if shape == ():\n        return np.asarray(grad.sum())\n    if grad.ndim > len(shape):\n", 1)],
     "failed", {"unbroadcast": 0}, ["two or more extra leading axes"]),
    ("a global cache that ignores its argument", "ex14",
     [("import numpy as np\n", "import numpy as np\n\n_LAST = [None, None]\n", 1),
      ("np.concatenate([cache[0], k_t], axis=2)", "np.concatenate([_LAST[0], k_t], axis=2)", 1),
      ("np.concatenate([cache[1], v_t], axis=2)", "np.concatenate([_LAST[1], v_t], axis=2)", 1),
      ("    return out, (K, V)\n", "    _LAST[:] = [K, V]\n    return out, (K, V)\n", 1)],
     "failed", {"decode_step": 0}, ["two sequences decoded in turn", "continued two ways"]),
    ("an exact softmax one query row at a time (no online softmax)", "ex12",
     [("    T, d = Q.shape\n", "    out = np.empty((Q.shape[0], V.shape[1]))\n    for i in range(Q.shape[0]):\n"
       "        s = K @ Q[i] / math.sqrt(Q.shape[1])\n        s -= s.max()\n        np.exp(s, out=s)\n"
       "        out[i] = (s @ V) / s.sum()\n    return out\n", 1)],
     "failed", {"flash_attention_forward": 0}, ["the online softmax, measured", "ran out of memory"]),
    ("a backward that assumes a causal mask", "ex05",
     [("s = np.where(mask, s, -np.inf)", "s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)", 1)],
     "failed", {"attention_backward": 10, "masks": 0}, ["arbitrary (T, S) mask", "padding mask"]),
    ("apply_mask writes into its argument", "ex03",
     [("    return np.where(mask, scores, np.array(-np.inf, dtype=scores.dtype))\n",
       "    np.copyto(scores, -np.inf, where=~np.broadcast_to(mask, scores.shape))\n    return scores.copy()\n", 1)],
     "failed", {"causal_mask": 2, "apply_mask": 0}, ["modified its input"]),
    ("softmax_backward writes into dy", "ex02",
     [("    return y * (dy - inner)\n", "    dy -= inner\n    return y * dy\n", 1)],
     "failed", {"softmax": 5, "softmax_backward": 0}, ["modified its input"]),
]
# right answers written differently: they must keep every point
ALTERNATIVES = [
    ("the cache as a list", "ex14", [("return out, (K, V)", "return out, [K, V]", 1)]),
    ("flash attention one query at a time, over key blocks", "ex12",
     [("    for i0 in range(0, T, block_size):\n", "    for i0 in range(0, T, 1):\n", 1),
      ("        q = Q[i0:i0 + block_size] * scale", "        q = Q[i0:i0 + 1] * scale", 1),
      ("        out[i0:i0 + block_size] = acc / l[:, None]", "        out[i0:i0 + 1] = acc / l[:, None]", 1)]),
]
