"""Transposed convolution (F.conv_transpose1d/2d/3d, nn.ConvTranspose1d/2d/3d), as PyTorch's: the
upsampling layer of decoders, U-Nets and GAN generators.

A transposed convolution is the gradient of a convolution with respect to its input: each input
position scatters ``x[n, c] * w[c, o, k]`` onto output position ``position * stride + k * dilation``,
and the overlaps add. So its forward is conv's input-gradient code (``_fold`` of columns) and its
backward is an ordinary convolution (``_windows`` of the output gradient), the two halves of
nn/functional_conv.py swapped. Shapes: x (N, C_in, *S), w (C_in, C_out / groups, *K) ->
(N, C_out, *O), O = (S - 1) stride - 2 padding + dilation (K - 1) + output_padding + 1.
"""
from __future__ import annotations

import math

import numpy as np

from .. import checks, promotion
from ..tensor import Function, Tensor
from .functional_conv import _conv_inputs, _crop, _fold, _tuple, _windows
from .module import Module, Parameter

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]


class ConvTransposeNd(Function):
    """out = crop(fold(x^T W)) (+ b): every input position's columns added onto the output;
    dx = windows(pad(g)) W^T (a convolution of g), dW = sum_n x windows(pad(g)), db = sum of g"""
    @staticmethod
    def forward(ctx, x, w, *bias, stride, pads, dilation, groups, full):
        nd, K, G = x.ndim - 2, w.shape[2:], groups
        N, C, S = x.shape[0], x.shape[1], x.shape[2:]
        Co, P, R = w.shape[1] * G, math.prod(S), w.shape[1] * math.prod(K)  # out channels; positions; taps per input
        xg = x.reshape(N, G, C // G, P)  # (N, G, C/G, P)
        wg = w.reshape(G, C // G, R)  # (G, C/G, Co/G * K)
        cols = xg.transpose(0, 1, 3, 2) @ wg  # (N, G, P, C/G) @ (G, C/G, R) -> (N, G, P, R)
        cols = cols.reshape(N, G, *S, Co // G, *K)  # (N, G, *S, Co/G, *K)
        cols = np.moveaxis(cols, 2 + nd, 2).reshape(N, Co, *S, *K)  # (N, Co, *S, *K)
        out = _crop(_fold(cols, (N, Co, *full), K, stride, dilation), pads)  # (N, Co, *O)
        if bias:
            out = out + bias[0].reshape(Co, *(1,) * nd)  # (Co, 1, ...) broadcast over positions
        ctx.save_for_backward(xg if ctx.needs_input_grad[1] else None, wg)
        ctx.geom = (nd, K, G, N, C, Co, S, P, R, stride, pads, dilation)
        return out

    @staticmethod
    def backward(ctx, g):
        xg, wg = ctx.saved_tensors
        nd, K, G, N, C, Co, S, P, R, stride, pads, dilation = ctx.geom
        gp = np.pad(g, ((0, 0), (0, 0)) + pads)  # (N, Co, *full): the cropped border back, as zeros
        gcols = _windows(gp, K, stride, dilation)[(slice(None), slice(None)) + tuple(slice(0, s) for s in S)]
        gcols = gcols.reshape(N, G, Co // G, *S, *K)  # (N, G, Co/G, *S, *K): window s reads what x[s] wrote
        gcols = np.moveaxis(gcols, 2, 2 + nd).reshape(N, G, P, R)  # (N, G, P, Co/G * K)
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = (gcols @ wg.transpose(0, 2, 1)).transpose(0, 1, 3, 2).reshape(N, C, *S)  # (N,G,P,C/G) -> (N,C,*S)
        if ctx.needs_input_grad[1]:
            dw = (xg @ gcols).sum(0).reshape(C, Co // G, *K)  # (N, G, C/G, P) @ (N, G, P, R), summed over N
        if len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]:
            db = g.sum(axis=(0, *range(2, 2 + nd)))  # (Co,)
        return dx, dw, db


def _conv_transpose(nd: int, input, weight, bias, stride, padding, output_padding, groups, dilation, who) -> Tensor:
    x, unbatched = _conv_inputs(nd, input, weight, who, "in_channels, out_channels/groups")  # (N, C_in, *S)
    stride, dilation = _tuple(stride, nd, "stride", who), _tuple(dilation, nd, "dilation", who)
    pad, out_pad = _tuple(padding, nd, "padding", who), _tuple(output_padding, nd, "output_padding", who)
    if not isinstance(groups, (int, np.integer)) or groups < 1 or weight.shape[0] % groups:
        raise RuntimeError(f"{who}: groups must be a positive int dividing in_channels={weight.shape[0]}, got {groups!r}")
    if min(stride) < 1 or min(dilation) < 1 or min(pad) < 0:
        raise RuntimeError(f"{who}: stride and dilation must be >= 1 and padding >= 0, got stride={stride}, "
                           f"dilation={dilation}, padding={pad}")
    if any(op >= s and op >= d for op, s, d in zip(out_pad, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got output_padding="
                           f"{out_pad}, stride={stride}, dilation={dilation}")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} to "
                           f"have {weight.shape[0]} channels, but got {x.shape[1]} channels instead")
    K = tuple(weight.shape[2:])
    full = tuple((s - 1) * st + d * (k - 1) + 1 + op for s, st, d, k, op in zip(x.shape[2:], stride, dilation, K, out_pad))
    if any(f - 2 * p < 1 for f, p in zip(full, pad)):
        raise RuntimeError(f"Given input size per channel: {list(x.shape[2:])}. Calculated output size per channel: "
                           f"{[f - 2 * p for f, p in zip(full, pad)]}. Output size is too small")
    promotion.same_dtype(x, weight, "input and weight")
    args = (x, weight)
    if bias is not None:
        promotion.same_dtype(x, bias, "input and bias")
        if tuple(bias.shape) != (weight.shape[1] * groups,):
            raise RuntimeError(f"{who}: bias must have shape ({weight.shape[1] * groups},), got {tuple(bias.shape)}")
        args += (bias,)
    out = ConvTransposeNd.apply(*args, stride=stride, pads=tuple((p, p) for p in pad), dilation=dilation,
                                groups=int(groups), full=full)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor:
    """(N, C_in, L) with weight (C_in, C_out/groups, k) -> (N, C_out, (L - 1) stride - 2 padding + dilation (k - 1)
    + output_padding + 1)."""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor:
    """(N, C_in, H, W) with weight (C_in, C_out/groups, kH, kW) -> (N, C_out, H_out, W_out)."""
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor:
    """(N, C_in, D, H, W) with weight (C_in, C_out/groups, kD, kH, kW) -> (N, C_out, D_out, H_out, W_out)."""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation, "conv_transpose3d")


_FN = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


class _ConvTransposeNd(Module):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        from .layers import _uniform_init  # (layers imports nn.functional, which re-exports this file's functions)
        super().__init__()
        who, nd = type(self).__name__, self._nd
        checks.device(device, who)
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {who}')
        self.in_channels = checks.positive_int("in_channels", in_channels, who)
        self.out_channels = checks.positive_int("out_channels", out_channels, who)
        self.groups = checks.positive_int("groups", groups, who)
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", who)
        self.stride, self.dilation = _tuple(stride, nd, "stride", who), _tuple(dilation, nd, "dilation", who)
        self.padding = _tuple(padding, nd, "padding", who)
        self.output_padding = _tuple(output_padding, nd, "output_padding", who)
        self.padding_mode, self.transposed = padding_mode, True
        fan_in = out_channels // groups * math.prod(self.kernel_size)  # PyTorch reads the weight's dim 1 as fan-in
        self.weight = Parameter(_uniform_init((in_channels, out_channels // groups, *self.kernel_size), fan_in))
        if dtype is not None:
            self.weight = Parameter(self.weight.detach().to(dtype))
        if bias:
            self.bias = Parameter(_uniform_init((out_channels,), fan_in).astype(self.weight.dtype))
        else:
            self.register_parameter("bias", None)

    def _output_padding(self, x: Tensor, output_size) -> tuple:
        """output_padding that gives output_size (the last nd entries), as PyTorch's: each must lie between the
        smallest size and that + stride - 1."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        want = tuple(int(s) for s in output_size)[-nd:]
        spatial = x.shape[-nd:]
        least = [(s - 1) * st - 2 * p + d * (k - 1) + 1 for s, st, p, d, k in
                 zip(spatial, self.stride, self.padding, self.dilation, self.kernel_size)]
        for w, lo, st in zip(want, least, self.stride):
            if not lo <= w <= lo + st - 1:
                raise ValueError(f"requested an output size of {list(want)}, but valid sizes range from {least} to "
                                 f"{[lo + st - 1 for lo, st in zip(least, self.stride)]} (for an input of "
                                 f"{list(spatial)})")
        return tuple(w - lo for w, lo in zip(want, least))

    def forward(self, input: Tensor, output_size=None) -> Tensor:  # noqa: A002
        op = self._output_padding(input, output_size)
        return _FN[self._nd](input, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)

    def extra_repr(self) -> str:
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvTranspose1d(_ConvTransposeNd):
    """F.conv_transpose1d as a module: weight (in, out/groups, k), bias (out,), PyTorch's initialisation."""
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """F.conv_transpose2d as a module: weight (in, out/groups, kH, kW); a stride-2 one doubles H and W."""
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """F.conv_transpose3d as a module: weight (in, out/groups, kD, kH, kW)."""
    _nd = 3
