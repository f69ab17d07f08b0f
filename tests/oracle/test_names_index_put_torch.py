"""index_put / index_put_ / torch.index_put and gcd_ / lcm_ / ldexp_ against PyTorch: values, dtypes, the
gradients of self and values, and whether (and with which exception) each raises
(tests/test_names_index_put.py checks the same without torch)."""
from __future__ import annotations

import pytest
import torch

import tinyattn


def _run(lib, fn):
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the exception's type is what is compared)
        return type(e).__name__
    return [str(out.dtype).split(".")[-1], out.detach().tolist()] if isinstance(out, lib.Tensor) else out


def I(lib, *v):  # noqa: E743
    return lib.tensor(list(v))


def X(lib):
    return lib.arange(12.0).reshape(3, 4)


CASES = {
    "positions": lambda L: X(L).index_put((I(L, 0, 2), I(L, 1, 3)), L.tensor([-1.0, -2.0])),
    "negative": lambda L: X(L).index_put((I(L, -1), I(L, -4)), L.tensor(9.0)),
    "row broadcast": lambda L: X(L).index_put((I(L, 0, 2),), L.tensor([-1.0, -2.0, -3.0, -4.0])),
    "0-d value": lambda L: X(L).index_put((I(L, 0, 2),), L.tensor(5.0)),
    "2-D mask": lambda L: X(L).index_put((X(L) > 5,), L.tensor(0.0)),
    "2-D mask accumulate": lambda L: X(L).index_put((X(L) > 5,), L.tensor(0.5), accumulate=True),
    "row mask": lambda L: X(L).index_put((L.tensor([True, False, True]),), L.tensor([9.0, 8.0, 7.0, 6.0])),
    "mask and position": lambda L: X(L).index_put((I(L, 1), L.tensor([True, False, True, True])), L.tensor(-1.0)),
    "repeats accumulate": lambda L: X(L).index_put((I(L, 0, 0, 2), I(L, 1, 1, 1)), L.tensor([1.0, 2.0, 3.0]),
                                                   accumulate=True),
    "repeat rows accumulate": lambda L: X(L).index_put((I(L, 0, 0),), L.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True),
    "broadcast indices": lambda L: X(L).index_put((L.tensor([[0], [2]]), I(L, 1, 3)), L.tensor(0.0)),
    "2-D index": lambda L: X(L).index_put((L.tensor([[0, 1], [2, 0]]),), L.tensor(0.0)),
    "int32 index": lambda L: X(L).index_put((L.tensor([1], dtype=L.int32),), L.tensor(0.0)),
    "list of indices": lambda L: X(L).index_put([I(L, 1)], L.tensor(0.0)),
    "torch.index_put": lambda L: L.index_put(X(L), (I(L, 1),), L.tensor(0.0), True),
    "in place": lambda L: (lambda y: (y.index_put_((I(L, 1), I(L, 2)), L.tensor(-5.0)), y)[1])(X(L)),
    "in place returns self": lambda L: (lambda y: y.index_put_((I(L, 1),), L.tensor(-5.0)) is y)(X(L)),
    "int self": lambda L: L.arange(4).index_put((I(L, 1),), L.tensor(7), accumulate=True),
    "empty index": lambda L: X(L).index_put((L.tensor([], dtype=L.int64),), L.tensor(1.0)),
    "dtype": lambda L: X(L).index_put((I(L, 1),), L.tensor(0)),
    "dtype float64": lambda L: X(L).index_put((I(L, 1),), L.tensor(0.0, dtype=L.float64)),
    "out of range": lambda L: X(L).index_put((I(L, 3),), L.tensor(0.0)),
    "out of range dim 1": lambda L: X(L).index_put((I(L, 0), I(L, -5)), L.tensor(0.0)),
    "float index": lambda L: X(L).index_put((L.tensor([1.0]),), L.tensor(0.0)),
    "too many": lambda L: X(L).index_put((I(L, 0), I(L, 0), I(L, 0)), L.tensor(0.0)),
    "value shape": lambda L: X(L).index_put((I(L, 0, 1),), L.tensor([1.0, 2.0, 3.0])),
    "a tensor, not a tuple": lambda L: X(L).index_put(I(L, 0), L.tensor(0.0)),
    "a number value": lambda L: X(L).index_put((I(L, 0),), 1.0),
    "None in indices": lambda L: X(L).index_put((None, I(L, 1)), L.tensor(0.0)),
    "mask shape": lambda L: X(L).index_put((L.tensor([True, False]),), L.tensor(0.0)),
    "indices that do not broadcast": lambda L: X(L).index_put((I(L, 0, 1), I(L, 0, 1, 2)), L.tensor(0.0)),
    "uint8 mask": lambda L: X(L).index_put((L.tensor([1, 0, 1], dtype=L.uint8),), L.tensor(0.0)),
    "leaf in place": lambda L: L.ones(3, requires_grad=True).index_put_((I(L, 1),), L.tensor(0.0)),
    "gcd_": lambda L: L.tensor([12, 18, 0, -4], dtype=L.int32).gcd_(L.tensor([8, 27, 5, 6])),
    "lcm_": lambda L: L.tensor([12, 18, 0, -4]).lcm_(L.tensor([8, 27, 5, 6], dtype=L.int32)),
    "gcd_ of a float": lambda L: L.tensor([12, 18]).gcd_(L.tensor([1.0, 2.0])),
    "gcd_ of bools": lambda L: L.tensor([True]).gcd_(L.tensor([True])),
    "lcm_ of a number": lambda L: L.tensor([12]).lcm_(3),
    "ldexp_": lambda L: L.tensor([1.0, -2.0, 3.0]).ldexp_(L.tensor([1, 2, -3])),
    "ldexp_ float64 other": lambda L: L.tensor([1.0, -2.0]).ldexp_(L.tensor([1.0, 2.0], dtype=L.float64)),
    "ldexp_ of an int self": lambda L: L.tensor([1, 2]).ldexp_(L.tensor([1, 2])),
    "ldexp_ of a number": lambda L: L.tensor([1.0]).ldexp_(2),
    "ldexp_ of a leaf": lambda L: L.tensor([1.0], requires_grad=True).ldexp_(L.tensor([1])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_dtypes_and_raises_match(name):
    assert _run(tinyattn, CASES[name]) == _run(torch, CASES[name])


GRADS = {  # (L: the library, a: self, v: values, acc: accumulate)
    "positions": lambda L, a, v, acc: a.index_put((I(L, 0, 0 if acc else 1, 2), I(L, 1, 1, 3)), v[:3],
                                                  accumulate=acc),  # (repeats only when accumulating: else which
                                                                    # write lands is not defined)
    "rows": lambda L, a, v, acc: a.index_put((I(L, 0, 2),), v, accumulate=acc),
    "mask": lambda L, a, v, acc: a.index_put((a.detach() > 6,), v[:1], accumulate=acc),
    "in place": lambda L, a, v, acc: (a * 1).index_put_((I(L, 1),), v, accumulate=acc),
    "function": lambda L, a, v, acc: L.index_put(a, (L.tensor([True, False, True]), I(L, 3)), v[1:3], acc),
}


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_of_self_and_values_match(name, accumulate):
    def grads(L):
        a = L.arange(12.0, dtype=L.float64).reshape(3, 4).requires_grad_()
        v = L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64, requires_grad=True)
        w = L.arange(12.0, dtype=L.float64).reshape(3, 4) - 5
        out = GRADS[name](L, a, v, accumulate)
        (out * w).sum().backward()
        return [str(out.dtype).split(".")[-1], out.tolist(), a.grad.tolist(), v.grad.tolist()]
    assert grads(tinyattn) == grads(torch)
