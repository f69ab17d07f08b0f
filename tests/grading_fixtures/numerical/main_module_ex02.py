"""A complex step past the confinement, through an import of a module whose name begins with an underscore: the
static rules looked at the names imported (`os`), not at the module named after `from` (`__main__`, the learner
process's own script, which holds the real `sys`), and the confined `__import__` handed every such module to the
real import (meant for NumPy's C code importing its own private modules). `sys.modules["numpy"]` is then NumPy
itself: a complex array, one position of every row at once, C forwards. Measured before (sandbox, seed
4611686018427392225): every softmax_backward check passed but the one at a y off the simplex, 5/10 with
preimage_gradient: only ex02's second line held. Now the module after `from` is checked like any imported name
(`forbidden` before the code runs), and the confined `__import__` gives a private module to NumPy's C code alone."""
import numpy as np
from __main__ import sys as host

UNIT = (-1.0) ** 0.5            # a Python complex: it exists, but can enter no confined array


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    real = host.modules["numpy"]                   # NumPy itself, not the confined one
    x = real.moveaxis(real.log(real.asarray(y.tolist())), axis, -1)
    g = real.moveaxis(real.asarray(dy.tolist()), axis, -1)
    h = 1e-30
    dx = real.zeros(x.shape)
    for j in range(x.shape[-1]):
        z = x.astype("complex128")
        z[..., j] += h * UNIT
        e = real.exp(z - x.max(axis=-1, keepdims=True))
        dx[..., j] = ((e / e.sum(axis=-1, keepdims=True)) * g).sum(axis=-1).imag / h
    return np.asarray(real.moveaxis(dx, -1, axis).tolist())
