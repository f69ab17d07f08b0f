"""Order statistics that PyTorch has and teaching code reaches for: ``quantile``/``nanquantile``, ``nanmedian``
and ``mode``, mixed into the Tensor (through MethodsMixin).

Each follows PyTorch 2.13's measured rules (tests/oracle/test_statistics_torch.py):

* quantile sorts along dim (stably, NaN last) and reads rank ``q * (n - 1)`` (n: the slice's length; for
  nanquantile its count of non-NaN values); 'lower'/'higher'/'nearest' floor/ceil/round the rank (round
  half to even), 'linear' and 'midpoint' mix the two neighbours as ``lerp`` does. A slice holding a NaN has
  quantile NaN; one holding only NaNs has nanquantile NaN. The gradient flows through the sort to the
  elements read, (1 - w) to the lower neighbour and w to the upper.
* nanmedian is the lower median of the non-NaN values; along dim it returns ``(values, indices)`` (the
  ((count - 1) // 2)-th entry in stable sorted order); over every element its gradient is shared evenly
  among the elements equal to it, as PyTorch's (all of them when the answer is NaN).
* mode is the most frequent value along dim (ties: the smallest value; NaNs never equal each other), with
  the index of its LAST occurrence; its gradient goes to that element.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


class EvenPick(Function):
    """out = the value v picked from a (a 0-d result);  da = g / m at the m elements equal to v (all NaNs when v
    is NaN), 0 elsewhere: PyTorch's gradient for a full median reduction."""
    @staticmethod
    def forward(ctx, a, value):
        ctx.save_for_backward(np.isnan(a) if np.isnan(value) else a == value)
        return np.asarray(value, dtype=a.dtype)

    @staticmethod
    def backward(ctx, g):
        (hit,) = ctx.saved_tensors
        return np.where(hit, g / max(int(hit.sum()), 1), 0).astype(g.dtype)


def _quantile_q(x, q, who: str) -> tuple[np.ndarray, bool]:
    """q as a 1-D array in x's dtype, and whether q was a scalar; PyTorch's checks in its order."""
    if x._data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{who}() input tensor must be either float or double dtype")
    if isinstance(q, autograd.Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{who}() q must be a scalar or 1D tensor")
        if q._data.dtype != x._data.dtype:
            raise RuntimeError(f"{who}() q tensor must be same dtype as the input tensor")
        qa, scalar = q._data.reshape(-1), q.ndim == 0
    elif isinstance(q, (int, float)) and not isinstance(q, bool):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{who}() q must be in the range [0, 1] but got {q}")
        qa, scalar = np.asarray([q], dtype=x._data.dtype), True
    else:
        raise TypeError(f"{who}(): q must be a float or a 0-D/1-D tensor, got {type(q).__name__}")
    if x.numel() == 0:
        raise RuntimeError(f"{who}() input tensor must be non-empty")
    if isinstance(q, autograd.Tensor) and qa.size and not ((qa >= 0) & (qa <= 1)).all():
        raise RuntimeError(f"{who}() q values must be in the range [0, 1]")
    return qa, scalar


def _quantile(x, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool):
    who = "nanquantile" if ignore_nan else "quantile"
    if interpolation not in _MODES:
        raise RuntimeError(f"{who}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if dim is not None and not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{who}(): dim must be an int or None, got {type(dim).__name__}")
    qa, scalar = _quantile_q(x, q, who)
    if dim is None:
        rows, out_shape = x.reshape(1, -1), ((1,) * x.ndim if keepdim else ())  # (1, N)
    else:
        d = _norm_dim(dim, x.ndim, who)
        if x.ndim == 0:
            rows, out_shape = x.reshape(1, 1), ()  # (1, 1)
        else:
            moved = x.movedim(d, -1)  # (..., n): the reduced dim last
            rows = moved.reshape(-1, x.shape[d])  # (R, n)
            out_shape = x.shape[:d] + ((1,) if keepdim else ()) + x.shape[d + 1:]
    srt = rows.sort(dim=-1, stable=True).values  # (R, n), NaN last
    n = rows.shape[-1]
    nans = np.isnan(srt._data)
    dt = x._data.dtype
    if ignore_nan:  # rank within the non-NaN values; a slice of only NaNs reads its first (NaN)
        last = (n - nans.sum(-1, keepdims=True) - 1).astype(dt)  # (R, 1)
        last[last < 0] = 0
    else:  # a slice holding a NaN reads its last entry: NaN
        last = np.full((srt.shape[0], 1), n - 1, dtype=dt)  # (R, 1)
    ranks = qa[None, :] * last  # (R, Q), in x's dtype as PyTorch computes it
    if not ignore_nan:
        ranks = np.where(nans.any(-1, keepdims=True), dt.type(n - 1), ranks)
    ranks = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}.get(interpolation, lambda r: r)(ranks)
    below, above = np.floor(ranks).astype(np.int64), np.ceil(ranks).astype(np.int64)  # (R, Q)
    w = (ranks > below).astype(dt) * dt.type(0.5) if interpolation == "midpoint" else (ranks - below).astype(dt)
    lo = srt.gather(-1, autograd.Tensor._make(below))  # (R, Q)
    hi = srt.gather(-1, autograd.Tensor._make(above))  # (R, Q)
    wt = autograd.Tensor._make(w)
    from tinyattn.functions import where
    # lerp as PyTorch computes it: from the nearer end (so w = 1 gives hi exactly)
    if interpolation in ("lower", "higher", "nearest"):
        out = lo  # a whole rank is read as it is (an inf stays inf: no lerp, no inf - inf)
    else:
        with np.errstate(invalid="ignore"):  # (inf - inf is NaN silently, as PyTorch's lerp)
            out = where(autograd.Tensor._make(w < 0.5), lo + wt * (hi - lo), hi - (hi - lo) * (1 - wt))  # (R, Q)
    out = out.transpose(0, 1)  # (Q, R)
    return out.reshape(out_shape) if scalar else out.reshape((qa.size,) + out_shape)  # (Q, *out_shape)


class StatisticsMixin:
    """quantile, nanquantile, nanmedian and mode on the Tensor."""

    __slots__ = ()

    def quantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
        """The q-th quantiles along dim (every element if None); q a float or a 0-D/1-D tensor of self's dtype
        (a 1-D q puts its length first in the result). Self must be float32 or float64."""
        return _quantile(self, q, dim, keepdim, interpolation, ignore_nan=False)

    def nanquantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
        """quantile over the non-NaN values of each slice."""
        return _quantile(self, q, dim, keepdim, interpolation, ignore_nan=True)

    def nanmedian(self, dim=None, keepdim: bool = False):
        """The lower median of the non-NaN values (NaN if there are none). Along ``dim``: ``(values, indices)``."""
        if self._data.dtype.kind != "f":
            return self.median(dim, keepdim)  # (no NaN to leave out)
        if dim is None:
            if self.numel() == 0:
                return self.sum() * float("nan")
            a = self._data[~np.isnan(self._data)]
            value = np.sort(a)[(a.size - 1) // 2] if a.size else np.nan
            return EvenPick.apply(self, value=value)
        d = _norm_dim(dim, self.ndim, "nanmedian")
        if self.ndim and self.shape[d] == 0:
            raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
        data = self._data if self.ndim else self._data.reshape(1)  # a 0-d tensor as (1,)
        count = np.sum(~np.isnan(data), axis=d)
        return self._sorted_pick(d, keepdim, np.maximum(count - 1, 0) // 2, "nanmedian")

    def mode(self, dim: int = -1, keepdim: bool = False):
        """The most frequent value along ``dim`` (ties: the smallest) and the index of its last occurrence:
        ``(values, indices)``."""
        from tinyattn.compat.methods import MinMax
        d = _norm_dim(dim, self.ndim, "mode")
        if self.ndim == 0:
            return MinMax(self.clone(), autograd.Tensor._make(np.zeros((), dtype=np.int64)))
        n = self.shape[d]
        if n == 0:
            raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
        rows = np.moveaxis(self._data, d, -1).reshape(-1, n)  # (R, n)
        index = np.zeros(rows.shape[0], dtype=np.int64)
        for r, row in enumerate(rows):
            order = np.argsort(row, kind="stable")
            s = row[order]
            run = np.cumsum(np.concatenate([[True], s[1:] != s[:-1]])) - 1  # run id of each sorted entry (NaN: its own)
            best = np.argmax(np.bincount(run))  # the first (smallest) of the most frequent values
            index[r] = order[run == best].max()  # its last occurrence
        at = index.reshape(np.moveaxis(self._data, d, -1).shape[:-1])  # (... without d)
        at = autograd.Tensor._make(np.expand_dims(at, d))
        values, indices = self.gather(d, at), at
        return MinMax(values, indices) if keepdim else MinMax(values.squeeze(d), indices.squeeze(d))
