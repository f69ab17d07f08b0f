"""ex14 · decode_step with a KV cache: T steps must reproduce causal attention (stably), and the cache must grow."""
import numpy as np

from .. import references as ref
from .. import wrong
from ..checkkit import CheckFailed, Session, as_array, as_tuple, distinct, expect_close, large_logits


def cache_shapes(cache) -> tuple | None:
    """(K shape, V shape) of a returned cache, or None when there is no (K, V) pair."""
    if isinstance(cache, (tuple, list)) and len(cache) == 2:
        return tuple(np.shape(c) for c in cache)
    return None


def decode(s: Session, q, k, v) -> tuple[np.ndarray, list]:
    """Run decode_step over the whole sequence, feeding back whatever cache it returns."""
    cache, outs, shapes = None, [], []
    for t in range(q.shape[2]):
        out_t, cache = as_tuple(s.call("decode_step", q[:, :, t:t + 1], k[:, :, t:t + 1], v[:, :, t:t + 1], cache),
                                2, "decode_step")
        outs.append(as_array(out_t, f"out_t at step {t}"))
        shapes.append(cache_shapes(cache))
    if any(o.shape != outs[0].shape for o in outs):
        raise CheckFailed(f"out_t changes shape between steps: {[o.shape for o in outs]}")
    return np.concatenate(outs, axis=2), shapes


def variants(q, k, v) -> dict[str, list]:
    causal = ref.causal_mask(q.shape[2])
    return {"kv_cache_not_appended": [wrong.decode_without_cache(q, k, v)],
            "missing_scale": [wrong.attention(q, k, v, causal, scale="none")[0]],
            "scale_by_d_not_sqrt": [wrong.attention(q, k, v, causal, scale="d")[0]]}


def run(s: Session) -> None:
    rng = s.rng
    B, H, T, d, dv = distinct(rng, 5, 2, 7)
    q, k, v = (rng.standard_normal((B, H, T, n)) for n in (d, d, dv))
    with s.check("T decoding steps reproduce causal attention over the sequence"):
        got, _ = decode(s, q, k, v)
        expect_close(got, ref.decode_sequence(q, k, v), "the stacked outputs (B, H, T, d_v)", variants(q, k, v),
                     nonfinite_mistake="unstable_softmax")
    with s.check("the cache grows by one step along axis 2"):
        _, shapes = decode(s, q, k, v)
        for t, got in enumerate(shapes):
            want = ((B, H, t + 1, d), (B, H, t + 1, dv))
            if got != want:
                stuck = got is None or (t > 0 and got == shapes[t - 1])       # nothing returned, or no growth
                held = "no (K, V) pair" if got is None else f"K {got[0]} and V {got[1]}"
                raise CheckFailed(f"after step {t} the returned cache holds {held}, expected K {want[0]} and "
                                  f"V {want[1]}", "kv_cache_not_appended" if stuck else None)
    with s.check("the first step (cache=None) attends to the token itself"):
        out, cache = as_tuple(s.call("decode_step", q[:, :, :1], k[:, :, :1], v[:, :, :1], None), 2, "decode_step")
        expect_close(out, v[:, :, :1], "out_t of the first step")
    with s.check("large logits (scores in the thousands) stay finite"):
        q, k = large_logits(rng, (B, H, T, d), (B, H, T, d))
        v = rng.standard_normal((B, H, T, dv))
        got, _ = decode(s, q, k, v)
        expect_close(got, ref.decode_sequence(q, k, v), "the stacked outputs (large logits)", variants(q, k, v),
                     nonfinite_mistake="unstable_softmax")
