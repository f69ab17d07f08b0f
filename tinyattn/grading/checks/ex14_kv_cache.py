"""ex14 · decode_step with a KV cache: T steps must reproduce causal attention (stably), the cache must grow, and
the cache is the argument: two sequences decoded in turn, and one cache continued two ways, each get their own."""
import numpy as np

from ..oracle import ref, wrong
from ..checkkit import (CheckFailed, Session, as_array, as_sequence, as_tuple, distinct, expect_close, expect_each,
                        large_logits, type_name)


def cache_pair(cache) -> tuple | None:
    """The (K, V) items of a returned cache (a tuple, a list or a NamedTuple of two), or None."""
    items = as_sequence(cache)
    return items if items is not None and len(items) == 2 else None


def cache_shapes(cache) -> tuple | None:
    """(K shape, V shape) of a returned cache, or None when there is no (K, V) pair."""
    pair = cache_pair(cache)
    return None if pair is None else tuple(np.shape(c) for c in pair)


def decode(s: Session, q, k, v) -> tuple[np.ndarray, list, list]:
    """Run decode_step over the whole sequence, feeding back whatever cache it returns.

    Returns the stacked outputs, each step's cache shapes (None: no cache returned; a class name: not a
    pair) and each step's (K, V) pair (None if not a pair).
    The cache goes back to decode_step exactly as it came (a learner's NamedTuple stays one)."""
    cache, outs, shapes, caches = None, [], [], []
    for t in range(q.shape[2]):
        out_t, cache = as_tuple(s.call("decode_step", q[:, :, t:t + 1], k[:, :, t:t + 1], v[:, :, t:t + 1], cache),
                                2, "decode_step")
        outs.append(as_array(out_t, f"out_t at step {t}"))
        pair = cache_pair(cache)
        # the pair's shapes; None when nothing came back; the class name of anything else
        shapes.append(tuple(np.shape(c) for c in pair) if pair is not None else
                      None if cache is None else type_name(cache))
        caches.append(pair)
    if any(o.shape != outs[0].shape for o in outs):
        raise CheckFailed(f"out_t changes shape between steps: {[o.shape for o in outs]}")
    return np.concatenate(outs, axis=2), shapes, caches


def decode_in_turn(s: Session, *seqs) -> list[np.ndarray]:
    """Decode several sequences step by step IN TURN (step t of each, then step t + 1 of each), each fed
    back its own cache: the stacked outputs of each. An answer that keeps its cache anywhere but in the
    returned value mixes the sequences up."""
    caches, outs = [None] * len(seqs), [[] for _ in seqs]
    for t in range(seqs[0][0].shape[2]):
        for i, (q, k, v) in enumerate(seqs):
            out_t, caches[i] = as_tuple(s.call("decode_step", q[:, :, t:t + 1], k[:, :, t:t + 1], v[:, :, t:t + 1],
                                               caches[i]), 2, "decode_step")
            outs[i].append(as_array(out_t, f"out_t at step {t}"))
    if any(o.shape != outs[0][0].shape for seq in outs for o in seq):
        raise CheckFailed(f"out_t changes shape between steps: {[o.shape for o in outs[0]]}")
    return [np.concatenate(seq, axis=2) for seq in outs]


def check_order(caches: list, k: np.ndarray, v: np.ndarray) -> None:
    """After step t the cache holds k[:, :, :t+1] and v[:, :, :t+1] in time order (oldest first)."""
    for t, cache in enumerate(caches):
        if cache_shapes(cache) != (k[:, :, :t + 1].shape, v[:, :, :t + 1].shape):
            raise CheckFailed(f"after step {t} the cache does not hold K and V of {t + 1} steps (see the check "
                              "on how the cache grows)")
        for name, got, full in (("K", cache[0], k), ("V", cache[1], v)):
            got = np.asarray(got)
            want = full[:, :, :t + 1]
            # a cache is a copy of the steps, exact: one rounded to float32 passed rtol 1e-6 on a quarter of seeds
            if not (got.dtype == want.dtype and np.array_equal(got, want)):
                if got.dtype != want.dtype:
                    raise CheckFailed(f"after step {t} the cache's {name} has dtype {got.dtype}, expected "
                                      f"{want.dtype}: the cache holds the steps' own values, as they came")
                got = got.astype(np.float64)
                reversed_ = np.allclose(got, want[:, :, ::-1], rtol=1e-6, atol=1e-8)
                order = [next((j for j in range(t + 1) if np.allclose(got[:, :, i], full[:, :, j])), None)
                         for i in range(t + 1)]
                if order == list(range(t + 1)):
                    raise CheckFailed(f"after step {t} the cache's {name} is close to the steps' own values but not "
                                      "equal to them: the cache holds the steps as they came, copied exactly")
                raise CheckFailed(f"after step {t} the cache's {name} holds the steps in the order {order} along "
                                  f"axis 2, expected {list(range(t + 1))} (oldest first, the new step last)",
                                  "kv_cache_wrong_order" if reversed_ or None not in order else None)


def run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"
    rng = s.rng
    B, H, T, d, dv = distinct(rng, 5, 2, 7)
    q, k, v = (rng.standard_normal((B, H, T, n)) for n in (d, d, dv))
    with s.check("T decoding steps reproduce causal attention over the sequence"):
        got, _, _ = decode(s, q, k, v)
        want, variants = ref.decode_sequence(q, k, v), wrong.decode_variants(q, k, v)
        expect_close(got, want, "the stacked outputs (B, H, T, d_v)", variants, nonfinite_mistake="unstable_softmax",
                     inputs=(q, k, v))
    with s.check("the cache grows by one step along axis 2"):
        _, shapes, _ = decode(s, q, k, v)
        for t, got in enumerate(shapes):
            want = ((B, H, t + 1, d), (B, H, t + 1, dv))
            if got != want:
                # no growth: nothing returned, or a pair that kept its size (the step's own k_t, v_t every time)
                stuck = got is None or (isinstance(got, tuple) and t > 0 and got == shapes[t - 1])
                held = ("nothing (None)" if got is None else f"a {got}, not a (K, V) pair" if isinstance(got, str)
                        else f"K {got[0]} and V {got[1]}")
                raise CheckFailed(f"after step {t} the returned cache holds {held}, expected K {want[0]} and "
                                  f"V {want[1]}", "kv_cache_not_appended" if stuck else None)
    with s.check("the cache holds the keys and values in time order: K' = K followed by k_t"):
        # attention ignores the order of the keys, so only the cache itself can show a prepended step
        check_order(decode(s, q, k, v)[2], k, v)
    with s.check("the first step (cache=None) attends to the token itself"):
        out, cache = as_tuple(s.call("decode_step", q[:, :, :1], k[:, :, :1], v[:, :, :1], None), 2, "decode_step")
        expect_close(out, v[:, :, :1], "out_t of the first step", inputs=(q, k, v))
    with s.check("two sequences decoded in turn, each with its own cache (the cache is the argument, not a global)"):
        q2, k2, v2 = (rng.standard_normal((B, H, T, n)) for n in (d, d, dv))
        got_a, got_b = decode_in_turn(s, (q, k, v), (q2, k2, v2))
        expect_each([(got_a, ref.decode_sequence(q, k, v), "the first sequence's outputs", wrong.decode_variants(q, k, v),
                      dict(inputs=(q, k, v))),
                     (got_b, ref.decode_sequence(q2, k2, v2), "the second sequence's outputs",
                      wrong.decode_variants(q2, k2, v2), dict(inputs=(q2, k2, v2)))])
    with s.check("one cache continued two ways (two candidate next tokens from the same prefix)"):
        # after the prefix's steps, the same cache goes back twice: each continuation sees the prefix and itself only
        qa, ka, va = (rng.standard_normal((B, H, 1, n)) for n in (d, d, dv))
        cache = None
        for t in range(T - 1):
            _, cache = as_tuple(s.call("decode_step", q[:, :, t:t + 1], k[:, :, t:t + 1], v[:, :, t:t + 1], cache), 2,
                                "decode_step")
        out_1, _ = as_tuple(s.call("decode_step", q[:, :, T - 1:], k[:, :, T - 1:], v[:, :, T - 1:], cache), 2,
                            "decode_step")
        out_2, _ = as_tuple(s.call("decode_step", qa, ka, va, cache), 2, "decode_step")
        cat = (lambda x, y: np.concatenate([x[:, :, :T - 1], y], axis=2))           # (B, H, T, n): prefix + one step
        want_1 = ref.decode_sequence(q, k, v)[:, :, T - 1:]
        want_2 = ref.decode_sequence(cat(q, qa), cat(k, ka), cat(v, va))[:, :, T - 1:]
        expect_each([(out_1, want_1, "out_t of the first continuation", None, dict(inputs=(q, k, v))),
                     (out_2, want_2, "out_t of the second continuation (the same cache passed again)", None,
                      dict(inputs=(q, k, v)))])
    with s.check("large logits (scores in the thousands, mixed signs, spread inside rows) stay finite"):
        q, k = large_logits(rng, (B, H, T, d), (B, H, T, d))
        v = rng.standard_normal((B, H, T, dv))
        got, _, _ = decode(s, q, k, v)
        want, variants = ref.decode_sequence(q, k, v), wrong.decode_variants(q, k, v)
        expect_close(got, want, "the stacked outputs (large logits)", variants, nonfinite_mistake="unstable_softmax",
                     inputs=(q, k, v))
