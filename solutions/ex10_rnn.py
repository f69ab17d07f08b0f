"""Exercise 10 · a vanilla RNN, forward and backpropagation through time.
Points: 15 in 2 parts, each scored on its own: rnn_forward 5 (after notebook 06), rnn_backward 10 (after
notebook 06).

The baseline attention replaced: one hidden state carried step by step.
Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences).
This exercise runs confined to real arithmetic, so its gradient can only be derived: no complex numbers or
object arrays (no 1j, no complex or object dtype); imports: numpy, math, itertools, functools, collections,
random, time, typing, sys (its streams and exit) and your own helper files (not another exercise's); no name
or attribute that begins with an underscore (but __name__ and __init__); no eval, exec, getattr, open or type.
No exercise may import torch, tensorflow, jax, scipy.special or the grader (tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex10   (backward checked against finite differences)
"""
import numpy as np


def rnn_forward(x: np.ndarray, h0: np.ndarray, W_xh: np.ndarray, W_hh: np.ndarray,
                b: np.ndarray) -> np.ndarray:
    """Run h_t = tanh(x_t W_xh + h_{t-1} W_hh + b) over the sequence; return all h_t.

    Shapes:
        x: (B, T, D) inputs, h0: (B, H) initial state
        W_xh: (D, H), W_hh: (H, H), b: (H,)
        returns: hs (B, T, H), hs[:, t] = h_t (h0 itself is not included)

    Hints:
        * Loop over t; x[:, t] is (B, D). Stack the states with np.stack(..., axis=1).
        * Row vectors times weights: (B, D) @ (D, H) -> (B, H). Mind which side W_hh goes on.
    """
    ### BEGIN SOLUTION
    B, T, D = x.shape
    h = h0
    hs = []
    for t in range(T):
        # (B, D) @ (D, H) + (B, H) @ (H, H) + (H,) -> (B, H)
        h = np.tanh(x[:, t] @ W_xh + h @ W_hh + b)
        hs.append(h)
    return np.stack(hs, axis=1)                       # T x (B, H) -> (B, T, H)
    ### END SOLUTION


def rnn_backward(x: np.ndarray, h0: np.ndarray, W_xh: np.ndarray, W_hh: np.ndarray,
                 b: np.ndarray, hs: np.ndarray, dhs: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Backpropagation through time: returns (dx, dh0, dW_xh, dW_hh, db).

    Shapes:
        x, h0, W_xh, W_hh, b: as in rnn_forward;  hs: (B, T, H), the output of rnn_forward
        dhs: (B, T, H), dL/dhs (the loss touches every step)
        returns: dx (B, T, D), dh0 (B, H), dW_xh (D, H), dW_hh (H, H), db (H,)

    Math, walking t = T-1 down to 0 with a carry dh_next (zero at the end):
        dh   = dhs[:, t] + dh_next            (h_t feeds the loss AND the next step)
        da   = dh * (1 - h_t**2)              (tanh' = 1 - tanh²)
        dW_xh += x_tᵀ da,   dW_hh += h_{t-1}ᵀ da,   db += sum over the batch of da
        dx[:, t] = da W_xhᵀ,   dh_next = da W_hhᵀ     (h_{-1} is h0; dh0 is the final carry)
    Graded to float64 rounding: within 1e-12 of the largest entry of the exact gradient. Finite
    differences (numerical_grad) are only good to about 1e-10, so they do not pass: derive it.
    The grader also measures its CPU time on large inputs: a gradient computed numerically
    (finite differences, a complex step, dual numbers) costs one forward pass per input entry,
    a derived one a few; over 500 forward passes' worth fails.
    """
    ### BEGIN SOLUTION
    B, T, D = x.shape
    dx = np.zeros_like(x)
    dW_xh, dW_hh, db = np.zeros_like(W_xh), np.zeros_like(W_hh), np.zeros_like(b)
    dh_next = np.zeros_like(h0)                       # (B, H) gradient arriving from step t+1
    for t in reversed(range(T)):
        h_prev = hs[:, t - 1] if t > 0 else h0        # (B, H)
        dh = dhs[:, t] + dh_next                      # h_t reaches the loss directly and via h_{t+1}
        da = dh * (1.0 - hs[:, t] ** 2)               # through tanh
        dW_xh += x[:, t].T @ da                       # (D, B) @ (B, H) -> (D, H)
        dW_hh += h_prev.T @ da                        # (H, B) @ (B, H) -> (H, H)
        db += da.sum(axis=0)                          # b is shared by the whole batch
        dx[:, t] = da @ W_xh.T                        # (B, H) @ (H, D) -> (B, D)
        dh_next = da @ W_hh.T                         # (B, H) @ (H, H) -> (B, H)
    return dx, dh_next, dW_xh, dW_hh, db
    ### END SOLUTION
