"""Stateless building blocks: activations, dropout, linear, layer norm, losses, attention.

``import tinyattn.nn.functional as F`` gives PyTorch's names. Each function checks its
inputs at the surface (a learner's mistake gets a sentence naming shapes, not a NumPy
traceback) and then runs either a composition of Tensor ops or, where one fused op is
much faster or clearer, a ``Function`` whose backward sits right under its forward.

Shapes: x (..., C) means "any leading dims, features last", e.g. (B, T, C).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import checks, promotion
from ..autograd import is_grad_enabled
from ..fastnp import dot_last, max_keepdims, mean_last, sum_last, sum_rows
from ..special import gelu_erf
from ..tensor import Function, Tensor, get_rng
from ..tensor import ReLU as _ReLU  # the op (nn.ReLU is the module)

__all__ = [
    "softmax", "log_softmax", "relu", "sigmoid", "logsigmoid", "tanh", "silu", "gelu", "dropout", "linear", "layer_norm",
    "embedding", "cross_entropy", "nll_loss", "mse_loss", "kl_div", "one_hot", "pad", "l1_loss", "softplus",
    "normalize",
    "attention", "scaled_dot_product_attention", "linear_attention", "flash_attention",
]


def _as_tensor(x: Any, fn: str, name: str = "input") -> Tensor:
    """Accept a Tensor or anything array-like; reject what can not be a float tensor."""
    t = x if isinstance(x, Tensor) else Tensor(x)
    if t._data.dtype.kind != "f":  # (np.issubdtype(dtype, np.floating), ten times cheaper on the hot path)
        raise TypeError(f"{fn} expects a floating-point {name}, got dtype {t.dtype}")
    return t


# ----------------------------------------------------------------------------------------------
# softmax / log_softmax / relu: the engine already has stable fused ops for these
# ----------------------------------------------------------------------------------------------
def softmax(x: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """exp(x - max) / sum exp(x - max) along `dim`; shape unchanged.

    The max is subtracted inside one fused op and takes no gradient (it cancels exactly), so
    logits of 1e4 stay finite even in float32. A row that is all -inf raises a ValueError.
    """
    return _as_tensor(x, "softmax").softmax(dim, dtype=dtype)  # (dtype=: x is cast to it first, as PyTorch's)


def log_softmax(x: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """x - max - log sum exp(x - max) along `dim` (log-sum-exp: never log(0) for finite x)."""
    return _as_tensor(x, "log_softmax").log_softmax(dim, dtype=dtype)


def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0) elementwise; ``inplace=True`` writes it into x and returns x (``x.relu_()``), as PyTorch."""
    return _as_tensor(x, "relu").relu_() if inplace else _ReLU.apply(_as_tensor(x, "relu"))


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x)) elementwise (never overflows)."""
    return _as_tensor(x, "sigmoid").sigmoid()


class _LogSigmoid(Function):
    """log sigmoid(x) = min(x, 0) - log1p(exp(-|x|));  dx = g sigmoid(-x)"""
    @staticmethod
    def forward(ctx, x):
        # log(sigmoid(x)) computed as written loses everything once sigmoid(x) underflows (x < -745 in
        # float64, -104 in float32: log(0) = -inf). This form never leaves the range: exp(-|x|) <= 1.
        e = np.exp(-np.abs(x))
        ctx.save_for_backward(x < 0, e)
        return np.minimum(x, 0) - np.log1p(e)

    @staticmethod
    def backward(ctx, g):
        neg, e = ctx.saved_tensors
        # sigmoid(-x) = 1 / (1 + e) for x < 0 and e / (1 + e) for x >= 0, both accurate in the tail
        return g * np.where(neg, 1, e) / (1 + e)


def logsigmoid(x: Tensor) -> Tensor:
    """log(sigmoid(x)) elementwise, without underflow: about x for very negative x, about -exp(-x) for large x."""
    return _LogSigmoid.apply(_as_tensor(x, "logsigmoid"))


def tanh(x: Tensor) -> Tensor:
    """tanh(x) elementwise."""
    return _as_tensor(x, "tanh").tanh()


def silu(x: Tensor) -> Tensor:
    """x * sigmoid(x) elementwise (also called swish)."""
    x = _as_tensor(x, "silu")
    return x * x.sigmoid()


# ----------------------------------------------------------------------------------------------
# GELU
# ----------------------------------------------------------------------------------------------
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


class _GELUTanh(Function):
    """y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3);  dx = g [(1 + t)/2 + x/2 (1 - t^2) du/dx]"""
    # Each formula runs in place on one or two fresh arrays, in the order it is written (the same
    # numbers as the one-line form, which makes a new (..., C) array per operation).
    @staticmethod
    def forward(ctx, x):
        t = np.asarray(x * x)  # (a 0-d x: x * x is a NumPy scalar, which tanh(out=) below cannot write)
        t *= x
        t *= 0.044715
        t += x
        t *= _SQRT_2_OVER_PI
        np.tanh(t, out=t)  # t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
        ctx.save_for_backward(x, t)
        y = 0.5 * x
        y *= 1 + t
        return y  # 0.5 x (1 + t)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        du = x * x
        du *= 3 * 0.044715
        du += 1
        du *= _SQRT_2_OVER_PI  # du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
        d = 1 + t
        d *= 0.5  # 0.5 (1 + t)
        rest = 0.5 * x
        sech2 = np.asarray(t * t)  # (an array even for a 0-d t, so out= can write it)
        np.subtract(1, sech2, out=sech2)  # 1 - t^2
        rest *= sech2
        rest *= du  # 0.5 x (1 - t^2) du
        d += rest
        d *= g
        return d


class _GELUErf(Function):
    """y = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2;  dx = g [Phi(x) + x phi(x)]"""
    @staticmethod
    def forward(ctx, x):
        # NumPy has no erf: special.py's, block by block; the forward's exp(-x^2/2) also gives the slope
        y, slope = gelu_erf(x, slope=ctx.needs_input_grad[0] and is_grad_enabled())  # no_grad: no slope array
        ctx.save_for_backward(slope)
        return y

    @staticmethod
    def backward(ctx, g):
        (slope,) = ctx.saved_tensors
        return g * slope


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU(x) = x Phi(x), Phi the standard normal CDF: 'none' (exact, via erf; PyTorch's default) or 'tanh'.

    approximate='tanh' is GPT-2's formula, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), within
    about 5e-4 of the exact one; models trained with it (GPT-2) need it to give their numbers.
    """
    x = _as_tensor(input, "gelu")
    if approximate == "tanh":
        return _GELUTanh.apply(x)
    if approximate == "none":
        return _GELUErf.apply(x)
    raise ValueError(f"gelu: approximate must be 'tanh' or 'none', got {approximate!r}")


# ----------------------------------------------------------------------------------------------
# dropout
# ----------------------------------------------------------------------------------------------
class _Dropout(Function):
    """y = x * mask, mask = keep / (1 - p);  dx = g * mask"""
    @staticmethod
    def forward(ctx, x, mask):
        ctx.save_for_backward(mask)
        return x * mask

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        return g * mask


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Inverted dropout: zero each element with probability p and scale the rest by 1/(1-p).

    Scaling at training time keeps E[y] = x, so evaluation (training=False) is the identity.
    The mask is drawn from ``tinyattn.manual_seed``'s generator: same seed, same mask.
    """
    p = checks.probability("p", p, "dropout")
    x = _as_tensor(x, "dropout")
    if not training or p == 0.0:
        return x
    keep = get_rng().random(x.shape, dtype=np.float32) >= p  # (same shape as x) True = keep
    mask = keep.astype(x.dtype)
    mask *= 1.0 / (1.0 - p)
    return _Dropout.apply(x, mask=mask)


# ----------------------------------------------------------------------------------------------
# linear
# ----------------------------------------------------------------------------------------------
class _Linear(Function):
    """y = x W^T (+ b);  dx = g W,  dW = g^T x (summed over all rows),  db = sum of g over rows"""
    new_arrays = True  # each gradient is a new matmul or sum

    @staticmethod
    def forward(ctx, x, weight, *bias):
        # Fold any leading dims into rows: one (N, in) @ (in, out) GEMM instead of a loop over batches.
        rows = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])  # (N, in), N = prod(leading dims)
        needs = ctx.needs_input_grad  # keep only what a gradient needs: dW needs x, dx needs W (as PyTorch)
        ctx.save_for_backward(rows if needs[1] else None, weight if needs[0] else None)
        y = rows @ weight.T  # (N, out)
        if bias:
            y += bias[0]  # in place: no second (N, out) array
        return y if x.ndim == 2 else y.reshape(*x.shape[:-1], weight.shape[0])  # (..., out)

    @staticmethod
    def backward(ctx, g):
        rows, weight = ctx.saved_tensors  # rows: x as (N, in); each None where its partner needs no gradient
        g_rows = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])  # (N, out)
        needs = ctx.needs_input_grad
        gx = g_rows @ weight if needs[0] else None  # (N, out) @ (out, in) -> (N, in)
        if gx is not None and g.ndim != 2:
            gx = gx.reshape(*g.shape[:-1], weight.shape[1])  # (..., in)
        gw = g_rows.T @ rows if needs[1] else None  # (out, N) @ (N, in) -> (out, in)
        if len(needs) == 2:
            return gx, gw
        return gx, gw, (sum_rows(g_rows) if needs[2] else None)  # db: (out,), the column sums of g


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x @ weight.T + bias: x (..., in), weight (out, in) (PyTorch's layout), bias (out,) -> (..., out)."""
    x = _as_tensor(x, "linear", "x")
    weight = _as_tensor(weight, "linear", "weight")
    x_shape, w_shape = x._data.shape, weight._data.shape  # (the arrays' shapes: no property calls on this hot path)
    if len(w_shape) != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got shape {w_shape}")
    if not x_shape or x_shape[-1] != w_shape[1]:
        raise ValueError(f"linear: x has shape {x_shape} but weight has shape {w_shape}: "
                         f"x's last dim must equal in_features={w_shape[1]}")
    promotion.same_dtype(x, weight)  # a float32 input into a float64 layer is refused, as in PyTorch
    if bias is None:
        return _Linear.apply(x, weight)
    bias = _as_tensor(bias, "linear", "bias")
    if bias._data.shape != (w_shape[0],):
        raise ValueError(f"linear: bias must have shape (out_features,) = ({w_shape[0]},), got {bias._data.shape}")
    return _Linear.apply(x, weight, bias)


# ----------------------------------------------------------------------------------------------
# layer norm
# ----------------------------------------------------------------------------------------------
def _centre_and_rstd(x: np.ndarray, eps: float) -> tuple:
    """(x - mean, 1 / sqrt(var + eps), mean) of each row of x (N, F), accurate on near-constant rows and on
    huge ones; the mean as its two terms (m1, m2), from which _centre rebuilds x - mean bit for bit."""
    m1 = mean_last(x)
    xhat = np.subtract(x, m1, order="C")  # (N, F), centred (C-ordered: the output is, as PyTorch's)
    # x - mean is exact where x is close to the mean, so what error remains is the rounding of the
    # mean itself (a unit in the last place: 0.001 at 1e4 in float32). On a near-constant row
    # that error is the whole signal; the mean of the centred row measures it, and we take it off.
    # (Without this, 768 copies of 1e4 + 0.3 normalised to 0.295 instead of 0.)
    m2 = mean_last(xhat)
    xhat -= m2
    var = dot_last(xhat, xhat) / x.shape[-1]  # (N, 1) biased variance, as PyTorch's forward
    if np.isfinite(var).all():
        rstd = 1.0 / np.sqrt(var + eps)  # (N, 1)
    else:
        rstd = _rstd_of_huge_rows(xhat, var, eps)
    return xhat, rstd, (m1, m2)


def _centre(x: np.ndarray, mean: tuple) -> np.ndarray:
    """x - mean for rows x (N, F), exactly as _centre_and_rstd computed it."""
    xc = x - mean[0]
    xc -= mean[1]
    return xc


def _rstd_of_huge_rows(xc: np.ndarray, var: np.ndarray, eps: float) -> np.ndarray:
    """1 / sqrt(var + eps) where the squares of the centred rows ``xc`` (N, F) overflowed (|x| > ~1e19 in float32).

    Such a row is scaled by s = max |xc| first: 1 / sqrt(var + eps) = 1 / (s sqrt(mean((xc/s)^2) + eps/s^2)).
    Before this, var was inf and every output of the row was silently 0. Rows with NaN stay NaN.
    """
    huge = np.isinf(var)  # (N, 1); NaN rows are not inf and keep their NaN
    s = np.where(huge, np.abs(xc).max(axis=-1, keepdims=True), 1).astype(xc.dtype)
    u = xc / s  # |u| <= 1 in the huge rows
    # s * s may overflow to inf (the caller ignores that warning), and eps / inf = 0 is then right
    scaled = 1.0 / (s * np.sqrt(np.mean(u * u, axis=-1, keepdims=True) + eps / (s * s)))
    return np.where(huge, scaled, 1.0 / np.sqrt(var + eps)).astype(xc.dtype)


class _LayerNorm(Function):
    """y = xhat * w + b, xhat = (x - mean) / sqrt(var + eps) over the last n dims;
    dx = rstd (gh - mean(gh) - xhat mean(gh xhat)) with gh = g w;  dw = sum g xhat;  db = sum g

    It keeps what PyTorch's keeps: the input x, each row's mean and rstd (and the weight), and rebuilds
    xhat from them in backward (bit for bit as forward did). So an in-place write into x after the call
    is caught by backward, ``x.data = ...`` is read by it, and a write into the output (or a detach()
    of it) changes nothing backward reads.
    """
    @staticmethod
    def forward(ctx, x, *affine, n, eps, has_weight):
        # The normalized (trailing) dims are one row of F = prod(normalized_shape) numbers: every
        # statistic is then a reduction along the last axis of an (N, F) matrix (fastnp's fast ones).
        F = math.prod(x.shape[x.ndim - n:])
        rows = x.reshape(-1, F)  # (N, F)
        with np.errstate(over="ignore", invalid="ignore"):  # squares past the float range: see _rstd_of_huge_rows; NaN rows stay NaN
            xhat, rstd, mean = _centre_and_rstd(rows, eps)
        xhat *= rstd  # in place: the centred copy becomes xhat
        weight = affine[0] if has_weight else None
        bias = affine[-1] if len(affine) > has_weight else None
        ctx.save_for_backward(x, *mean, rstd, weight)
        ctx.has_weight, ctx.shape, ctx.norm_shape = has_weight, x.shape, x.shape[x.ndim - n:]
        # The affine in place on xhat (a new array): the numbers of y = xhat * w + b, one (N, F) array fewer.
        # With the backward's in-place steps, float32 forward+backward, one thread, alternating processes:
        # (1, 128, 768) 726-748 -> 570-595 us, (8, 128, 128) 766-914 -> 752-812 us, bit for bit the same.
        if weight is not None:
            xhat *= weight.reshape(F)
        if bias is not None:
            xhat += bias.reshape(F)
        return xhat.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x, m1, m2, rstd, w = ctx.saved_tensors  # x (..., *norm_shape); the mean's terms and rstd (N, 1)
        g_rows = g.reshape(m1.shape[0], -1)  # (N, F)
        F = g_rows.shape[1]
        with np.errstate(over="ignore", invalid="ignore"):
            xhat = _centre(x.reshape(-1, F), (m1, m2))
            xhat *= rstd  # (N, F), as in forward
        gh = g_rows * w.reshape(F) if w is not None else g_rows  # gradient w.r.t. xhat
        dw = np.einsum("nf,nf->f", g_rows, xhat) if ctx.has_weight and ctx.needs_input_grad[1] else None
        # xhat = (x - mean) * rstd depends on x directly, through the mean and through rstd:
        c = dot_last(gh, xhat) / F  # (N, 1)
        gx = np.subtract(gh, mean_last(gh), out=None if gh is g_rows else gh)  # in place on g * w, ours
        xhat *= c  # in place, after dw read it
        gx -= xhat
        gx *= rstd
        grads = [gx.reshape(ctx.shape)]
        if ctx.has_weight:
            grads.append(None if dw is None else dw.reshape(ctx.norm_shape))
        if len(ctx.needs_input_grad) == len(grads) + 1:  # a bias was passed
            grads.append(sum_rows(g_rows).reshape(ctx.norm_shape) if ctx.needs_input_grad[-1] else None)
        return tuple(grads)


def layer_norm(x: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing dims `normalized_shape` to mean 0, variance 1, then * weight + bias.

    x (..., *normalized_shape); weight and bias have shape normalized_shape. Each row is
    normalized on its own (no batch statistics), so it behaves the same in training and eval.
    """
    x = _as_tensor(x, "layer_norm", "x")
    shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else normalized_shape
    if not isinstance(shape, (tuple, list)) or not all(isinstance(n, (int, np.integer)) for n in shape):
        raise TypeError(f"layer_norm: normalized_shape must be an int or a tuple of ints (the trailing dims, "
                        f"e.g. x.shape[-1:]), got {normalized_shape!r}")
    shape = tuple(int(n) for n in shape)
    n = len(shape)
    if n == 0 or x.ndim < n or tuple(x.shape[x.ndim - n:]) != shape:
        raise ValueError(f"layer_norm: expected input with trailing shape {shape} (normalized_shape), "
                         f"got shape {x.shape}")
    if not eps > 0:
        raise ValueError(f"layer_norm: eps must be > 0 (it keeps 1/sqrt(var + eps) finite), got {eps}")
    affine = []
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None:
            p = _as_tensor(p, "layer_norm", name)
            if p.shape != shape:
                raise ValueError(f"layer_norm: {name} must have shape normalized_shape={shape}, got {p.shape}")
            affine.append(p)
    promotion.norm_affine(x, affine)
    if x.numel() == 0:  # an empty batch (or empty rows): an empty result, and zero gradients for weight and bias
        return sum((p * 0 for p in affine), x * 0)
    return _LayerNorm.apply(x, *affine, n=n, eps=float(eps), has_weight=weight is not None)


# ----------------------------------------------------------------------------------------------
# cross entropy
# ----------------------------------------------------------------------------------------------
class _CrossEntropy(Function):
    """loss_i = -log softmax(z_i)[t_i] (0 where t_i = ignore_index);  dz_i = g_i (softmax(z_i) - onehot(t_i))"""
    @staticmethod
    def forward(ctx, logits, targets, keep, n_valid, reduction):
        # targets (N,) class ids, ignored ones already replaced by 0; keep (N,) bool, or None if all count
        C = logits.shape[-1]
        z = logits.reshape(-1, C)  # (N, C): every leading position is one prediction
        m = max_keepdims(z, 1)  # (N, 1)
        # One cheap test (NaN and +-inf survive a sum; float64 keeps finite float32 maxima from overflowing),
        # and only when it fails, the search for the row.
        if not math.isfinite(m.sum(dtype=np.float64)):
            _check_row_max(m)
        logp = z - m  # (N, C) shifted by the row max, so exp() <= 1 never overflows (softmax is unchanged)
        logp -= np.log(sum_last(np.exp(logp)))  # (N, C) log-probabilities
        # Each row's target entry, by its index into the flattened (N*C,) array: one 1-D take (and in
        # backward one 1-D update) is about twice as fast as indexing with the pair (rows, targets).
        flat = np.arange(0, logp.size, C) + targets  # (N,) row i's target sits at i*C + t_i
        losses = logp.reshape(-1).take(flat)  # (N,) log-probabilities of the targets (negated below)
        if keep is not None:
            losses *= keep  # ignored rows score 0
        ctx.save_for_backward(logp, flat, keep)
        ctx.n_valid, ctx.reduction, ctx.shape = n_valid, reduction, logits.shape
        if reduction == "none":
            return -losses.reshape(logits.shape[:-1])  # (N,) -> logits' leading dims, e.g. (B, T)
        total = -losses.sum()  # (exactly the sum of the negated entries: negation is exact)
        return np.asarray(total / n_valid if reduction == "mean" else total, dtype=logits.dtype)

    @staticmethod
    def backward(ctx, g):
        logp, flat, keep = ctx.saved_tensors
        grad = np.exp(logp, order="C")  # (N, C) softmax probabilities, in C order: logp keeps a permuted input's
        grad.reshape(-1)[flat] -= 1  # minus the one-hot target (grad is fresh and C-ordered: reshape(-1) is a view)
        if ctx.reduction == "none":
            row_w = g.reshape(-1, 1)  # (N, 1): each row has its own upstream gradient
        elif ctx.reduction == "mean":
            row_w = g / ctx.n_valid  # the mean divides by the number of scored rows only
        else:
            row_w = g
        grad *= row_w
        if keep is not None:
            grad *= keep[:, None]  # ignored rows get no gradient
        return grad if grad.shape == ctx.shape else grad.reshape(ctx.shape)  # (N, C) -> logits' shape, e.g. (B, T, C)


def _check_row_max(m: np.ndarray) -> None:
    """Raise if a row of logits has no finite maximum (all -inf, or +inf/NaN present): its softmax is undefined."""
    bad = ~np.isfinite(m[:, 0])
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"cross_entropy: logits row {row} (of the {m.shape[0]} flattened rows) has no finite "
                         "maximum (all -inf, or +inf/NaN present), so its softmax is undefined")


def cross_entropy(logits: Tensor, targets: Any, ignore_index: int = -100, reduction: str = "mean",
                  weight: Tensor | None = None, label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross entropy from raw scores: logits (N, C) or (B, T, C), targets (N,) or (B, T) class ids.

    The class dim may be LAST ((B, T, C) with targets (B, T) needs no transpose; PyTorch refuses it), or
    at dim 1 as in PyTorch ((N, C, d1, ..., dk) with targets (N, d1, ..., dk)); when targets fit both,
    dim 1 is taken, as PyTorch does. Targets equal to ``ignore_index``
    score nothing. reduction: 'mean' (over the scored targets), 'sum', or 'none' (shape of targets).
    As in PyTorch (pass these two by name):
    weight (C,): row i's loss is scaled by weight[t_i], and 'mean' divides by the sum of those weights.
    label_smoothing e in [0, 1]: the target is (1 - e) onehot(t_i) + e / C instead of onehot(t_i).
    """
    logits = _as_tensor(logits, "cross_entropy", "logits")
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float, np.floating)) \
            or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be a number in [0, 1], got {label_smoothing!r}")
    logits = _classes_last(logits, targets)
    t, keep, n_valid = _class_targets(logits, targets, ignore_index, reduction, "cross_entropy", "logits")
    if weight is None and not label_smoothing:
        return _CrossEntropy.apply(logits, targets=t, keep=keep, n_valid=n_valid, reduction=reduction)
    logp = logits.reshape(t.size, logits.shape[-1]).log_softmax(-1)  # (N, C)
    return _weighted_nll(logp, t, keep, weight, float(label_smoothing), reduction, logits.shape, "cross_entropy")


def _classes_last(scores: Tensor, targets: Any) -> Tensor:
    """PyTorch's K-dimensional form, scores (N, C, d1, ..., dk) with targets (N, d1, ..., dk), as scores
    (N, d1, ..., dk, C): BERT's ``criterion(logits_lm.transpose(1, 2), masked_tokens)``. When targets fit
    both readings ((N, C, C) scores), PyTorch's (classes at dim 1) is the one taken."""
    shape, tshape = scores.shape, np.shape(targets._data if isinstance(targets, Tensor) else targets)
    if len(shape) >= 3 and tuple(tshape) == (shape[0], *shape[2:]):
        return scores.permute(0, *range(2, len(shape)), 1)  # (N, C, d1..dk) -> (N, d1..dk, C)
    return scores


def _class_targets(scores: Tensor, targets: Any, ignore_index: int, reduction: str, fn: str, name: str) -> tuple:
    """Check class-id targets against scores (N, C) or (B, T, C), classes last, and the reduction.
    Returns (t (N,) ids with ignored ones set to 0, keep (N,) bool or None if all count, n_valid)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    shape = scores._data.shape
    C = shape[-1] if shape else None  # (0-d scores: the shape check below says what is wrong)
    t = checks.ids_in_range(targets, C, "target", fn, n_name="C", ignore=ignore_index)
    if not shape or t.shape != shape[:-1]:
        raise ValueError(f"{fn}: {name} {'have' if name.endswith('s') else 'has'} shape {shape}, so targets must have shape "
                         f"{shape[:-1]} ({name}.shape[:-1], classes last), got {t.shape}")
    t = t.reshape(-1)  # (N,)
    keep, n_valid = None, t.size  # the common case: nothing ignored, no masking work
    # (ignore_index, -100 by default, can be among the targets only if it is a class id or some target is not)
    if (0 <= ignore_index < C or not checks.all_in_range(t, C)) and ignore_index in t:
        keep = t != ignore_index  # (N,) True = scored
        n_valid = int(np.count_nonzero(keep))
        t = np.where(keep, t, 0)  # ignored rows point at class 0 for the lookup, then get weight 0
    if reduction == "mean" and t.size == 0:
        raise ValueError(f"{fn}: empty batch ({name} shape {shape}): the mean over zero targets is "
                         "undefined (PyTorch returns nan); use reduction='sum' (0) or 'none', or skip the batch")
    if reduction == "mean" and n_valid == 0:
        raise ValueError(f"{fn}: every target equals ignore_index={ignore_index}, so the mean is over "
                         "zero targets (undefined); use reduction='sum' or skip this batch")
    return t, keep, n_valid


def nll_loss(input: Tensor, target: Any, weight: Tensor | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of the targets, from LOG-probabilities: input (N, C) or (B, T, C)
    (the output of log_softmax; the class dim LAST, as in cross_entropy), target (N,) or (B, T) ids.
    loss_i = -weight[t_i] input_i[t_i], so ``nll_loss(log_softmax(z, -1), t) == cross_entropy(z, t)``.
    ignore_index, weight and reduction as in cross_entropy."""
    input = _classes_last(_as_tensor(input, "nll_loss"), target)
    t, keep, _ = _class_targets(input, target, ignore_index, reduction, "nll_loss", "input")
    logp = input.reshape(t.size, input.shape[-1])  # (N, C)
    return _weighted_nll(logp, t, keep, weight, 0.0, reduction, input.shape, "nll_loss")


def _weighted_nll(logp: Tensor, t: np.ndarray, keep: np.ndarray | None, weight: Any, smoothing: float,
                  reduction: str, shape: tuple, fn: str) -> Tensor:
    """The loss from log-probabilities logp (N, C), with class weights and/or label smoothing, written
    with Tensor ops (autograd does backward).

    Row i: loss_i = (1 - e) w[t_i] (-logp_i[t_i]) + (e / C) sum_c w_c (-logp_i[c]).
    """
    N, C = logp.shape
    if weight is None:
        w = np.ones(C, dtype=logp.dtype)
    else:
        w = np.asarray(weight, dtype=logp.dtype)
        if w.shape != (C,) or not np.all(np.isfinite(w)):
            raise ValueError(f"{fn}: weight must be a finite 1-D tensor with one entry per class, "
                             f"shape ({C},); got shape {w.shape}")
    w_t = w[t] if keep is None else w[t] * keep  # (N,) each row's weight; 0 for ignored rows
    loss = logp[np.arange(N), t] * (-(1.0 - smoothing) * w_t)  # (N,)
    if smoothing:
        row_keep = np.ones(N, dtype=logp.dtype) if keep is None else keep.astype(logp.dtype)
        loss = loss + (logp * w).sum(-1) * (-(smoothing / C) * row_keep)  # (N, C) -> (N,)
    if reduction == "none":
        return loss.reshape(shape[:-1])  # (N,) -> the scores' leading dims, e.g. (B, T)
    if reduction == "sum":
        return loss.sum()
    total_weight = float(w_t.sum())
    if total_weight == 0:
        raise ValueError(f"{fn}: the scored targets' weights sum to 0, so the weighted mean is "
                         "undefined; use reduction='sum'")
    return loss.sum() / total_weight


@np.errstate(all="ignore")  # inf - inf and 0 * inf are NaN silently, as in PyTorch (a target of inf gives NaN)
def kl_div(input: Tensor, target: Any, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence sum target (log target - input), with input the LOG-probabilities, as PyTorch's F.kl_div.

    input and target of one shape (..., C). log_target=False: target holds probabilities (a 0 entry
    contributes 0); log_target=True: target holds log-probabilities. reduction: 'batchmean' (the sum
    divided by input.shape[0]: the KL per example, what the maths means), 'sum', 'none' (elementwise),
    or 'mean' (divided by the number of ELEMENTS; PyTorch's default, kept for compatibility, and warned about).
    """
    input = _as_tensor(input, "kl_div")
    target = _as_tensor(target, "kl_div", "target")
    if reduction not in ("mean", "batchmean", "sum", "none"):
        raise ValueError(f"kl_div: reduction must be 'batchmean', 'sum', 'none' or 'mean', got {reduction!r}")
    if input.shape != target.shape:
        raise ValueError(f"kl_div: input has shape {input.shape} but target has shape {target.shape}; "
                         "they must match (input: log-probabilities, target: probabilities, same layout)")
    # Where the target probability is 0 the term is 0, whatever the input (even -inf: PyTorch gives NaN there):
    # both logs are replaced by 0 at those places, so no 0 * inf is ever formed.
    if log_target:
        zero = target == -math.inf
        pointwise = target.exp() * (target.masked_fill(zero, 0.0) - input.masked_fill(zero, 0.0))
    else:
        zero = target == 0  # (a negative "probability" gives NaN, as PyTorch's: not a silent 0)
        # PyTorch's xlogy(t, t) - t * input, not t * (log t - input): at t = inf that is inf - inf = NaN, as there
        pointwise = target * target.masked_fill(zero, 1.0).log() - target * input.masked_fill(zero, 0.0)
    if reduction == "none":
        return pointwise
    if reduction == "sum":
        return pointwise.sum()
    if reduction == "batchmean":
        return pointwise.sum() / (input.shape[0] if input.shape else 1)
    warnings.warn("kl_div: reduction='mean' divides by the number of elements, not by the batch size; "
                  "reduction='batchmean' gives the KL divergence per example (PyTorch warns the same)",
                  UserWarning, stacklevel=2)
    return pointwise.mean()


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """(input - target)^2, averaged ('mean'), summed ('sum') or kept ('none'); input and target of one shape.

    Unlike PyTorch (which warns and broadcasts), different shapes are an error: (B, 1) against (B,)
    would silently compare every prediction with every target.
    """
    diff = _difference(input, target, reduction, "mse_loss")
    return _reduced(diff * diff, reduction)


def _difference(input: Any, target: Any, reduction: str, fn: str) -> Tensor:
    """input - target, after the rules mse_loss and l1_loss share: one shape, a known reduction."""
    input = _as_tensor(input, fn)
    target = _as_tensor(target, fn, "target")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if input.shape != target.shape:
        raise ValueError(f"{fn}: input has shape {input.shape} but target has shape {target.shape}; "
                         "they must match (reshape one, e.g. target.view(input.shape))")
    return input - target


def _reduced(err: Tensor, reduction: str) -> Tensor:
    return err if reduction == "none" else err.sum() if reduction == "sum" else err.mean()


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """Class ids (...) -> int64 (..., num_classes) with a 1 at each id; num_classes=-1 means max id + 1."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or num_classes < -1:
        raise ValueError(f"one_hot: num_classes must be an int >= 0, or -1 for max id + 1; got {num_classes!r}")
    n = None if num_classes == -1 else int(num_classes)
    ids = checks.ids_in_range(tensor, n, "input", "one_hot", n_name="num_classes")
    if n is None:
        if ids.size == 0:
            raise ValueError("one_hot: can not infer num_classes from an empty tensor; pass num_classes=")
        num_classes = int(ids.max()) + 1
    return Tensor._make((ids[..., None] == np.arange(num_classes)).astype(np.int64))  # (..., 1) vs (C,) -> (..., C)


def l1_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
            weight: Any = None) -> Tensor:
    """|input - target|, averaged ('mean'), summed ('sum') or kept ('none'); shapes must match, as in mse_loss.
    size_average/reduce are PyTorch's deprecated spellings of reduction (None = not given)."""
    if size_average is not None or reduce is not None:  # PyTorch's legacy rule: reduce=False keeps all,
        reduction = "none" if reduce is False else "sum" if size_average is False else "mean"  # else sum/mean
    err = _difference(input, target, reduction, "l1_loss").abs()
    return _reduced(err if weight is None else err * weight, reduction)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, a smooth ReLU; where beta x > threshold it is x itself (PyTorch's rule:
    there the two agree to float precision and exp would overflow)."""
    x = _as_tensor(input, "softplus")
    from ..functions import where
    bx = x * beta
    linear = Tensor._make(bx._data > threshold)
    safe = where(linear, 0.0, bx)  # exp of a large beta*x overflows: only its other branch is kept (not bx * 0: inf * 0)
    return where(linear, x, safe.exp().log1p() / beta)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None) -> Tensor:
    """input / max(||input||_p along dim, eps): unit vectors along dim (rows of an (N, D) input by default)."""
    if out is not None:
        raise TypeError("normalize: out= is not supported (tinyattn returns a new tensor)")
    x = _as_tensor(input, "normalize")
    denom = x.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(x)  # (..., 1, ...) -> x's shape
    return x / denom


# ----------------------------------------------------------------------------------------------
# attention: written in their own files, re-exported here so F.<name> works as in PyTorch
# ----------------------------------------------------------------------------------------------
from .sdpa import attention, scaled_dot_product_attention, linear_attention  # noqa: E402,F401
from .flash import flash_attention  # noqa: E402,F401
from .mha_functional import multi_head_attention_forward  # noqa: E402,F401
from .padding import pad  # noqa: E402,F401
from .resize import interpolate, upsample  # noqa: E402,F401
from .functional_conv import (  # noqa: E402,F401  (convolution, pooling, batch_norm)
    adaptive_avg_pool1d, adaptive_avg_pool2d, avg_pool1d, avg_pool2d, batch_norm, conv1d, conv2d, conv3d, max_pool1d,
    max_pool2d,
)
from .activations import (  # noqa: E402,F401  (the other pointwise activations, nn/activations.py)
    celu, elu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu, mish, prelu, relu6, selu, softmin,
    softshrink, softsign, tanhshrink, threshold,
)
from .fold import fold, unfold  # noqa: E402,F401
from .more_losses import (  # noqa: E402,F401  (BCE, smooth L1 / Huber, cosine similarity: nn/more_losses.py)
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_similarity, gaussian_nll_loss, huber_loss,
    pairwise_distance, smooth_l1_loss,
)
from .normalization import group_norm, rms_norm  # noqa: E402,F401
from .stochastic import dropout1d, dropout2d, dropout3d, gumbel_softmax  # noqa: E402,F401
from .conv_transpose import conv_transpose1d, conv_transpose2d, conv_transpose3d  # noqa: E402,F401
from .more_pooling import (  # noqa: E402,F401  (3-D and adaptive max pooling: nn/more_pooling.py)
    adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, avg_pool3d, max_pool3d,
)
from .more_losses import (  # noqa: E402,F401  (the margin losses)
    cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, multilabel_soft_margin_loss, soft_margin_loss,
    triplet_margin_loss,
)
from .normalization import instance_norm  # noqa: E402,F401
from .pixel_shuffle import pixel_shuffle, pixel_unshuffle  # noqa: E402,F401
from .bilinear import bilinear  # noqa: E402,F401
from .channels_and_local import alpha_dropout, channel_shuffle, feature_alpha_dropout, local_response_norm  # noqa: E402,F401
from .embedding_functional import embedding  # noqa: E402,F401  (padding_idx, max_norm)
from .inplace_activations import celu_, elu_, hardtanh_, leaky_relu_, relu_, selu_, threshold_  # noqa: E402,F401
from .count_and_margin_losses import (  # noqa: E402,F401  (Poisson NLL, multi-class margins, pdist)
    multi_margin_loss, multilabel_margin_loss, pdist, poisson_nll_loss, triplet_margin_with_distance_loss,
)
from .rrelu_and_lp_pool import lp_pool1d, lp_pool2d, rrelu, rrelu_  # noqa: E402,F401
from .grid_sample import affine_grid, grid_sample  # noqa: E402,F401  (the spatial transformer: nn/grid_sample.py)
