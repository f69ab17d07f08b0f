"""Module hooks, as PyTorch's: forward pre-hooks, forward hooks and full backward hooks.

A 2 -> 2 Linear without bias and weight W = [[1, 2], [3, 4]] makes every expectation a sum by hand:
y = x W^T, so x = [1, 1] gives y = [1 + 2, 3 + 4] = [3, 7], and d(sum y)/dx = the column sums of W = [4, 6].
"""
import copy
import warnings

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
from tinyattn.gradcheck import gradcheck

W = [[1.0, 2.0], [3.0, 4.0]]


def lin(dtype=torch.float32):
    layer = nn.Linear(2, 2, bias=False)
    layer.weight = nn.Parameter(torch.tensor(W, dtype=dtype))
    return layer


def x11(requires_grad=False):
    return torch.tensor([[1.0, 1.0]], requires_grad=requires_grad)


# ---------------------------------------------------------------------------- forward hooks
def test_hooks_run_in_registration_order_and_prepend_goes_first():
    m, log = lin(), []
    m.register_forward_hook(lambda mod, args, out: log.append("a"))
    m.register_forward_hook(lambda mod, args, out: log.append("b"))
    m.register_forward_hook(lambda mod, args, out: log.append("first"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args: log.append("pre"))
    m(x11())
    assert log == ["pre", "first", "a", "b"]


def test_a_forward_hook_sees_the_args_tuple_and_the_output():
    m, seen = lin(), {}

    def hook(mod, args, out):
        seen.update(mod=mod, args=args, out=out.tolist())
    m.register_forward_hook(hook)
    x = x11()
    m(x)
    assert seen["mod"] is m and isinstance(seen["args"], tuple) and seen["args"][0] is x
    assert seen["out"] == [[3.0, 7.0]]


def test_a_forward_hooks_return_replaces_the_output():
    m = lin()
    m.register_forward_hook(lambda mod, args, out: out + 100)
    assert m(x11()).tolist() == [[103.0, 107.0]]


def test_a_pre_hooks_return_replaces_the_input_and_a_single_value_is_wrapped():
    m = lin()
    h = m.register_forward_pre_hook(lambda mod, args: args[0] * 2)  # x = [2, 2]: y = [6, 14]
    assert m(x11()).tolist() == [[6.0, 14.0]]
    h.remove()
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 3,))  # x = [3, 3]: y = [9, 21]
    assert m(x11()).tolist() == [[9.0, 21.0]]


class Scale(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


def test_with_kwargs_hooks_see_and_change_the_keyword_arguments():
    m, seen = Scale(), []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {**kwargs, "scale": 10.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs), with_kwargs=True)
    assert m(torch.ones(1), scale=2.0).tolist() == [10.0]
    assert seen == [{"scale": 10.0}]


def test_a_with_kwargs_pre_hook_must_return_args_and_kwargs():
    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 5"):
        m(torch.ones(1))


def test_remove_takes_the_hook_off_and_twice_is_harmless():
    m, log = lin(), []
    h = m.register_forward_hook(lambda mod, args, out: log.append(1))
    m(x11())
    h.remove()
    h.remove()
    m(x11())
    assert log == [1]
    with m.register_forward_hook(lambda mod, args, out: log.append(2)):
        m(x11())
    m(x11())
    assert log == [1, 2]


def test_hooks_are_not_state():
    m = lin()
    m.register_forward_hook(lambda mod, args, out: out * 0)
    m.register_full_backward_hook(lambda mod, gi, go: None)
    sd = m.state_dict()
    assert list(sd) == ["weight"]
    fresh = lin()
    fresh.load_state_dict(sd)
    assert fresh(x11()).tolist() == [[3.0, 7.0]]  # the hook did not travel with the state
    assert m(x11()).tolist() == [[0.0, 0.0]]  # and stays on m
    assert copy.deepcopy(m)(x11()).tolist() == [[0.0, 0.0]]  # a deep copy keeps it, as in PyTorch


def test_every_layers_attention_weights_read_out_with_forward_hooks_alone():
    torch.manual_seed(0)
    lm = nn.TransformerLM(11, 8, 2, n_layers=3, max_len=6).eval()
    idx = torch.tensor([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])
    maps = {}

    def ask_for_weights(mod, args, kwargs):  # the nn.MultiheadAttention idiom: switch weights on ...
        return args, {**kwargs, "return_weights": True}

    def keep_weights(name):
        def hook(mod, args, kwargs, out):  # ... keep them, and hand the block the output it expects
            maps[name] = out[1]
            return out[0]
        return hook

    handles = []
    for name, mod in lm.named_modules():
        if isinstance(mod, nn.Attention):
            handles.append(mod.register_forward_pre_hook(ask_for_weights, with_kwargs=True))
            handles.append(mod.register_forward_hook(keep_weights(name), with_kwargs=True))
    logits = lm(idx)
    with torch.no_grad():
        for h in handles:
            h.remove()
        want_logits, want = lm(idx, return_weights=True)
    assert len(maps) == 3
    for got, w in zip(maps.values(), want):
        assert got.shape == (2, 2, 5, 5)
        np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got.numpy().sum(-1), 1.0, rtol=1e-5)  # each row is a distribution
        assert np.all(np.triu(got.numpy(), k=1) == 0)  # causal: nothing above the diagonal
    np.testing.assert_allclose(logits.numpy(), want_logits.numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- full backward hooks
def test_backward_hook_gets_grad_input_and_grad_output():
    m, log = lin(), []
    m.register_full_backward_hook(lambda mod, gi, go: log.append((mod, [g.tolist() for g in gi],
                                                                  [g.tolist() for g in go])))
    x = x11(requires_grad=True)
    m(x).sum().backward()
    # d(sum y)/dy = [1, 1]; d(sum y)/dx = [1, 1] W = [4, 6]
    assert log == [(m, [[[4.0, 6.0]]], [[[1.0, 1.0]]])]
    assert x.grad.tolist() == [[4.0, 6.0]]


def test_a_backward_hooks_return_replaces_grad_input():
    m = lin()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
    x = x11(requires_grad=True)
    m(x).sum().backward()
    assert x.grad.tolist() == [[40.0, 60.0]]


class Two(nn.Module):
    def forward(self, a, b):
        return a * b, a + 2 * b


def test_two_inputs_two_outputs_an_unused_output_and_a_number():
    m, log = Two(), []
    m.register_full_backward_hook(lambda mod, gi, go: log.append(([None if g is None else g.tolist() for g in gi],
                                                                  [None if g is None else g.tolist() for g in go])))
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    p, q = m(a, b)
    (2 * p.sum()).backward()  # d/dp = 2; q unused -> None; d/da = 2 b, d/db = 2 a
    assert log == [([[6.0, 8.0], [2.0, 4.0]], [[2.0, 2.0], None])]
    log.clear()
    p, q = m(a, torch.tensor([3.0, 4.0]))  # b needs no gradient: zeros in its place
    q.sum().backward()
    assert log == [([[1.0, 1.0], [0.0, 0.0]], [None, [1.0, 1.0]])]
    log.clear()
    p, q = m(a, 2.0)  # a number gets None
    p.sum().backward()
    assert log == [([[2.0, 2.0], None], [[1.0, 1.0], None])]


def test_without_an_input_that_needs_grad_the_hook_fires_at_the_outputs_and_warns():
    m, log = lin(), []
    m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go[0].tolist())))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m(x11()).sum().backward()
    assert log == [((None,), [[1.0, 1.0]])]
    assert any("Full backward hook is firing when gradients are computed with respect to module outputs"
               in str(x.message) for x in w)


def test_gradients_through_a_hooked_module_are_unchanged_gradcheck():
    torch.manual_seed(1)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    seen = []
    for sub in m:
        sub.register_full_backward_hook(lambda mod, gi, go: seen.append(type(mod).__name__))
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda x: m(x), [x])
    assert gradcheck(lambda w: m(x), [m[0].weight])
    seen.clear()
    m(x).sum().backward()
    assert seen == ["Linear", "Tanh", "Linear"][::-1]  # the backward visits the last layer first


def test_a_hook_removed_between_forward_and_backward_still_runs():
    m, log = lin(), []
    h = m.register_full_backward_hook(lambda mod, gi, go: log.append("bw"))
    y = m(x11(requires_grad=True))
    h.remove()
    y.sum().backward()  # PyTorch takes the hooks a forward call will run when that call is made
    assert log == ["bw"]


def test_the_handle_is_torch_utils_hooks_removable_handle():
    from tinyattn.utils.hooks import RemovableHandle
    h = lin().register_forward_hook(lambda *a: None)
    assert isinstance(h, RemovableHandle) and isinstance(h.id, int)
