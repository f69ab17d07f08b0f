"""The names added for the census, compared with PyTorch: values, dtypes, every gradient, and what raises."""
import numpy as np
import pytest
import torch

import tinyattn
import tinyattn.nn.functional as TF

rng = np.random.default_rng(11)


def both(*shape, grad=True):
    a = rng.standard_normal(shape)
    return (torch.tensor(a, requires_grad=grad), tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=grad))


def same(fn_torch, fn_ours, *pairs, rtol=1e-15, atol=1e-15):
    """Run both, compare the outputs and (through a fixed random weight) every input's gradient."""
    out_t = fn_torch(*[p[0] for p in pairs])
    out_o = fn_ours(*[p[1] for p in pairs])
    assert tuple(out_t.shape) == tuple(out_o.shape)
    assert str(out_t.dtype).split(".")[-1] == np.dtype(out_o.dtype).name
    np.testing.assert_allclose(out_o._data, out_t.detach().numpy(), rtol=rtol, atol=atol)
    if not out_t.requires_grad:
        return
    w = rng.standard_normal(tuple(out_t.shape))
    (out_t * torch.tensor(w)).sum().backward()
    (out_o * tinyattn.tensor(w)).sum().backward()
    for t, o in pairs:
        if t.requires_grad:
            np.testing.assert_allclose(o.grad._data, t.grad.numpy(), rtol=rtol, atol=atol)


def test_tensor_methods_match():
    same(lambda x: x.square(), lambda x: x.square(), both(3, 4))
    ws = np.array([0.0, 0.2, 0.5, 0.7, 1.0])
    w = (torch.tensor(ws, requires_grad=True), tinyattn.tensor(ws, requires_grad=True))
    same(lambda a, b, w: a.lerp(b, w), lambda a, b, w: a.lerp(b, w), both(5), both(5), w)
    same(lambda a, b: a.lerp(b, 0.7), lambda a, b: a.lerp(b, 0.7), both(2, 5), both(2, 5))
    mask = [True, False, True]
    same(lambda x: x.masked_select(torch.tensor(mask)), lambda x: x.masked_select(tinyattn.tensor(mask)), both(2, 3))
    same(lambda x: x.unfold(1, 3, 2), lambda x: x.unfold(1, 3, 2), both(2, 7))
    same(lambda x: x.unfold(0, 2, 1), lambda x: x.unfold(0, 2, 1), both(4, 5, 2))
    idx = [[0, 2], [1, 0]]
    same(lambda b, s: b.scatter(1, torch.tensor(idx), s), lambda b, s: b.scatter(1, tinyattn.tensor(idx), s),
         both(2, 3), both(2, 2))
    rep = [[0, 2], [1, 1]]
    same(lambda b, s: b.scatter_add(1, torch.tensor(rep), s), lambda b, s: b.scatter_add(1, tinyattn.tensor(rep), s),
         both(2, 3), both(2, 2))
    same(lambda b, s: b.index_copy(1, torch.tensor([2, 0]), s),
         lambda b, s: b.index_copy(1, tinyattn.tensor([2, 0]), s), both(2, 3), both(2, 2))
    for mk in (lambda m: m.triu_(1), lambda m: m.tril_(-1)):
        t, o = torch.ones(2, 3, 4), tinyattn.ones(2, 3, 4)
        mk(t), mk(o)
        np.testing.assert_array_equal(o._data, t.numpy())
    t, o = torch.zeros(2, 3), tinyattn.zeros(2, 3)
    assert o.stride() == t.stride() and o.t().stride() == t.t().stride() and o.stride(1) == t.stride(1)
    assert (o.element_size(), o.itemsize, o.nbytes, o.is_cuda) == (t.element_size(), t.itemsize, t.nbytes, t.is_cuda)
    assert o.new_empty((2, 5)).shape == tuple(t.new_empty((2, 5)).shape)
    assert np.dtype(tinyattn.empty_like(tinyattn.ones(2, dtype=tinyattn.int64)).dtype).name == \
        str(torch.empty_like(torch.ones(2, dtype=torch.int64)).dtype).split(".")[-1]


def test_functions_match():
    same(lambda x: torch.nn.functional.normalize(x), lambda x: TF.normalize(x), both(4, 3))
    same(lambda x: torch.nn.functional.normalize(x, p=1, dim=0), lambda x: TF.normalize(x, p=1, dim=0), both(4, 3))
    same(lambda x, t: torch.nn.functional.l1_loss(x, t), lambda x, t: TF.l1_loss(x, t), both(4, 3), both(4, 3))
    same(lambda x, t: torch.nn.functional.l1_loss(x, t, reduction="none"),
         lambda x, t: TF.l1_loss(x, t, reduction="none"), both(4, 3), both(4, 3))
    s = np.array([-3.0, 0.5, 9.0, 40.0])
    same(lambda x: torch.nn.functional.softplus(x, beta=2, threshold=20),
         lambda x: TF.softplus(x, beta=2, threshold=20),
         (torch.tensor(s, requires_grad=True), tinyattn.tensor(s, requires_grad=True)))
    same(lambda y, x: torch.trapezoid(y, x), lambda y, x: tinyattn.trapezoid(y, x), both(3, 5), both(5),
         rtol=1e-14, atol=1e-15)
    same(lambda y: torch.trapezoid(y, dx=0.3, dim=0), lambda y: tinyattn.trapezoid(y, dx=0.3, dim=0), both(3, 5),
         rtol=1e-14, atol=1e-15)
    for args in ((3, 4, 1), (4, 3, -1), (0, 3, 0)):
        assert tinyattn.triu_indices(*args).tolist() == torch.triu_indices(*args).tolist()
        assert tinyattn.tril_indices(*args).tolist() == torch.tril_indices(*args).tolist()


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda t: t.ones(2).cuda(), lambda t: t.ones(2).cuda(0), lambda t: t.ones(2).pin_memory(),
    lambda t: t.cuda.get_device_name(0), lambda t: t.cuda.get_device_properties(0),
    lambda t: t.cuda.get_device_capability(), lambda t: t.cuda.set_device(0), lambda t: t.cuda.set_device("cpu"),
    lambda t: t.cuda.set_device("cuda"), lambda t: t.cuda.HalfTensor(2), lambda t: t.cuda.Stream(),
    lambda t: t.cuda.Event(), lambda t: t.cuda.reset_peak_memory_stats(),
    lambda t: t.set_rng_state(t.zeros(3)), lambda t: t.set_default_tensor_type("torch.LongTensor"),
    lambda t: t.nn.attention.sdpa_kernel("math").__enter__(),
])
def test_the_same_error_type_and_pytorchs_words(call):
    want, got = _error(lambda: call(torch)), _error(lambda: call(tinyattn))
    assert want is not None and got is not None and got[0] is want[0], (want, got)
    assert want[1] in got[1] or got[1].startswith(want[1].split(" (")[0]), (want, got)


def test_answers_that_are_values():
    assert tinyattn.cuda.max_memory_allocated() == torch.cuda.max_memory_allocated() == 0
    assert tinyattn.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert {k: v.value for k, v in torch.nn.attention.SDPBackend.__members__.items()} == \
        {k: v.value for k, v in tinyattn.nn.attention.SDPBackend.__members__.items()}
    assert {k: v.value for k, v in torch.distributed.ReduceOp.RedOpType.__members__.items()} == \
        {k: v.value for k, v in tinyattn.distributed.ReduceOp.__members__.items()}
    assert tinyattn.utils.data.get_worker_info() is torch.utils.data.get_worker_info() is None
    for ours, theirs in ((tinyattn.float32, torch.float32), (tinyattn.int64, torch.int64)):
        assert isinstance(ours, tinyattn.dtype) and isinstance(theirs, torch.dtype)


def test_categorical_matches():
    for kind in ("logits", "probs"):
        a = rng.standard_normal((3, 5)) if kind == "logits" else np.abs(rng.standard_normal((3, 5)))
        v = [[1, 0, 4], [2, 2, 2]]
        same(lambda p: torch.distributions.Categorical(**{kind: p}).log_prob(torch.tensor(v)),
             lambda p: tinyattn.distributions.Categorical(**{kind: p}).log_prob(tinyattn.tensor(v)),
             both(3, 5) if kind == "logits" else (torch.tensor(a, requires_grad=True),
                                                  tinyattn.tensor(a, requires_grad=True)), rtol=1e-14, atol=1e-15)
        same(lambda p: torch.distributions.Categorical(**{kind: p}).entropy(),
             lambda p: tinyattn.distributions.Categorical(**{kind: p}).entropy(),
             (torch.tensor(a, requires_grad=True), tinyattn.tensor(a, requires_grad=True)), rtol=1e-14, atol=1e-15)
        ct = torch.distributions.Categorical(**{kind: torch.tensor(a)})
        co = tinyattn.distributions.Categorical(**{kind: tinyattn.tensor(a)})
        assert tuple(ct.sample((4, 2)).shape) == co.sample((4, 2)).shape and tuple(ct.batch_shape) == co.batch_shape
        assert ct.mode.tolist() == co.mode.tolist()


def test_checkpoint_matches():
    from torch.utils.checkpoint import checkpoint as ct
    from tinyattn.utils.checkpoint import checkpoint as co
    same(lambda x, w: ct(lambda a, b: (a @ b).tanh(), x, w, use_reentrant=False),
         lambda x, w: co(lambda a, b: (a @ b).tanh(), x, w, use_reentrant=False), both(3, 4), both(4, 2))
    assert tinyattn.utils.checkpoint.get_device_states(tinyattn.ones(1)) == \
        torch.utils.checkpoint.get_device_states(torch.ones(1))
