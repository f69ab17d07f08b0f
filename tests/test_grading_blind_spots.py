"""The red team's blind spots, closed: wrong answers that used to pass (or fail without their id).

Each misconception is written two ways, as a learner would, and must fail with its id on every
seed; the correct alternatives next to them must still pass. Checks run in this process on a plain
namespace of functions, so the file is fast.
"""
from __future__ import annotations

import math
import types

import numpy as np
import pytest

import tinyattn
from tinyattn import nn
from tinyattn.grading import checks as checks_pkg
from tinyattn.grading.checkkit import FAILED, MAX_MESSAGE, PASSED, Session

SEEDS = (1, 2, 3)


def grade(ex_id: str, seed: int, **functions) -> list:
    s = Session(module=types.SimpleNamespace(**functions), path=f"/learner/{ex_id}.py",
                rng=np.random.default_rng([seed, int(ex_id[2:])]))
    checks_pkg.load(ex_id).run(s)
    return s.finish()


def failed(results) -> list:
    return [r for r in results if not r.passed]


def named(results) -> set[str]:
    return {r.mistake for r in results if r.mistake}


def ok(results) -> bool:
    return not failed(results)


# ---- softmaxes that subtract the wrong thing (ex02, ex04) -------------------------------------------

def _softmax_with(shift):
    def softmax(x, axis=-1):
        with np.errstate(all="ignore"):
            e = np.exp(x - shift(x, axis))
            return e / e.sum(axis=axis, keepdims=True)
    return softmax


WRONG_SHIFTS = {
    "row min": [lambda x, a: x.min(axis=a, keepdims=True), lambda x, a: np.expand_dims(np.min(x, axis=a), a)],
    "row mean": [lambda x, a: x.mean(axis=a, keepdims=True), lambda x, a: np.sum(x, a, keepdims=True) / x.shape[a]],
    "global max": [lambda x, a: x.max(), lambda x, a: np.amax(x, axis=None, keepdims=True)],
}


def good_backward(y, dy, axis=-1):
    return y * (dy - (dy * y).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", sorted(WRONG_SHIFTS))
def test_softmax_shifted_by_anything_but_the_row_max_is_unstable(kind, seed):
    for shift in WRONG_SHIFTS[kind]:
        res = grade("ex02", seed, softmax=_softmax_with(shift), softmax_backward=good_backward)
        assert failed(res) and named(res) == {"unstable_softmax"}, [(r.name, r.message) for r in failed(res)]
        assert all(r.state == FAILED for r in failed(res))


def _attention_with(shift):
    def attention(Q, K, V, mask=None):
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        with np.errstate(all="ignore"):
            e = np.exp(s - shift(s, -1))
            w = e / e.sum(-1, keepdims=True)
        return w @ V, w
    return attention


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", ["row min", "row mean"])
def test_attention_shifted_by_the_row_min_or_mean_is_unstable(kind, seed):
    for shift in WRONG_SHIFTS[kind]:
        res = grade("ex04", seed, attention=_attention_with(shift))
        assert failed(res) and named(res) == {"unstable_softmax"}, [(r.name, r.message) for r in failed(res)]


def softmax_math_exp_loop(x, axis=-1):
    dtype = x.dtype
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        e = [math.exp(v) for v in x[idx]]               # no max subtracted: math.exp(1000) raises
        out[idx] = [v / sum(e) for v in e]
    return np.moveaxis(out, -1, axis).astype(dtype)


def softmax_math_exp_vectorized(x, axis=-1):
    e = np.vectorize(math.exp)(x)
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


@pytest.mark.parametrize("seed", SEEDS)
def test_math_exp_overflow_is_unstable_softmax_not_an_error(seed):
    for softmax in (softmax_math_exp_loop, softmax_math_exp_vectorized):
        res = grade("ex02", seed, softmax=softmax, softmax_backward=good_backward)
        bad = failed(res)
        assert bad and named(res) == {"unstable_softmax"}
        assert all(r.state == FAILED for r in bad) and all("OverflowError" in r.message for r in bad)
        assert {r.name for r in bad} >= {"a large spread inside one row (like [0, 1000]) and mixed signs stay finite"}


def softmax_logsumexp(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return np.exp(x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True)))


def softmax_math_exp_stable(x, axis=-1):
    dtype = x.dtype                                     # the docstring: same dtype as x
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        m = max(x[idx])
        e = [math.exp(v - m) for v in x[idx]]
        out[idx] = [v / sum(e) for v in e]
    return np.moveaxis(out, -1, axis).astype(dtype)


@pytest.mark.parametrize("seed", SEEDS)
def test_correct_softmaxes_still_pass_the_new_stability_checks(seed):
    for softmax in (softmax_logsumexp, softmax_math_exp_stable, _softmax_with(lambda x, a: x.max(a, keepdims=True))):
        assert ok(grade("ex02", seed, softmax=softmax, softmax_backward=good_backward))
    einsum = _attention_with(lambda s, a: s.max(a, keepdims=True))
    assert ok(grade("ex04", seed, attention=einsum))


# ---- ex05: no scale anywhere, and dS = P(1 - P) dP ----------------------------------------------------

def _backward(scale: bool = True, ds: str = "full", einsum: bool = False):
    def attention_backward(Q, K, V, dout, mask=None):
        c = 1.0 / math.sqrt(Q.shape[-1]) if scale else 1.0
        s = (np.einsum("...td,...sd->...ts", Q, K) if einsum else Q @ np.swapaxes(K, -1, -2)) * c
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        P = np.exp(s - s.max(-1, keepdims=True))
        P = P / P.sum(-1, keepdims=True)
        dV = np.swapaxes(P, -1, -2) @ dout
        dP = dout @ np.swapaxes(V, -1, -2)
        dS = {"full": lambda: P * (dP - (dP * P).sum(-1, keepdims=True)),
              "p1mp": lambda: P * (1 - P) * dP,
              "p1mp expanded": lambda: dP * P - dP * P ** 2}[ds]()
        return dS @ K * c, np.swapaxes(dS, -1, -2) @ Q * c, dV
    return attention_backward


@pytest.mark.parametrize("seed", SEEDS)
def test_ex05_with_no_scale_anywhere_is_missing_scale(seed):
    for f in (_backward(scale=False), _backward(scale=False, einsum=True)):
        res = grade("ex05", seed, attention_backward=f)
        assert failed(res) and named(res) == {"missing_scale"}


@pytest.mark.parametrize("seed", SEEDS)
def test_ex05_with_p_one_minus_p_is_the_missing_softmax_term(seed):
    for f in (_backward(ds="p1mp"), _backward(ds="p1mp expanded", einsum=True)):
        res = grade("ex05", seed, attention_backward=f)
        assert failed(res) and named(res) == {"softmax_backward_missing_term"}


@pytest.mark.parametrize("seed", SEEDS)
def test_ex05_correct_alternatives_pass(seed):
    assert ok(grade("ex05", seed, attention_backward=_backward()))
    assert ok(grade("ex05", seed, attention_backward=_backward(einsum=True)))


# ---- ex12: the accumulator rescaled, l not ------------------------------------------------------------

def flash_query_and_key_tiles(Q, K, V, block_size, rescale_l=True):
    T, d = Q.shape
    out = np.empty((T, V.shape[1]))
    for i in range(0, T, block_size):
        q = Q[i:i + block_size] / math.sqrt(d)
        m, l = np.full(len(q), -np.inf), np.zeros(len(q))
        acc = np.zeros((len(q), V.shape[1]))
        for j in range(0, K.shape[0], block_size):
            s = q @ K[j:j + block_size].T
            m_new = np.maximum(m, s.max(1))
            p, alpha = np.exp(s - m_new[:, None]), np.exp(m - m_new)
            l = (alpha * l if rescale_l else l) + p.sum(1)
            acc = alpha[:, None] * acc + p @ V[j:j + block_size]
            m = m_new
        out[i:i + block_size] = acc / l[:, None]
    return out


def flash_key_tiles(Q, K, V, block_size, rescale_l=True):
    m, l = np.full((len(Q), 1), -np.inf), np.zeros((len(Q), 1))
    acc = np.zeros((len(Q), V.shape[1]))
    for j in range(0, len(K), block_size):
        s = Q @ K[j:j + block_size].T / math.sqrt(Q.shape[1])             # (T, Bk)
        m_new = np.maximum(m, s.max(1, keepdims=True))
        p, alpha = np.exp(s - m_new), np.exp(m - m_new)
        l = (alpha * l if rescale_l else l) + p.sum(1, keepdims=True)
        acc, m = alpha * acc + p @ V[j:j + block_size], m_new
    return acc / l


@pytest.mark.parametrize("seed", SEEDS)
def test_flash_rescaling_acc_but_not_l_is_flash_missing_rescale(seed):
    for f in (flash_query_and_key_tiles, flash_key_tiles):
        res = grade("ex12", seed, flash_attention_forward=lambda *a, f=f: f(*a, rescale_l=False))
        assert failed(res) and named(res) == {"flash_missing_rescale"}, [(r.name, r.message) for r in failed(res)]
        assert ok(grade("ex12", seed, flash_attention_forward=f))


# ---- ex14: the new step prepended instead of appended ------------------------------------------------------

def _decoder(prepend: str | None = None, lists: bool = False):
    def decode_step(q_t, k_t, v_t, cache):
        if cache is None:
            K, V = k_t, v_t
        elif prepend == "concatenate":
            K, V = np.concatenate([k_t, cache[0]], axis=2), np.concatenate([v_t, cache[1]], axis=2)
        elif prepend == "insert":
            K, V = np.insert(cache[0], 0, k_t[:, :, 0], axis=2), np.insert(cache[1], 0, v_t[:, :, 0], axis=2)
        else:
            K, V = np.concatenate([cache[0], k_t], axis=2), np.concatenate([cache[1], v_t], axis=2)
        s = q_t @ np.swapaxes(K, -1, -2) / math.sqrt(q_t.shape[-1])
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return w @ V, ([K, V] if lists else (K, V))
    return decode_step


@pytest.mark.parametrize("seed", SEEDS)
def test_kv_cache_that_prepends_is_named(seed):
    for how in ("concatenate", "insert"):
        res = grade("ex14", seed, decode_step=_decoder(prepend=how))
        assert [r.name for r in failed(res)] == ["the cache holds the keys and values in time order: K' = K "
                                                 "followed by k_t"]
        assert named(res) == {"kv_cache_wrong_order"}


@pytest.mark.parametrize("seed", SEEDS)
def test_kv_cache_appending_passes_with_a_tuple_or_a_list(seed):
    assert ok(grade("ex14", seed, decode_step=_decoder()))
    assert ok(grade("ex14", seed, decode_step=_decoder(lists=True)))


# ---- ex08: biases, as the docstring promises ---------------------------------------------------------------

class _MHA(nn.Module):
    bias = True
    use_bias_in_forward = True

    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model, bias=self.bias) for _ in range(4))

    def _proj(self, lin, x):
        return lin(x) if self.use_bias_in_forward else x @ lin.weight.transpose(0, 1)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        H, d = self.n_heads, self.d_k
        q, k, v = (self._proj(lin, x).view(B, T, H, d).transpose(1, 2) for lin in (self.W_q, self.W_k, self.W_v))
        s = q @ k.transpose(-2, -1) / math.sqrt(d)
        if mask is not None:
            s = s.masked_fill(~np.asarray(mask, dtype=bool), float("-inf"))
        out = (s.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        return self._proj(self.W_o, out)


class _NoBias(_MHA):
    bias = False


class _IgnoresBias(_MHA):
    use_bias_in_forward = False


@pytest.mark.parametrize("seed", SEEDS)
def test_ex08_without_biases_fails(seed):
    res = grade("ex08", seed, MultiHeadAttention=_NoBias)
    assert failed(res) and all("no bias" in r.message for r in failed(res))
    res = grade("ex08", seed, MultiHeadAttention=_IgnoresBias)
    assert {r.name for r in failed(res)} >= {"forward (B, T, C) -> (B, T, C) equals attention computed from its "
                                             "weights and biases"}
    assert ok(grade("ex08", seed, MultiHeadAttention=_MHA))


# ---- the dtype before the values -----------------------------------------------------------------------------

def test_a_float16_answer_is_reported_as_the_wrong_dtype():
    def attention_scores(Q, K):
        return (Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])).astype(np.float16)

    bad = failed(grade("ex01", 1, attention_scores=attention_scores))
    assert len(bad) == 4 and all("dtype float16" in r.message and "wrong in" not in r.message for r in bad)

    def softmax(x, axis=-1):
        return softmax_logsumexp(x, axis).astype(np.float16)

    bad = failed(grade("ex02", 1, softmax=softmax, softmax_backward=good_backward))
    by_name = {r.name: r.message for r in bad}
    for name in ("softmax over the last axis (the default)", "softmax(x, axis=0)",
                 "float32 in, float32 out (same dtype as x, as the docstring says)"):
        assert "dtype float16" in by_name[name] and "wrong in" not in by_name[name], by_name[name]


def test_every_check_message_is_capped():
    def attention_scores(Q, K):
        raise ValueError("x" * 100_000)

    res = grade("ex01", 1, attention_scores=attention_scores)
    assert all(len(r.message) <= MAX_MESSAGE for r in res) and any("more characters" in r.message for r in res)
    assert all(r.state != PASSED for r in res if r.name != "does not modify its inputs")


def test_tinyattn_default_dtype_is_restored_after_ex08():
    before = tinyattn.get_default_dtype()
    grade("ex08", 1, MultiHeadAttention=_MHA)
    assert tinyattn.get_default_dtype() == before


# ---- round two: holes a red team found in the checks themselves (each fails on every seed) ------------------

MANY_SEEDS = range(1, 41)


def _window_mask(raise_above_T: bool):
    def sliding_window_mask(T, window):
        if window < 1 or (raise_above_T and window > T):
            raise ValueError(f"window={window} must be in [1, T={T}]")
        i, j = np.indices((T, T))
        return (j <= i) & (i - j < window)
    return sliding_window_mask


def test_ex13_refusing_a_window_above_T_fails_on_every_seed():
    # the docstring allows any window >= 1 (window >= T is the causal mask); it used to pass on 14 of 40 seeds
    for seed in MANY_SEEDS:
        res = grade("ex13", seed, sliding_window_mask=_window_mask(raise_above_T=True))
        assert any("window > T" in r.name or "much larger" in r.name for r in failed(res)), seed
        assert ok(grade("ex13", seed, sliding_window_mask=_window_mask(raise_above_T=False)))


def _attention_mask_after_softmax(renormalise: bool):
    def attention(Q, K, V, mask=None):
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        if mask is not None:
            w = np.where(mask, w, 0.0)
            if renormalise:                      # masking the weights, then renormalising: the same answer
                w = w / w.sum(-1, keepdims=True)
        return w @ V, w
    return attention


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")     # 0 / 0: the mistake itself
def test_ex04_mask_after_the_softmax_fails_causal_invariance_on_every_seed():
    name = "causal invariance: changing future keys and values leaves earlier outputs alone"
    for seed in range(1, 32):
        res = grade("ex04", seed, attention=_attention_mask_after_softmax(renormalise=False))
        assert name in [r.name for r in failed(res)], seed          # it used to pass on 3 of 31 seeds (T = 2)
        assert named(res) == {"mask_after_softmax"}, seed
        # renormalised, it is the same answer in exact arithmetic, and passes every check but one: where the
        # masked keys hold all the weight (masked large logits), the kept weights underflow and 0 / 0 is nan
        res = grade("ex04", seed, attention=_attention_mask_after_softmax(renormalise=True))
        assert [r.name for r in failed(res)] == ["large logits under a padding mask: padded keys score highest and "
                                                 "still get zero weight"], seed


def test_ex03_wants_minus_inf_and_the_dtype_of_the_scores():
    causal = lambda T: np.tril(np.ones((T, T), dtype=bool))                     # noqa: E731
    for seed in SEEDS:
        res = grade("ex03", seed, causal_mask=causal, apply_mask=lambda s, m: np.where(m, s, -1e9))
        msgs = [r.message for r in failed(res)]
        assert msgs and all("puts -1e+09 where the mask is False" in m and "expected -inf" in m for m in msgs), msgs
        res = grade("ex03", seed, causal_mask=causal,
                    apply_mask=lambda s, m: np.where(m, np.asarray(s, dtype=np.float64), -np.inf))
        assert [r.name for r in failed(res)] == ["apply_mask keeps the dtype: float32 scores give float32 scores"]
        assert "dtype float64, expected float32" in failed(res)[0].message

        def apply_mask_copy(scores, mask):                # correct, written another way
            out = scores.copy()
            out[~np.broadcast_to(mask, scores.shape)] = -np.inf
            return out
        for good in (apply_mask_copy, lambda s, m: np.where(m, s, -np.inf),      # a Python float keeps float32
                     lambda s, m: np.where(m, s, np.array(-np.inf, dtype=s.dtype)),
                     lambda s, m: np.where(m, s, s.dtype.type(-np.inf))):
            assert ok(grade("ex03", seed, causal_mask=causal, apply_mask=good)), seed


def test_ex02_float32_in_float64_out_breaks_the_docstrings_dtype():
    def softmax(x, axis=-1):
        x = np.asarray(x, dtype=np.float64)
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    res = grade("ex02", 1, softmax=softmax, softmax_backward=good_backward)
    assert [r.name for r in failed(res)] == ["float32 in, float32 out (same dtype as x, as the docstring says)"]


def flash_query_tiles_only(Q, K, V, block_size):
    """Tiles the queries and takes an ordinary softmax over ALL keys per block: no online softmax."""
    out = np.empty((Q.shape[0], V.shape[1]))
    for i in range(0, Q.shape[0], block_size):
        s = Q[i:i + block_size] @ K.T / math.sqrt(Q.shape[1])              # (Bq, S): every key at once
        p = np.exp(s - s.max(1, keepdims=True))
        out[i:i + block_size] = (p / p.sum(1, keepdims=True)) @ V
    return out


def test_ex12_query_only_tiling_without_online_softmax_fails():
    for seed in SEEDS:
        res = grade("ex12", seed, flash_attention_forward=flash_query_tiles_only)
        # both memory checks: the long keys (16 MiB in all) and the online softmax measured (one row is too much)
        assert [r.name.split(":")[0] for r in failed(res)] == ["a long key sequence (T = 64, S = 65536, block_size = 64)",
                                                               "the online softmax, measured"]
        assert named(res) == {"flash_materializes_scores"}
        assert ok(grade("ex12", seed, flash_attention_forward=flash_query_and_key_tiles))
        assert ok(grade("ex12", seed, flash_attention_forward=flash_key_tiles))


# ---- gradients computed by finite differences are not derived ----------------------------------------------

def fd_grad(f, x, eps=1e-6):
    """Central differences, as a learner writes them (or imports them as numerical_grad)."""
    g = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(x.shape):
        xp, xm = x.astype(np.float64).copy(), x.astype(np.float64).copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def _softmax_fwd(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _fd_backwards(numeric):
    def softmax_backward(y, dy, axis=-1):
        x = np.log(y)                                        # softmax(log y) = y: any x with this y will do
        return numeric(lambda z: float(np.sum(_softmax_fwd(z, axis) * dy)), x)

    def attention_backward(Q, K, V, dout, mask=None):
        def loss(Q, K, V):
            s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            return float(np.sum(_softmax_fwd(s) @ V * dout))
        return (numeric(lambda q: loss(q, K, V), Q), numeric(lambda k: loss(Q, k, V), K),
                numeric(lambda v: loss(Q, K, v), V))

    def matmul_backward(A, B, dC):
        return numeric(lambda a: float(np.sum((a @ B) * dC)), A), numeric(lambda b: float(np.sum((A @ b) * dC)), B)

    def rnn_forward(x, h0, W_xh, W_hh, b):
        h, hs = h0, []
        for t in range(x.shape[1]):
            h = np.tanh(x[:, t] @ W_xh + h @ W_hh + b)
            hs.append(h)
        return np.stack(hs, axis=1)

    def rnn_backward(x, h0, W_xh, W_hh, b, hs, dhs):
        p = [x, h0, W_xh, W_hh, b]
        out = []
        for i in range(5):
            def loss(v, i=i):
                q = list(p)
                q[i] = v
                return float(np.sum(rnn_forward(*q) * dhs))
            out.append(numeric(loss, p[i]))
        return tuple(out)

    def unbroadcast(grad, shape):
        while grad.ndim > len(shape):
            grad = grad.sum(0)
        for i, n in enumerate(shape):
            if n == 1 and grad.shape[i] != 1:
                grad = grad.sum(i, keepdims=True)
        return grad

    return {"ex02": dict(softmax=_softmax_fwd, softmax_backward=softmax_backward),
            "ex05": dict(attention_backward=attention_backward),
            "ex06": dict(unbroadcast=unbroadcast, matmul_backward=matmul_backward),
            "ex10": dict(rnn_forward=rnn_forward, rnn_backward=rnn_backward)}


COST = "costs a few forward passes, not one per entry (derived, not numerical)"
# the exact-to-rounding check, then the cost check (central differences fail both), one of each per part
# (ex02: differentiated at a preimage of y, so also wrong where y is not a softmax output)
EXACT_CHECK = {"ex02": ["softmax_backward is the derived formula: exact to float64 rounding",
                        "softmax_backward is a formula in y: it holds for a y whose slices do not sum to 1",
                        f"softmax_backward {COST}"],
               "ex05": ["the derived formulas: exact to float64 rounding, beyond what finite differences reach", COST,
                        "with an arbitrary mask: exact to float64 rounding",
                        "with a mask: costs a few forward passes, not one per entry"],
               "ex06": ["matmul_backward is the derived formula: exact to float64 rounding", f"matmul_backward {COST}"],
               "ex10": ["rnn_backward is the derived BPTT: exact to float64 rounding", f"rnn_backward {COST}"]}


@pytest.mark.parametrize("ex_id", sorted(EXACT_CHECK))
@pytest.mark.parametrize("how", ["numerical_grad", "eps=1e-5", "eps=3e-6"])
def test_a_backward_by_finite_differences_fails_where_a_derived_one_passes(ex_id, how):
    from tinyattn.gradcheck import numerical_grad
    numeric = numerical_grad if how == "numerical_grad" else (lambda f, x: fd_grad(f, x, float(how[4:])))
    for seed in SEEDS[:2]:
        res = grade(ex_id, seed, **_fd_backwards(numeric)[ex_id])
        want = EXACT_CHECK[ex_id] if isinstance(EXACT_CHECK[ex_id], list) else [EXACT_CHECK[ex_id]]
        assert [r.name for r in failed(res)] == want, [(r.name, r.message) for r in failed(res)]
        assert "finite differences" in failed(res)[0].message
        assert all(r.mistake == "numerical_gradient" for r in failed(res) if "costs a few" in r.name)


def test_derived_backwards_written_differently_are_exact():
    def softmax_backward_jacobian(y, dy, axis=-1):
        y, dy = np.moveaxis(y, axis, -1), np.moveaxis(dy, axis, -1)
        jac = y[..., :, None] * (np.eye(y.shape[-1]) - y[..., None, :])     # (..., n, n): dy_i / dx_j
        return np.moveaxis(np.einsum("...i,...ij->...j", dy, jac), -1, axis)

    def matmul_backward_einsum(A, B, dC):
        dA, dB = np.einsum("...nm,...km->...nk", dC, B), np.einsum("...nk,...nm->...km", A, dC)

        def down(g, shape):
            while g.ndim > len(shape):
                g = g.sum(0)
            return g.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
        return down(dA, A.shape), down(dB, B.shape)

    def unbroadcast(grad, shape):
        lead = grad.ndim - len(shape)
        grad = grad.sum(axis=tuple(range(lead)))
        return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)

    for seed in SEEDS:
        assert ok(grade("ex02", seed, softmax=_softmax_fwd, softmax_backward=softmax_backward_jacobian))
        assert ok(grade("ex06", seed, unbroadcast=unbroadcast, matmul_backward=matmul_backward_einsum))
        assert ok(grade("ex05", seed, attention_backward=_backward(einsum=True)))


# ---- the new mistake ids, written as learners would --------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_backward_summed_over_the_wrong_axis_is_named(seed):
    def softmax_backward(y, dy, axis=-1):
        inner = np.einsum("...i,...i->...", np.moveaxis(dy, 0, -1), np.moveaxis(y, 0, -1))   # sums axis 0
        return y * (dy - np.moveaxis(inner[..., None], -1, 0))
    res = grade("ex02", seed, softmax=_softmax_fwd, softmax_backward=softmax_backward)
    assert failed(res) and named(res) == {"softmax_backward_wrong_axis"}
    assert sum(r.passed for r in res if r.part == "softmax") == 6                       # the forward part is intact

    def queries(Q, K, V, dout, mask=None):
        c = 1.0 / math.sqrt(Q.shape[-1])
        s = Q @ np.swapaxes(K, -1, -2) * c
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        P = _softmax_fwd(s)
        dP = dout @ np.swapaxes(V, -1, -2)
        dS = P * dP - P * np.sum(P * dP, axis=-2, keepdims=True)                    # over the queries
        return dS @ K * c, np.swapaxes(dS, -1, -2) @ Q * c, np.swapaxes(P, -1, -2) @ dout
    res = grade("ex05", seed, attention_backward=queries)
    assert failed(res) and named(res) == {"softmax_backward_wrong_axis"}


@pytest.mark.parametrize("seed", SEEDS)
def test_positional_exponent_with_i_instead_of_2i_is_named(seed):
    def pair_index(T, d_model):
        pe = np.zeros((T, d_model))
        for pos in range(T):
            for i in range(d_model // 2):
                angle = pos / 10000 ** (i / d_model)                     # i where 2i belongs
                pe[pos, 2 * i], pe[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)
        return pe

    def column_index(T, d_model):
        j = np.arange(d_model)
        angle = np.arange(T)[:, None] / np.power(10000.0, j / d_model)   # each column's own index
        return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))

    for f in (pair_index, column_index):
        res = grade("ex09", seed, sinusoidal_encoding=f)
        assert failed(res) and named(res) == {"positional_exponent_i_not_2i"}, [r.message for r in failed(res)]


@pytest.mark.parametrize("seed", SEEDS)
def test_scaled_forward_unscaled_backward_is_named_and_localised(seed):
    def only_forward_scaled(Q, K, V, dout, mask=None, scale_dQ=False):
        c = 1.0 / math.sqrt(Q.shape[-1])
        s = np.einsum("...td,...sd->...ts", Q, K) * c
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        P = _softmax_fwd(s)
        dP = dout @ np.swapaxes(V, -1, -2)
        dS = P * (dP - (dP * P).sum(-1, keepdims=True))
        return dS @ K * (c if scale_dQ else 1.0), np.swapaxes(dS, -1, -2) @ Q, np.swapaxes(P, -1, -2) @ dout
    res = grade("ex05", seed, attention_backward=only_forward_scaled)
    assert failed(res) and named(res) == {"scale_missing_in_backward"}
    assert all("dV is right" in r.message for r in failed(res)), [r.message for r in failed(res)]
    res = grade("ex05", seed, attention_backward=lambda *a: only_forward_scaled(*a, scale_dQ=True))
    assert named(res) == {"scale_missing_in_backward"}
    assert all(r.message.startswith("dK ") and "dQ and dV are right" in r.message for r in failed(res))


def test_kv_cache_of_another_kind_is_not_called_not_appended():
    """A cache that grows but is not a (K, V) pair (here a dict) is told so, not hinted as 'never appended'."""
    def decode_step(q_t, k_t, v_t, cache):
        K = k_t if cache is None else np.concatenate([cache["k"], k_t], axis=2)
        V = v_t if cache is None else np.concatenate([cache["v"], v_t], axis=2)
        s = q_t @ np.swapaxes(K, -1, -2) / math.sqrt(q_t.shape[-1])
        w = np.exp(s - s.max(-1, keepdims=True))
        return (w / w.sum(-1, keepdims=True)) @ V, {"k": K, "v": V}
    for seed in SEEDS:
        res = grade("ex14", seed, decode_step=decode_step)
        grow = [r for r in failed(res) if r.name == "the cache grows by one step along axis 2"]
        assert grow and "a dict, not a (K, V) pair" in grow[0].message and grow[0].mistake is None
        assert "kv_cache_not_appended" not in named(res)
