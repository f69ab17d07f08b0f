"""The reference's loop, its grid made float32 (the docstring asks for a float64 array). Earned 10/10 on every seed
1-20 (rtol 1e-6 holds for float32's 7 digits of each log-probability, and no dtype was asked); now 0/10."""
import numpy as np


def forward(params: dict, tokens: np.ndarray, hooks: dict | None = None):
    """GIVEN (do not change): a small attention-only transformer, with TransformerLens's hook names.

    params: "W_E" (V, C), "W_U" (C, V), and per layer l: "W_Q.l", "W_K.l", "W_V.l" (H, C, d),
    "W_O.l" (H, d, C). tokens: (B, T) ints. hooks: {name: fn(activation) -> replacement or None} at
    "blocks.{l}.hook_resid_pre" (B, T, C) and "blocks.{l}.attn.hook_z" (B, T, H, d).
    Returns (logits (B, T, V), cache {name: activation} of every hook point, before any replacement).
    """
    hooks = hooks or {}
    cache = {}

    def point(name, x):
        cache[name] = x.copy()
        fn = hooks.get(name)
        out = None if fn is None else fn(x.copy())
        return x if out is None else np.asarray(out, dtype=x.dtype)

    x = params["W_E"][tokens]  # (B, T, C)
    T = tokens.shape[1]
    future = np.triu(np.ones((T, T), dtype=bool), 1)  # (T, T): key after query
    n_layers = sum(1 for k in params if k.startswith("W_Q."))
    for l in range(n_layers):
        x = point(f"blocks.{l}.hook_resid_pre", x)
        q = np.einsum("btc,hcd->bthd", x, params[f"W_Q.{l}"])  # (B, T, H, d)
        k = np.einsum("btc,hcd->bthd", x, params[f"W_K.{l}"])
        v = np.einsum("btc,hcd->bthd", x, params[f"W_V.{l}"])
        scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])  # (B, H, T, T)
        scores = np.where(future, -np.inf, scores)
        w = np.exp(scores - scores.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        z = point(f"blocks.{l}.attn.hook_z", np.einsum("bhqk,bkhd->bqhd", w, v))  # (B, T, H, d)
        x = x + np.einsum("bthd,hdc->btc", z, params[f"W_O.{l}"])  # (B, T, C)
    return x @ params["W_U"], cache


def answer_logprob(logits: np.ndarray, answer: np.ndarray) -> float:
    """GIVEN: the mean over the batch of log p(answer[b]) at the last position. logits (B, T, V)."""
    z = logits[:, -1].astype(np.float64)  # (B, V)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return float(logp[np.arange(len(answer)), answer].mean())


def patch_heads(params: dict, clean_tokens: np.ndarray, corrupted_tokens: np.ndarray,
                answer: np.ndarray) -> np.ndarray:
    """Patch each head's output from the clean run into the corrupted run -> grid (n_layers, n_heads).

    grid[l, h] = answer_logprob of the corrupted run in which head h of layer l has its clean output:
    the hook at "blocks.{l}.attn.hook_z" returns the corrupted activation (B, T, H, d) with
    [:, :, h] (every position) replaced by the clean run's [:, :, h]. Everything else (the other heads,
    the other layers) is computed as the corrupted run computes it: one patch per run.

    clean_tokens and corrupted_tokens: (B, T) ints of the same shape; answer: (B,) the clean answers.
    Return a float64 array of shape (n_layers, n_heads) (n_heads: params["W_Q.0"].shape[0]).

    Hints: run the clean input once with forward(params, clean_tokens) to get its cache; a hook is a
    function of the activation that returns the array to use instead (copy before you write into it).
    """
    _, clean_cache = forward(params, clean_tokens)
    n_layers = len([name for name in params if name.startswith("W_Q.")])
    n_heads = params["W_Q.0"].shape[0]
    grid = np.zeros((n_layers, n_heads), dtype=np.float32)   # float32, where the docstring asks for float64
    for layer in range(n_layers):
        name = f"blocks.{layer}.attn.hook_z"
        clean = clean_cache[name]  # (B, T, H, d)
        for head in range(n_heads):
            def patch(z, head=head):
                z = z.copy()
                z[:, :, head] = clean[:, :, head]  # this head's clean output, at every position
                return z

            logits, _ = forward(params, corrupted_tokens, hooks={name: patch})
            grid[layer, head] = answer_logprob(logits, answer)
    return grid
