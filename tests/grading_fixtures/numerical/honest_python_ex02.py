"""Honest and slow: softmax_backward in plain Python lists, element by element (the cost check must pass it)."""
import numpy as np


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    yt, gt = np.moveaxis(y, axis, -1), np.moveaxis(dy, axis, -1)
    rows_y, rows_g = yt.reshape(-1, yt.shape[-1]).tolist(), gt.reshape(-1, yt.shape[-1]).tolist()
    out = []
    for ys, gs in zip(rows_y, rows_g):
        inner = 0.0
        for a, b in zip(ys, gs):
            inner += a * b
        out.append([a * (b - inner) for a, b in zip(ys, gs)])
    return np.moveaxis(np.array(out).reshape(yt.shape), -1, axis)
