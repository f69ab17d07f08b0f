"""The ops whose forward can meet NumPy's RuntimeWarnings run it under ``np.errstate(all="ignore")``.

log(0), 0 / 0, sqrt(-1), exp(1000), sin(inf) give -inf, NaN or inf in PyTorch silently; NumPy warns
("divide by zero encountered in log"), which a notebook shows as red text and pytest's config (warnings
as errors) turns into a failure. An errstate costs ~0.8 us a call (measured), so it wraps only these
forwards, not the hottest ops (Add, Sub, Mul: inf - inf and 0 * inf still warn there). Every backward walk
runs under one errstate (``autograd.backward``), and so does ``nn.functional``'s pointwise activations' op.
"""
from __future__ import annotations

import numpy as np

from . import ops
from .compat import ops as compat_ops

QUIET_OPS = (ops.Div, ops.Log, ops.Sqrt, ops.PowConst, ops.Exp, compat_ops.Pow, compat_ops.Log1p,
             compat_ops.Expm1, compat_ops.Sin, compat_ops.Cos, compat_ops.Var, compat_ops.CumSum, compat_ops.Reciprocal)

for _op in QUIET_OPS:
    _op.forward = staticmethod(np.errstate(all="ignore")(_op.forward))
