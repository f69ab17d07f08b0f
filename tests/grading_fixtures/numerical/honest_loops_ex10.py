"""Honest and slow: BPTT one sequence of the batch at a time, in Python loops over batch and time, the
forward recomputed inside (the cost check must pass it)."""
import numpy as np


def rnn_forward(x, h0, W_xh, W_hh, b):
    B, T, D = x.shape
    hs = np.zeros((B, T, W_hh.shape[0]))
    for i in range(B):
        h = h0[i]
        for t in range(T):
            h = np.tanh(x[i, t] @ W_xh + h @ W_hh + b)
            hs[i, t] = h
    return hs


def rnn_backward(x, h0, W_xh, W_hh, b, hs, dhs):
    B, T, D = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b)
    dx, dh0 = np.zeros(x.shape), np.zeros(h0.shape)
    dW_xh, dW_hh, db = np.zeros(W_xh.shape), np.zeros(W_hh.shape), np.zeros(b.shape)
    for i in range(B):
        dh_next = np.zeros(h0.shape[1])
        for t in reversed(range(T)):
            h_prev = hs[i, t - 1] if t > 0 else h0[i]
            da = (dhs[i, t] + dh_next) * (1.0 - hs[i, t] ** 2)
            dW_xh += np.outer(x[i, t], da)
            dW_hh += np.outer(h_prev, da)
            db += da
            dx[i, t] = W_xh @ da
            dh_next = W_hh @ da
        dh0[i] = dh_next
    return dx, dh0, dW_xh, dW_hh, db
