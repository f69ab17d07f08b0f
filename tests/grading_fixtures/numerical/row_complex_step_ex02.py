"""A cheat: softmax_backward by a complex step that perturbs one position of EVERY softmax slice at once.

Slices do not interact, so one complex forward per position along the softmax axis gives the derivative of
every slice at that position: C forwards in all (C = the softmax axis' length), exact to rounding. Its cost
is the same order as an honest backward that builds each slice's (C, C) Jacobian, so no cost limit stops it:
complex values must not exist in a derived-backward exercise at all. Written past the static rules (no `1j`, no
`complex`): the dtype is a string and the imaginary unit comes from Python's own `(-1.0) ** 0.5`."""
import numpy as np


def softmax(x, axis=-1):
    z = x - x.real.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    x = np.moveaxis(np.log(y), axis, -1).astype("complex128")         # softmax(log y) = y: a preimage of y
    g = np.moveaxis(dy, axis, -1)
    dx = np.zeros(x.shape)
    for j in range(x.shape[-1]):
        xp = x.copy()
        xp[..., j] += 1e-30 * (-1.0) ** 0.5
        dx[..., j] = (softmax(xp, -1) * g).sum(axis=-1).imag / 1e-30
    return np.moveaxis(dx, -1, axis)
