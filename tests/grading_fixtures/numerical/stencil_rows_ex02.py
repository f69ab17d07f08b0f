"""A cheat in real arithmetic: softmax_backward by a 6th-order central-difference stencil (h = 0.01), one position
of EVERY softmax slice perturbed at once. Such a stencil is good to about 1e-13 of the largest entry (measured),
inside the 1e-12 that the exactness check allows, so plain finite differences (about 1e-10) are not the limit of
what a numerical gradient reaches; it costs 6 C forwards (C = the softmax axis' length), the same order as an
honest backward that builds each slice's Jacobian. What stops it: it differentiates softmax at a preimage
x = log y, so it can only give the gradient for a y that IS a softmax output; the derived formula holds for any
y, and the grader also asks for it at a y whose slices do not sum to 1."""
import numpy as np

STENCIL = ((1, 3 / 4), (2, -3 / 20), (3, 1 / 60))
H = 0.01


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    x = np.moveaxis(np.log(y), axis, -1)         # softmax(log y) = y: a preimage of y
    g = np.moveaxis(dy, axis, -1)
    dx = np.zeros(x.shape)
    for j in range(x.shape[-1]):
        acc = np.zeros(x.shape[:-1])
        for k, c in STENCIL:
            for sign in (1, -1):
                xp = x.copy()
                xp[..., j] += sign * k * H
                acc = acc + sign * c * (softmax(xp, -1) * g).sum(axis=-1)
        dx[..., j] = acc / H
    return np.moveaxis(dx, -1, axis)
