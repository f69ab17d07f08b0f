"""Exercise 02 · a numerically stable softmax and its backward pass.
Points: 10 in 2 parts, each scored on its own: softmax 5 (after notebook 01), softmax_backward 5 (after
notebook 02).

Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences).
This exercise runs confined to real arithmetic, so its gradient can only be derived: no complex numbers or
object arrays (no 1j, no complex or object dtype); imports: numpy, math, itertools, functools, collections,
random, time, typing, sys (its streams and exit) and your own helper files (not another exercise's); no name
or attribute that begins with an underscore (but __name__ and __init__); no eval, exec, getattr, open or type.
No exercise may import torch, tensorflow, jax, scipy.special or the grader (tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex02
"""
import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax(x)_i = exp(x_i) / sum_j exp(x_j), taken along `axis`.

    Shapes:
        x: any shape, float array
        returns: same shape and dtype as x; every slice along `axis` sums to 1

    Math: softmax is unchanged when you subtract a constant c from every x_i:
        exp(x_i - c) / sum_j exp(x_j - c) = exp(x_i) / sum_j exp(x_j).
    Choosing c = max_j x_j keeps every exponent <= 0, so exp never overflows.

    Hints:
        * x.max(axis=axis, keepdims=True) keeps the reduced axis (size 1) so it broadcasts back.
        * Logits like 1000.0 must give a finite answer, not nan.
        * Do not write into x (no `x -= ...`): make new arrays.
    """
    ### BEGIN SOLUTION
    # subtract the row max (a constant per slice) so the largest exponent is exp(0) = 1
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)
    ### END SOLUTION


def softmax_backward(y: np.ndarray, dy: np.ndarray, axis: int = -1) -> np.ndarray:
    """Gradient of a loss through y = softmax(x, axis): returns dL/dx given y and dL/dy.

    Shapes:
        y:  any shape, the softmax output (not its input!)
        dy: same shape as y, the upstream gradient dL/dy
        returns: dx, same shape as y

    Math: the Jacobian is dy_i/dx_j = y_i (δ_ij - y_j), so
        dx_j = sum_i dy_i y_i (δ_ij - y_j) = y_j (dy_j - sum_i dy_i y_i).
    The sum runs along `axis` (one sum per softmax slice).
    The formula needs y alone and holds for any y: it is also graded at a y whose slices do not sum
    to 1 (no x has that softmax, so differentiating softmax at a preimage x = log y does not pass).
    Graded to float64 rounding: within 1e-12 of the largest entry of the exact gradient. Finite
    differences (numerical_grad) are only good to about 1e-10, so they do not pass: derive it.
    The grader also measures its CPU time on large inputs: a gradient computed numerically
    (finite differences, a complex step, dual numbers) costs one forward pass per input entry,
    a derived one a few; over 500 forward passes' worth fails.

    Hints:
        * Both terms matter: y * dy alone forgets that raising one probability lowers the others.
        * Use keepdims=True on the sum so it broadcasts.
    """
    ### BEGIN SOLUTION
    # the "minus sum" term: every output shares the normaliser, so each x_j also moves all y_i
    inner = (dy * y).sum(axis=axis, keepdims=True)
    return y * (dy - inner)
    ### END SOLUTION
