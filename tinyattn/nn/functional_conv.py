"""Convolution and pooling over sliding windows: F.conv1d/2d/3d, max/avg/adaptive pooling, batch_norm.

Every one of them looks at the input through windows. ``_windows`` is NumPy's stride trick: a view
(N, C, *O, *K) of the padded input in which [n, c, o..., k...] is the element under kernel offset k
of the window at output position o, made without copying. A convolution is then one matmul of those
windows with the weight (im2col); pooling reduces each window. ``_fold`` is its adjoint: it adds a
gradient given per window element back onto the input it came from (an element under several
windows gets the sum), which is what every backward here needs.

Shapes: N batch, C channels, S the spatial size(s), K the kernel's, O the output's; G groups.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import promotion
from ..tensor import Function, Tensor

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "batch_norm", "conv1d",
           "conv2d", "conv3d", "max_pool1d", "max_pool2d"]


def _tuple(value, nd: int, name: str, who: str) -> tuple:
    """3 -> (3, 3) for a 2-d op; a tuple must have one int per spatial dim."""
    vals = (value,) * nd if isinstance(value, (int, np.integer)) else tuple(value)
    if len(vals) != nd or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
        raise TypeError(f"{who}: {name} must be an int or a tuple of {nd} ints, got {value!r}")
    return tuple(int(v) for v in vals)


def _windows(xp: np.ndarray, K: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """The view (N, C, *O, *K) of the padded input xp (N, C, *S): window o, kernel offset k."""
    span = tuple(d * (k - 1) + 1 for k, d in zip(K, dilation))  # how far one dilated kernel reaches
    v = sliding_window_view(xp, span, axis=tuple(range(2, xp.ndim)))  # (N, C, *O_every_step, *span)
    steps = tuple(slice(None, None, s) for s in stride) + tuple(slice(None, None, d) for d in dilation)
    return v[(slice(None), slice(None)) + steps]  # (N, C, *O, *K): every stride-th window, every d-th tap


def _fold(cols: np.ndarray, padded_shape: tuple, K: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """The adjoint of ``_windows``: cols (N, C, *O, *K) summed back onto an array of the padded shape."""
    out = np.zeros(padded_shape, dtype=cols.dtype)
    O = cols.shape[2:2 + len(K)]
    for k in np.ndindex(*K):  # one strided add per kernel offset: K is small, the adds are whole arrays
        where = tuple(slice(kk * d, kk * d + s * (o - 1) + 1, s) for kk, d, s, o in zip(k, dilation, stride, O))
        out[(slice(None), slice(None)) + where] += cols[(Ellipsis, *k)]
    return out


def _crop(xp: np.ndarray, pads: tuple) -> np.ndarray:
    """The padded array's inner part: pads is ((before, after), ...) per spatial dim."""
    return xp[(slice(None), slice(None)) + tuple(slice(b, xp.shape[2 + i] - a) for i, (b, a) in enumerate(pads))]


class ConvNd(Function):
    """out[n, o] = sum_{c, k} w[o, c, k] x[n, c, window + k] + b[o], per group;
    dx = fold(g W), dW = sum_n g^T windows(x), db = sum of g over batch and positions"""
    @staticmethod
    def forward(ctx, x, w, *bias, stride, pads, dilation, groups):
        nd, K, G = x.ndim - 2, w.shape[2:], groups
        N, C, Co = x.shape[0], x.shape[1], w.shape[0]
        xp = np.pad(x, ((0, 0), (0, 0)) + pads)  # (N, C, *S_padded), zeros around
        cols = _windows(xp, K, stride, dilation)  # (N, C, *O, *K), a view
        O = cols.shape[2:2 + nd]
        P, R = math.prod(O), C // G * math.prod(K)  # positions; inputs one output reads
        cols = cols.reshape(N, G, C // G, *O, *K)  # (N, G, C/G, *O, *K)
        cols = np.moveaxis(cols, 2, 2 + nd).reshape(N, G, P, R)  # (N, G, P, C/G * K): im2col, a copy
        wg = w.reshape(G, Co // G, R)  # (G, Co/G, C/G * K)
        out = cols @ wg.transpose(0, 2, 1)  # (N, G, P, R) @ (G, R, Co/G) -> (N, G, P, Co/G)
        out = out.transpose(0, 1, 3, 2).reshape(N, Co, *O)  # (N, Co, *O)
        if bias:
            out += bias[0].reshape(Co, *(1,) * nd)  # (Co, 1, ...) broadcast over positions
        ctx.save_for_backward(cols if ctx.needs_input_grad[1] else None, wg)
        ctx.shapes = (xp.shape, K, O, N, C, Co, G, P, R)
        ctx.stride, ctx.pads, ctx.dilation = stride, pads, dilation
        return out

    @staticmethod
    def backward(ctx, g):
        cols, wg = ctx.saved_tensors
        (xp_shape, K, O, N, C, Co, G, P, R), nd = ctx.shapes, len(ctx.shapes[1])
        gg = g.reshape(N, G, Co // G, P)  # (N, G, Co/G, P)
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dcols = gg.transpose(0, 1, 3, 2) @ wg  # (N, G, P, Co/G) @ (G, Co/G, R) -> (N, G, P, R)
            dcols = dcols.reshape(N, G, *O, C // G, *K)  # (N, G, *O, C/G, *K)
            dcols = np.moveaxis(dcols, 2 + nd, 2).reshape(N, C, *O, *K)  # (N, C, *O, *K)
            dx = _crop(_fold(dcols, xp_shape, K, ctx.stride, ctx.dilation), ctx.pads)  # (N, C, *S)
        if ctx.needs_input_grad[1]:
            dw = (gg @ cols).sum(0).reshape(Co, C // G, *K)  # (N, G, Co/G, P) @ (N, G, P, R) summed over N
        if len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]:
            db = g.sum(axis=(0, *range(2, 2 + nd)))  # (Co,)
        return dx, dw, db


def _conv_inputs(nd: int, input, weight, who: str, channels: str = "out_channels, in_channels/groups") -> tuple:
    """The one check of a convolution's tensors (and a transposed one's, whose weight is (in, out/groups, *k)):
    (input as (N, C, *S), whether it came without its batch dim)."""
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{who}: {name} must be a Tensor, got {type(t).__name__}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{who}: weight must be {nd + 2}-D ({channels}, "
                           f"{', '.join('k' * nd)}), got shape {tuple(weight.shape)}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{who}: Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input, but got input of "
                           f"size: {list(input.shape)}")
    unbatched = input.ndim == nd + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched  # (N, C, *S)


def _conv(nd: int, input, weight, bias, stride, padding, dilation, groups, who: str) -> Tensor:
    """Check everything once, then run ConvNd; a (C, *S) input without a batch dim is accepted."""
    x, unbatched = _conv_inputs(nd, input, weight, who)  # (N, C, *S)
    K = tuple(weight.shape[2:])
    stride, dilation = _tuple(stride, nd, "stride", who), _tuple(dilation, nd, "dilation", who)
    if not isinstance(groups, (int, np.integer)) or groups < 1 or weight.shape[0] % groups:
        raise RuntimeError(f"{who}: groups must be a positive int dividing out_channels={weight.shape[0]}, "
                           f"got {groups!r}")
    if min(stride) < 1 or min(dilation) < 1:
        raise RuntimeError(f"{who}: stride and dilation must be >= 1, got stride={stride}, dilation={dilation}")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                           "channels instead")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
        if padding == "same" and max(stride) > 1:
            raise ValueError("padding='same' is not supported for strided convolutions")
        total = [0 if padding == "valid" else d * (k - 1) for k, d in zip(K, dilation)]
        pads = tuple((t // 2, t - t // 2) for t in total)  # an odd total puts the extra zero after, as PyTorch
    else:
        pads = tuple((p, p) for p in _tuple(padding, nd, "padding", who))
        if min(pads)[0] < 0:
            raise RuntimeError(f"{who}: negative padding is not supported, got padding={padding!r}")
    for i, (n, k, d, (a, b)) in enumerate(zip(x.shape[2:], K, dilation, pads)):
        if n + a + b < d * (k - 1) + 1:
            raise RuntimeError(f"Calculated padded input size per channel: ({n + a + b}). Kernel size: ({k}). "
                               "Kernel size can't be greater than actual input size")
    promotion.same_dtype(x, weight, "input and weight")
    args = (x, weight) if bias is None else (x, weight, bias)
    if bias is not None:
        promotion.same_dtype(x, bias, "input and bias")
        if tuple(bias.shape) != (weight.shape[0],):
            raise RuntimeError(f"{who}: bias must have shape ({weight.shape[0]},), got {tuple(bias.shape)}")
    out = ConvNd.apply(*args, stride=stride, pads=pads, dilation=dilation, groups=int(groups))
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D convolution (cross-correlation, as PyTorch): input (N, C_in, L), weight (C_out, C_in/groups, k)
    -> (N, C_out, L_out); padding an int, a 1-tuple, 'valid' (none) or 'same' (L_out = L)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D convolution: input (N, C_in, H, W), weight (C_out, C_in/groups, kH, kW) -> (N, C_out, H_out, W_out)."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D convolution (video, volumes, 3-D patch embeddings): input (N, C_in, D, H, W), weight
    (C_out, C_in/groups, kD, kH, kW) -> (N, C_out, D_out, H_out, W_out); the same N-d code as conv1d/2d."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups, "conv3d")


CONV = {1: conv1d, 2: conv2d, 3: conv3d}  # the functional form of an nd-dimensional convolution


# --- pooling -------------------------------------------------------------------------------------
def _pool_geometry(x: Tensor, nd: int, kernel_size, stride, padding, dilation, ceil_mode: bool, who: str):
    """Kernel, stride, dilation, output size and ((before, after), ...) pads of a pooling, as PyTorch
    computes them: ceil_mode lets a last window hang over the end if it starts inside the input."""
    K = _tuple(kernel_size, nd, "kernel_size", who)
    stride = K if stride is None or stride == [] else _tuple(stride, nd, "stride", who)
    dilation, pad = _tuple(dilation, nd, "dilation", who), _tuple(padding, nd, "padding", who)
    if min(K) < 1 or min(stride) < 1 or min(dilation) < 1:
        raise ValueError(f"{who}: kernel_size, stride and dilation must be >= 1, got {K}, {stride}, {dilation}")
    pads, O = [], []
    for n, k, s, d, p in zip(x.shape[2:], K, stride, dilation, pad):
        span = d * (k - 1) + 1
        if not 0 <= p <= span // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
        o = (n + 2 * p - span + ((s - 1) if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= n + p:  # a window may not start in the right padding alone
            o -= 1
        if o < 1:
            raise RuntimeError(f"{who}: input size {tuple(x.shape)} is too small for kernel {K} with padding {pad} "
                               f"(output size would be {o})")
        pads.append((p, max(p, (o - 1) * s + span - n - p)))  # the right side also covers a ceil_mode overhang
        O.append(o)
    return K, stride, dilation, tuple(pads), tuple(O), pad


class MaxPoolNd(Function):
    """out = the largest element of each window;  dx = g at that element (the first one on ties), 0 elsewhere"""
    @staticmethod
    def forward(ctx, x, K, stride, pads, dilation):
        xp = np.pad(x, ((0, 0), (0, 0)) + pads, constant_values=-np.inf)  # padding never wins a max
        cols = _windows(xp, K, stride, dilation)  # (N, C, *O, *K)
        cols = cols.reshape(*cols.shape[:-len(K)], -1)  # (N, C, *O, prod K)
        arg = cols.argmax(-1)[..., None]  # (N, C, *O, 1): which tap; NaN counts as the largest, as PyTorch
        ctx.arg, ctx.geom = arg, (xp.shape, K, stride, pads, dilation)
        return np.take_along_axis(cols, arg, -1)[..., 0]  # (N, C, *O)

    @staticmethod
    def backward(ctx, g):
        xp_shape, K, stride, pads, dilation = ctx.geom
        dcols = np.zeros(g.shape + (math.prod(K),), dtype=g.dtype)  # (N, C, *O, prod K)
        np.put_along_axis(dcols, ctx.arg, g[..., None], -1)
        return _crop(_fold(dcols.reshape(g.shape + K), xp_shape, K, stride, dilation), pads)  # (N, C, *S)


def _batched(input, nd: int, who: str) -> tuple[Tensor, bool]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{who}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{who}: Expected {nd + 1}D or {nd + 2}D input (with an optional batch dim), got shape "
                           f"{tuple(input.shape)}")
    return (input.unsqueeze(0), True) if input.ndim == nd + 1 else (input, False)


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, who):
    x, unbatched = _batched(input, nd, who)
    K, stride, dilation, pads, O, _ = _pool_geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, who)
    out = MaxPoolNd.apply(x, K=K, stride=stride, pads=pads, dilation=dilation)
    if not return_indices:
        return out.squeeze(0) if unbatched else out
    taps = np.unravel_index(_argmax_taps(x, K, stride, pads, dilation), K)  # each window's tap, per dim
    flat = np.zeros(out.shape, dtype=np.int64)
    for i in range(nd):  # the input position of that tap, counted over the unpadded spatial dims
        o = np.arange(O[i]).reshape((-1,) + (1,) * (nd - 1 - i))  # (O_i, 1, ...) along dim i
        flat = flat * x.shape[2 + i] + o * stride[i] + taps[i] * dilation[i] - pads[i][0]
    idx = Tensor(flat)
    return (out.squeeze(0), idx.squeeze(0)) if unbatched else (out, idx)


def _argmax_taps(x, K, stride, pads, dilation):
    xp = np.pad(x._data, ((0, 0), (0, 0)) + pads, constant_values=-np.inf)
    cols = _windows(xp, K, stride, dilation)  # (N, C, *O, *K)
    return cols.reshape(*cols.shape[:-len(K)], -1).argmax(-1)  # (N, C, *O)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The largest value in each window of (N, C, L) -> (N, C, L_out); stride defaults to kernel_size."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The largest value in each window of (N, C, H, W) -> (N, C, H_out, W_out)."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool2d")


class AvgPoolNd(Function):
    """out = sum of each window / divisor;  dx = fold(g / divisor, spread over the window)"""
    @staticmethod
    def forward(ctx, x, K, stride, pads, divisor):
        xp = np.pad(x, ((0, 0), (0, 0)) + pads)  # (N, C, *S_padded), zeros around
        ones = (1,) * len(K)
        cols = _windows(xp, K, stride, ones)  # (N, C, *O, *K)
        ctx.geom = (xp.shape, K, stride, pads, divisor)
        return cols.sum(axis=tuple(range(-len(K), 0))) / divisor  # (N, C, *O) / (*O)

    @staticmethod
    def backward(ctx, g):
        xp_shape, K, stride, pads, divisor = ctx.geom
        per_tap = np.broadcast_to((g / divisor)[(Ellipsis,) + (None,) * len(K)], g.shape + K)  # (N, C, *O, *K)
        return _crop(_fold(per_tap, xp_shape, K, stride, (1,) * len(K)), pads)  # (N, C, *S)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, who):
    x, unbatched = _batched(input, nd, who)
    K, stride, _, pads, O, pad = _pool_geometry(x, nd, kernel_size, stride, padding, 1, ceil_mode, who)
    if divisor_override is not None:
        if not isinstance(divisor_override, (int, np.integer)) or divisor_override <= 0:
            raise RuntimeError(f"{who}: divisor must be not zero, got divisor_override={divisor_override!r}")
        divisor = np.asarray(float(divisor_override), dtype=x.dtype)
    else:  # per output position, as PyTorch: the window clipped to the padded input (or to the input)
        divisor = np.ones((), dtype=x.dtype)
        for i, (n, k, s, p) in enumerate(zip(x.shape[2:], K, stride, pad)):
            start = np.arange(O[i]) * s - p
            end = np.minimum(start + k, n + p)
            count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
            divisor = divisor * count.reshape((-1,) + (1,) * (nd - 1 - i)).astype(x.dtype)  # (O_0, ..., O_i, 1...)
    out = AvgPoolNd.apply(x, K=K, stride=stride, pads=pads, divisor=divisor)
    return out.squeeze(0) if unbatched else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    """The mean of each window of (N, C, L) -> (N, C, L_out); stride defaults to kernel_size."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """The mean of each window of (N, C, H, W) -> (N, C, H_out, W_out); padding zeros count in the mean
    unless count_include_pad=False; divisor_override divides every sum by that number instead."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool2d")


def _bin_means(x: Tensor, dim: int, o: int) -> Tensor:
    """The means of ``o`` bins along ``dim``, bin i holding positions floor(i n / o) .. ceil((i + 1) n / o) - 1, as
    PyTorch's adaptive pooling bins. Each bin's entries are gathered and summed, so an inf or NaN reaches only
    the bins that hold it (an averaging matrix multiplied it by the 0 of every other bin: inf * 0 = NaN)."""
    n = x.shape[dim]
    starts, ends = (np.arange(o) * n) // o, -((-(np.arange(o) + 1) * n) // o)
    idx = starts[:, None] + np.arange(int((ends - starts).max()))  # (o, L): a bin's positions, padded past its end
    pad = idx >= ends[:, None]
    xs = x.movedim(dim, -1)
    g = xs.index_select(-1, Tensor(np.where(pad, starts[:, None], idx).reshape(-1))).reshape(*xs.shape[:-1], *idx.shape)
    sums = g.masked_fill(Tensor(pad), 0).sum(-1)  # (the padding read the bin's first entry: filled, not multiplied)
    return (sums / Tensor((ends - starts).astype(x.dtype))).movedim(-1, dim)


def _adaptive_avg_pool(nd: int, input, output_size, who: str) -> Tensor:
    x, unbatched = _batched(input, nd, who)
    sizes = (output_size,) * nd if output_size is None or isinstance(output_size, (int, np.integer)) \
        else tuple(output_size)
    if len(sizes) != nd:
        raise ValueError(f"{who}: output_size must be an int or a tuple of {nd}, got {output_size!r}")
    sizes = tuple(n if o is None else int(o) for n, o in zip(x.shape[2:], sizes))  # None keeps that size
    if min(sizes) < 1:
        raise RuntimeError(f"{who}: output_size must be >= 1 in every dim, got {output_size!r}")
    out = x  # averaging over bins is separable: one spatial dim at a time
    for i in range(nd):
        out = _bin_means(out, 2 + i, sizes[i])
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """(N, C, L) -> (N, C, output_size): the mean over output_size nearly equal bins."""
    return _adaptive_avg_pool(1, input, output_size, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """(N, C, H, W) -> (N, C, *output_size); ``output_size=1`` is global average pooling."""
    return _adaptive_avg_pool(2, input, output_size, "adaptive_avg_pool2d")


# --- batch normalization -------------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) of (N, C, *) over the batch and positions.

    training: with this batch's mean and biased variance; the running statistics (if given) move
    toward the batch's by ``momentum``, the variance as its unbiased estimate (n / (n - 1)), as in
    PyTorch. Otherwise: with the running statistics. Then ``* weight + bias`` per channel."""
    if not isinstance(input, Tensor) or input.ndim < 2:
        raise ValueError(f"batch_norm expects a Tensor (N, C, *), got {getattr(input, 'shape', type(input))}")
    C, axes = input.shape[1], (0, *range(2, input.ndim))
    per_channel = (1, C) + (1,) * (input.ndim - 2)  # broadcasts a (C,) vector along dim 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    if training:
        n = input.numel() // C
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        mean = input.mean(dim=axes)  # (C,)
        var = ((input - mean.reshape(per_channel)) ** 2).mean(dim=axes)  # (C,), biased: what normalizes
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var are needed when training=False")
        mean, var = running_mean, running_var
    out = (input - mean.reshape(per_channel)) / (var.reshape(per_channel) + eps).sqrt()  # (N, C, *)
    if weight is not None:
        out = out * weight.reshape(per_channel)
    if bias is not None:
        out = out + bias.reshape(per_channel)
    return out
