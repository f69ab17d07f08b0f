import numpy as np
import ex01_scores


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    x = ex01_scores.complex_copy(np.moveaxis(np.log(y), axis, -1))
    g = np.moveaxis(dy, axis, -1)
    dx = np.zeros(x.shape)
    for j in range(x.shape[-1]):
        xp = x.copy()
        xp[..., j] += 1e-30 * (-1.0) ** 0.5
        dx[..., j] = (softmax(xp, -1) * g).sum(axis=-1).imag / 1e-30
    return np.moveaxis(dx, -1, axis)
