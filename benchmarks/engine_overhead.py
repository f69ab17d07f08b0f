"""Engine overhead: microseconds per tiny op, tinyattn against the same NumPy call.

On a (16, 16) array NumPy itself takes about a microsecond, so what is left is the engine's own cost:
wrapping the result in a Tensor, recording the op for backward, and (for the "fwd+bwd" rows) the
topological sort and the chain rule. This is the fixed cost every op pays, whatever its size; the
other benchmarks show how much of it is left on real shapes.
"""
from __future__ import annotations

import numpy as np

import tinyattn

from .common import Row, compare

N = 16  # tiny on purpose: the arithmetic is negligible, the bookkeeping is what is measured


def _cases(a: tinyattn.Tensor, b: tinyattn.Tensor) -> list[tuple[str, object, object]]:
    """(name, tinyattn call, the same NumPy call). a and b require grad, so the graph is recorded."""
    x, y = a.numpy(), b.numpy()

    def np_softmax():
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def np_add_backward():  # (a + b).sum().backward(): forward, then the gradient of each input
        (x + y).sum()
        g = np.ones_like(x)
        return g.copy(), g.copy()

    def np_mlp_backward():  # relu(a @ b).sum().backward()
        h = x @ y
        r = np.maximum(h, 0)
        r.sum()
        g = (r > 0).astype(x.dtype)  # d sum / d h
        return g @ y.T, x.T @ g

    return [
        ("a + b", lambda: a + b, lambda: x + y),
        ("a * b", lambda: a * b, lambda: x * y),
        ("a @ b", lambda: a @ b, lambda: x @ y),
        ("a.exp()", lambda: a.exp(), lambda: np.exp(x)),
        ("a.sum()", lambda: a.sum(), lambda: x.sum()),
        ("a.softmax(-1)", lambda: a.softmax(-1), np_softmax),
        ("a.reshape(-1)", lambda: a.reshape(-1), lambda: x.reshape(-1)),
        ("a.transpose(0, 1)", lambda: a.transpose(0, 1), lambda: x.transpose(1, 0)),
        ("a[3]", lambda: a[3], lambda: x[3]),
        ("(a + b).sum().backward()", lambda: (a + b).sum().backward(), np_add_backward),
        ("relu(a @ b).sum().backward()", lambda: (a @ b).relu().sum().backward(), np_mlp_backward),
    ]


def run(quick: bool = False) -> list[Row]:
    rng = np.random.default_rng(0)
    a = tinyattn.tensor(rng.standard_normal((N, N), dtype=np.float32), requires_grad=True)
    b = tinyattn.tensor(rng.standard_normal((N, N), dtype=np.float32), requires_grad=True)
    number, repeat = (20, 3) if quick else (2000, 7)
    rows = []
    for name, fn_t, fn_np in _cases(a, b):
        a.grad = b.grad = None  # backward rows accumulate into .grad; start each case clean
        t = compare({"tinyattn": fn_t, "numpy": fn_np}, repeat=repeat, warmup=2, number=number)
        us_t, us_np = t["tinyattn"] * 1e6, t["numpy"] * 1e6
        rows.append(Row("engine_overhead", f"{name}  ({N}x{N} float32)", "us per call", us_t, us_np,
                        ratio=us_t / us_np, ratio_name="tinyattn / numpy",
                        extra={"overhead_us": us_t - us_np}))
    return rows
