"""``logcumsumexp``, ``rot90``, ``masked_scatter``/``masked_scatter_`` and ``nan_to_num_``, mixed into the
Tensor (through MethodsMixin), each as PyTorch 2.13 does it (tests/oracle/test_scans_and_writes_torch.py).

* ``logcumsumexp(dim)``: log(cumsum(exp(x))) without overflow; its gradient
  dx_i = sum_{j >= i} g_j exp(x_i - out_j) is NaN where x_i and out_j are both the same infinity, as PyTorch's.
* ``masked_scatter(mask, source)``: the positions where mask is True, in row-major order, take source's
  first values (source read flat; it must hold at least as many as mask has Trues).
* ``rot90(k, dims)``: k quarter turns from dims[0] towards dims[1] (flips and a transpose).
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim
from tinyattn.promotion import torch_name


class LogCumSumExp(Function):
    """out_i = log(sum_{j <= i} exp(a_j)) along the last axis;  da_i = sum_{j >= i} g_j exp(a_i - out_j)"""
    @staticmethod
    def forward(ctx, a):
        with np.errstate(invalid="ignore"):  # (a NaN, or inf and -inf, give NaN from there on, as PyTorch's)
            out = np.logaddexp.accumulate(a, axis=-1) if a.shape[-1] else a.copy()
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        n = a.shape[-1]
        later = np.triu(np.ones((n, n), dtype=bool))  # (n, n): [i, j] is j >= i
        with np.errstate(invalid="ignore", over="ignore"):
            terms = np.where(later, np.exp(a[..., :, None] - out[..., None, :]), 0)  # (..., n_i, n_j)
        return (terms * g[..., None, :]).sum(-1).astype(a.dtype)


class MaskedScatter(Function):
    """out = a with a[mask] = s.flat[:count];  da = g with the masked places 0, ds.flat[:count] = g[mask]"""
    @staticmethod
    def forward(ctx, a, s, mask):
        count = int(mask.sum())
        ctx.save_for_backward(mask)
        ctx.s_shape, ctx.count = s.shape, count
        out = a.copy()
        out[mask] = s.reshape(-1)[:count]
        return out

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        gs = np.zeros(int(np.prod(ctx.s_shape)), dtype=g.dtype)
        gs[:ctx.count] = g[mask]
        return np.where(mask, 0, g).astype(g.dtype), gs.reshape(ctx.s_shape)


def _masked_scatter_args(x, mask, source, inplace: bool):
    """(the mask as a bool array of the result's shape, source): PyTorch's checks in its order."""
    if not isinstance(mask, autograd.Tensor) or not isinstance(source, autograd.Tensor):
        raise TypeError(f"masked_scatter: mask and source must be tensors, got {type(mask).__name__} and "
                        f"{type(source).__name__}")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {torch_name(mask._data)}")
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{torch_name(x._data)} and {torch_name(source._data)}")
    try:
        shape = np.broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        raise RuntimeError(f"masked_scatter: the mask's shape {tuple(mask.shape)} does not broadcast with self's "
                           f"shape {tuple(x.shape)}") from None
    if inplace and shape != x.shape:
        raise RuntimeError(f"masked_scatter_: the mask's shape {tuple(mask.shape)} must broadcast to self's shape "
                           f"{tuple(x.shape)}")
    m = np.broadcast_to(mask._data, shape)
    if int(m.sum()) > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as the ones "
                           f"selected by the mask ({int(m.sum())}), got {source.numel()}")
    return m, source


class ScansAndWritesMixin:
    """logcumsumexp, rot90, masked_scatter(_) and nan_to_num_ on the Tensor."""

    __slots__ = ()

    def logcumsumexp(self, dim: int):
        """log(cumsum(exp(self), dim)), computed without overflow."""
        d = _norm_dim(dim, self.ndim, "logcumsumexp")
        if self._data.dtype.kind != "f":
            raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{torch_name(self._data)}\'')
        if self.ndim == 0:
            return self.clone()
        return LogCumSumExp.apply(self.movedim(d, -1)).movedim(-1, d)  # (..., n) -> back to self's layout

    def rot90(self, k: int = 1, dims=(0, 1)):
        """k quarter turns in the plane of ``dims``, from dims[0] towards dims[1] (k < 0 turns back)."""
        if not isinstance(k, int) or isinstance(k, bool):
            raise TypeError(f"rot90(): argument 'k' (position 2) must be int, not {type(k).__name__}")
        dims = list(dims)
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self.ndim < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
        d0, d1 = (_norm_dim(d, self.ndim, "rot90") for d in dims)
        if d0 == d1:  # (PyTorch names the dims as given)
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
        k %= 4
        if k == 1:
            return self.flip(d1).transpose(d0, d1)
        if k == 2:
            return self.flip((d0, d1))
        if k == 3:
            return self.flip(d0).transpose(d0, d1)
        return self.clone()

    def masked_scatter(self, mask, source):
        """A copy of self (broadcast with mask) whose masked positions hold source's first values, in order."""
        m, source = _masked_scatter_args(self, mask, source, inplace=False)
        base = self if self.shape == m.shape else self.expand(*m.shape)
        return MaskedScatter.apply(base, source, mask=m)

    def masked_scatter_(self, mask, source):
        """In place: self's masked positions take source's first values, in order."""
        m, source = _masked_scatter_args(self, mask, source, inplace=True)
        if self._in_graph("masked_scatter_", source):
            return self._commit(MaskedScatter.apply(self, source, mask=m))
        count = int(m.sum())
        return self._plain("masked_scatter_", lambda a: a.__setitem__(m, source._data.reshape(-1)[:count]))

    def nan_to_num_(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None):
        """In place: NaN, +inf and -inf replaced (by 0 and the dtype's largest finite numbers unless given)."""
        if self._in_graph("nan_to_num_"):
            return self._commit(self.nan_to_num(nan, posinf, neginf))
        out = self.detach().nan_to_num(nan, posinf, neginf)._data
        return self._plain("nan_to_num_", lambda a: np.copyto(a, out))
