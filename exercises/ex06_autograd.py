"""Exercise 06 · the two pieces of autograd that trip everyone up: broadcasting and matmul.
Points: 10 in 2 parts, each scored on its own: unbroadcast 4 (after notebook 02), matmul_backward 6
(after notebook 02).

Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences).
This exercise runs confined to real arithmetic, so its gradient can only be derived: no complex numbers or
object arrays (no 1j, no complex or object dtype); imports: numpy, math, itertools, functools, collections,
random, time, typing, sys (its streams and exit) and your own helper files (not another exercise's); no name
or attribute that begins with an underscore (but __name__ and __init__); no eval, exec, getattr, open or type.
No exercise may import torch, tensorflow, jax, scipy.special or the grader (tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex06   (checked against finite differences)
"""
import numpy as np


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `grad` back down to `shape`, undoing NumPy broadcasting.

    If an input x of shape `shape` was broadcast to grad.shape in the forward pass, every
    copy of x[i] received its own gradient, and dL/dx[i] is their sum.

    Shapes:
        grad: the gradient of the broadcast result, e.g. (B, T, C)
        shape: the input's own shape, broadcastable to grad.shape, e.g. (C,), (1, C), (T, 1) or ()
        returns: an array of exactly `shape`

    Broadcasting aligns shapes on the RIGHT:
        1. grad has extra axes on the LEFT: sum them away (axis 0, repeatedly).
        2. where `shape` has a 1 and grad does not: sum that axis with keepdims=True.

    Example: grad (2, 3, 4) -> shape (3, 1): sum axis 0 -> (3, 4), then axis 1 keepdims -> (3, 1).
    """
    raise NotImplementedError("ex06: implement unbroadcast")


def matmul_backward(A: np.ndarray, B: np.ndarray, dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of C = A @ B (batched, broadcasting leading dims): returns (dA, dB).

    Shapes:
        A: (..., n, k), B: (..., k, m) with leading dims broadcastable against each other
        dC: (..., n, m), the upstream gradient, shaped like C (the broadcast leading dims)
        returns: dA shaped exactly like A, dB shaped exactly like B

    Math: for 2-D matrices dA = dC Bᵀ and dB = Aᵀ dC. With leading dims, compute these on
    the broadcast shapes, then sum each back to its input's shape (your unbroadcast).
    Graded to float64 rounding: within 1e-12 of the largest entry of the exact gradient. Finite
    differences (numerical_grad) are only good to about 1e-10, so they do not pass: derive it.
    The grader also measures its CPU time on large inputs: a gradient computed numerically
    (finite differences, a complex step, dual numbers) costs one forward pass per input entry,
    a derived one a few; over 500 forward passes' worth fails.

    Hints:
        * Transpose only the last two axes: np.swapaxes(B, -1, -2).
        * A (B, H, n, k) @ W (k, m): W is shared by every (b, h), so dW sums over them.
    """
    raise NotImplementedError("ex06: implement matmul_backward")
