"""torch.equal, comparison functions, dot/mm/bmm and Tensor.to against PyTorch 2.13."""
import numpy as np
import pytest
import torch

import tinyattn

RNG = np.random.default_rng(3)


def outcome(call, lib):
    """('ok', value, dtype, requires_grad, is-self) or ('raises', exception type)."""
    try:
        r = call(lib)
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return ("raises", type(e).__name__)
    if isinstance(r, bool):
        return ("ok", r)
    return ("ok", r.detach().numpy().tolist(), str(r.dtype).split(".")[-1], r.requires_grad)


A = np.array([[1.0, 2.0, float("nan")], [0.0, -1.0, 3.0]])
CALLS = [
    lambda t: t.equal(t.tensor([1.0, 2.0]), t.tensor([1, 2])),
    lambda t: t.equal(t.tensor([1.0, 2.0]), t.tensor([[1.0, 2.0]])),
    lambda t: t.equal(t.tensor(A), t.tensor(A)),
    lambda t: t.equal(t.tensor([True]), t.tensor([1])),
    lambda t: t.equal(t.tensor(1.0), t.tensor([1.0])),
    lambda t: t.equal(t.tensor([1.0, 2.0]), [1.0, 2.0]),
    lambda t: t.dot(t.tensor([1.0, 2.0]), t.tensor([3.0, 4.0])),
    lambda t: t.dot(t.tensor([1, 2]), t.tensor([3, 4])),
    lambda t: t.dot(t.tensor([1.0, 2.0]), t.tensor([3, 4])),
    lambda t: t.dot(t.tensor([1.0, 2.0]), t.tensor([3.0, 4.0, 5.0])),
    lambda t: t.dot(t.tensor([[1.0, 2.0]]), t.tensor([3.0, 4.0])),
    lambda t: t.ones(2, 3).mm(t.ones(3, 2)),
    lambda t: t.ones(2, 3).mm(t.ones(3)),
    lambda t: t.ones(2, 3).mm(t.ones(4, 2)),
    lambda t: t.ones(2, 3).mm(t.ones(3, 2, dtype=t.float64)),
    lambda t: t.ones(2, 2, 3).bmm(t.ones(2, 3, 2)),
    lambda t: t.ones(2, 2, 3).bmm(t.ones(3, 3, 2)),
    lambda t: t.ones(2, 2, 3).bmm(t.ones(3, 2)),
    lambda t: t.gt(1, t.tensor([1.0, 2.0])),
    lambda t: t.lt(t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0, 3.0])),
]
for name in ("eq", "ne", "lt", "le", "gt", "ge"):
    CALLS += [lambda t, n=name: getattr(t, n)(t.tensor(A), 1),
              lambda t, n=name: getattr(t, n)(t.tensor(A, requires_grad=True), t.tensor([[0.0], [3.0]])),
              lambda t, n=name: getattr(t, n)(input=t.tensor([1, 2, 3]), other=t.tensor(2.5)),
              lambda t, n=name: getattr(t, n)(t.tensor([1.0, 2.0]), 1.5, out=t.empty(2, dtype=t.bool))]


@pytest.mark.parametrize("call", CALLS)
def test_same_values_dtypes_and_errors(call):
    mine, theirs = outcome(call, tinyattn), outcome(call, torch)
    assert mine == theirs or (mine[0] == theirs[0] == "raises")


TO_CALLS = [
    lambda t, x: x.to("cpu", dtype=t.float32), lambda t, x: x.to("cpu", t.float64),
    lambda t, x: x.to(device="cpu", dtype=t.float64), lambda t, x: x.to(t.float64, copy=True),
    lambda t, x: x.to(t.float32, copy=True), lambda t, x: x.to("cpu", non_blocking=True),
    lambda t, x: x.to("cpu", None, True), lambda t, x: x.to(t.zeros(1, dtype=t.float64)),
    lambda t, x: x.to(t.zeros(1)), lambda t, x: x.to(dtype=t.float64), lambda t, x: x.to(),
    lambda t, x: x.to(memory_format=t.contiguous_format),
    lambda t, x: x.to(t.float64, memory_format=t.preserve_format),
    lambda t, x: x.to(memory_format=t.channels_last), lambda t, x: x.to("cpu", copy=True),
    lambda t, x: x.to(t.device("cpu")), lambda t, x: x.to(t.int64), lambda t, x: x.to("cuda"),
    lambda t, x: x.to("cuda:0"), lambda t, x: x.to("mps"), lambda t, x: x.to(1),
    lambda t, x: x.to(t.float32, t.float64), lambda t, x: x.to(t.zeros(1), dtype=t.float64),
    lambda t, x: x.to(t.zeros(1), copy=True), lambda t, x: x.to(t.float64, True, True),
    lambda t, x: x.to("cpu", t.float64, False, True), lambda t, x: x.to(t.zeros(1), device="cpu"),
    lambda t, x: x.to("cpu", dtype=t.int32), lambda t, x: x.to(t.float64, foo=1), lambda t, x: x.to(float),
    lambda t, x: x.to("cpu", "cpu"), lambda t, x: x.to(None), lambda t, x: x.to(None, t.float64),
    lambda t, x: x.to("cpu", t.float64, False, False, False), lambda t, x: x.to(t.float64, device="cpu"),
    lambda t, x: x.to("cpu", non_blocking="yes"),
]


@pytest.mark.parametrize("call", TO_CALLS)
def test_tensor_to(call):
    def run(t):
        x = t.tensor(RNG.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
        try:
            y = call(t, x)
        except Exception as e:  # noqa: BLE001
            return ("raises", type(e).__name__)
        shares = np.shares_memory(y.detach().numpy(), x.detach().numpy())
        if y.requires_grad:  # the gradient reaches x, cast back to its dtype
            (y * 2).sum().backward()
        grad = None if x.grad is None else (x.grad.numpy().tolist(), str(x.grad.dtype).split(".")[-1])
        return (str(y.dtype).split(".")[-1], y is x, shares, y.requires_grad, grad)
    assert run(tinyattn) == run(torch)
