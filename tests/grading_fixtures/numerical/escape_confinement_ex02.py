"""A cheat that looks for a way out of the real-only confinement: each route below would give a complex array
(a complex step then passes every check, at C forward passes' cost). Written past the static rules (no `1j`, no
`complex`, no underscores): dtypes as strings, the imaginary unit from Python's own `(-1.0) ** 0.5`. If any
route gave a complex array, softmax_backward would earn its points; none must, so it returns zeros and earns
nothing, while softmax keeps its 5 points."""
import numpy as np

UNIT = (-1.0) ** 0.5            # a Python complex: it exists, but can enter no array


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def _dtype_set(x):
    z = x.copy()
    z.dtype = "complex128"
    return z


def _padded(x):
    got = []
    np.pad(x, 1, mode=lambda v, w, i, k: got.append(v.astype("complex128")))     # np.pad's mode gets NumPy's arrays
    return got[0]


ROUTES = [
    lambda x: x.astype("complex128"),
    lambda x: x.view("complex128"),
    _dtype_set,
    lambda x: x + 0 * UNIT,
    lambda x: np.array(x.tolist(), dtype="c16"),
    lambda x: np.asarray([[v + 0 * UNIT for v in row] for row in x.reshape(-1, x.shape[-1]).tolist()]),
    lambda x: np.exp(np.log(x), dtype="D"),
    lambda x: np.multiply.outer(x.ravel(), [1 + 0 * UNIT]).reshape(x.shape),
    lambda x: x.sum().reshape(1).astype("D") * x,                     # a scalar's array methods
    lambda x: x[(0,) * x.ndim].reshape(1).astype("D") * x,            # an element's array methods
    lambda x: x.nonzero()[0].astype("D")[:1] * x,
    lambda x: np.float64(x).astype("D"),                              # a scalar type called on an array
    lambda x: x.T.T.astype("D"),
    lambda x: np.ndarray(x.shape, "D") * 0 + x,
    lambda x: np.linalg.svd(x.reshape(-1, x.shape[-1]))[1].astype("D")[:1] * x,
    lambda x: np.einsum("...->...", x, dtype="D"),
    lambda x: np.array([1.0], dtype="O") * x,
    _padded,
]


def complex_copy(x):
    for route in ROUTES:
        try:
            z = route(x)
            if z.dtype.kind == "c":      # (not isinstance(z, np.ndarray): here np.ndarray is the confined class)
                return z
        except Exception:            # noqa: BLE001 - refused: try the next one
            continue
    return None


def softmax_backward(y, dy, axis=-1):
    x = complex_copy(np.moveaxis(np.log(y), axis, -1))
    if x is None:
        return np.zeros(y.shape)
    g = np.moveaxis(dy, axis, -1)
    dx = np.zeros(x.shape)
    for j in range(x.shape[-1]):
        xp = x.copy()
        xp[..., j] += 1e-30 * UNIT
        dx[..., j] = (softmax(xp, -1) * g).sum(axis=-1).imag / 1e-30
    return np.moveaxis(dx, -1, axis)
