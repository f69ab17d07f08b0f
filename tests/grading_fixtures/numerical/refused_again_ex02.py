"""A cheat that asks for a complex array again and again (each refused with NotReal): the refusals must not wear
the learner's process down. Before NumPy 2.4, a refusal raised from inside NumPy's C code leaked a reference to
the complex dtype each time, and a few dozen of them crashed the process, taking the honest softmax's points
with it. softmax_backward returns zeros (wrong, so it earns nothing); softmax keeps its 5 points."""
import numpy as np

ASKS = [
    lambda x: x.astype("complex128"),
    lambda x: x.view("complex128"),
    lambda x: np.ndarray(x.shape, "D"),
    lambda x: np.exp(x, dtype="D"),
    lambda x: x.sum(dtype="D"),
]


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    refused, few = 0, y.reshape(-1)[:4]      # (each ask on 4 numbers: refusals, not arithmetic, are counted)
    for _ in range(40):
        for ask in ASKS:
            try:
                ask(few)
            except Exception:            # noqa: BLE001 - NotReal, every time
                refused += 1
    return np.zeros(y.shape) * refused
