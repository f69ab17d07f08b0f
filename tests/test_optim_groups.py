"""Optimizer param groups, editable options, state_dict layout and number checks (PyTorch's semantics)."""
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn import optim


def param(values):
    return nn.Parameter(np.array(values, dtype=np.float64))


def grad(values):
    """A gradient to assign to .grad: a float64 Tensor, like the parameters."""
    return tinyattn.tensor(np.array(values, dtype=np.float64))


def test_groups_take_their_own_options_and_fill_the_rest_from_defaults():
    a, b = param([1.0, 2.0]), param([3.0])
    opt = optim.AdamW([{"params": [a], "weight_decay": 0.1}, {"params": [b], "weight_decay": 0.0, "lr": 0.5}],
                      lr=0.01, betas=(0.8, 0.9))
    g0, g1 = opt.param_groups
    assert g0["params"] == [a] and g1["params"] == [b]
    assert (g0["lr"], g0["weight_decay"], g0["betas"]) == (0.01, 0.1, (0.8, 0.9))
    assert (g1["lr"], g1["weight_decay"], g1["betas"]) == (0.5, 0.0, (0.8, 0.9))
    assert opt.defaults["weight_decay"] == 1e-2  # the constructor's value, for groups that leave it out


def test_each_group_steps_with_its_own_lr_and_decay():
    a, b = param([1.0, -2.0]), param([4.0])
    opt = optim.SGD([{"params": [a], "weight_decay": 0.5}, {"params": [b], "lr": 0.1}], lr=0.01)
    a.grad, b.grad = grad([1.0, 1.0]), grad([2.0])
    opt.step()
    # a: w - 0.01 (g + 0.5 w) = [1 - 0.01*1.5, -2 - 0.01*0] ; b: 4 - 0.1*2
    np.testing.assert_allclose(a.numpy(), [1 - 0.015, -2.0], rtol=1e-15)
    np.testing.assert_allclose(b.numpy(), [3.8], rtol=1e-15)


def test_editing_group_lr_between_steps_changes_the_next_step():
    w = param([0.0])
    opt = optim.SGD([w], lr=1.0)
    for lr in (1.0, 0.5, 0.0, 2.0):
        opt.param_groups[0]["lr"] = lr
        w.grad = grad([1.0])
        opt.step()
    assert w.numpy()[0] == -(1.0 + 0.5 + 0.0 + 2.0)


def test_edited_bad_lr_is_refused_at_the_next_step():
    w = param([0.0])
    opt = optim.Adam([w])
    opt.param_groups[0]["lr"] = float("nan")
    w.grad = grad([1.0])
    with pytest.raises(ValueError, match="lr must be a finite number >= 0, got lr=nan"):
        opt.step()
    assert w.numpy()[0] == 0.0  # nothing was written


def test_add_param_group_and_a_parameter_in_two_groups_is_refused():
    a, b = param([1.0]), param([2.0])
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.2})
    assert opt.param_groups[1]["lr"] == 0.2 and opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="more than one param group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="'params' key"):
        opt.add_param_group([a])


def test_non_leaf_tensor_is_refused():
    a = param([1.0])
    with pytest.raises(ValueError, match="not a leaf tensor"):
        optim.SGD([a * 2], lr=0.1)


@pytest.mark.parametrize("make,match", [
    (lambda p: optim.SGD([p], lr=float("inf")), "lr must be a finite number >= 0, got lr=inf"),
    (lambda p: optim.SGD([p], lr=float("nan")), "lr must be a finite number >= 0, got lr=nan"),
    (lambda p: optim.SGD([p], lr=0.1, momentum=float("inf")), "momentum must be a finite number >= 0"),
    (lambda p: optim.SGD([p], lr=0.1, dampening=-1), "dampening must be a finite number >= 0"),
    (lambda p: optim.SGD([p], lr=0.1, weight_decay=float("nan")), "weight_decay must be a finite number >= 0"),
    (lambda p: optim.SGD([p], lr=0.1, nesterov=True), "nesterov=True needs momentum > 0"),
    (lambda p: optim.Adam([p], eps=-1e-8), "eps must be a finite number >= 0, got eps=-1e-08"),
    (lambda p: optim.Adam([p], eps=float("inf")), "eps must be a finite number >= 0, got eps=inf"),
    (lambda p: optim.Adam([p], betas=(float("nan"), 0.9)), r"betas\[0\] must be in \[0, 1\), got nan"),
    (lambda p: optim.Adam([p], betas=(-0.1, 0.9)), r"betas\[0\] must be in \[0, 1\)"),
    (lambda p: optim.Adam([p], betas=0.9), r"betas must be a pair"),
    (lambda p: optim.AdamW([{"params": [p], "lr": -1.0}]), "AdamW: lr must be a finite number >= 0, got lr=-1.0"),
    (lambda p: optim.AdamW([{"params": [p], "weight_decay": float("inf")}]), "weight_decay must be a finite"),
])
def test_optimizer_numbers_are_checked(make, match):
    with pytest.raises(ValueError, match=match):
        make(param([1.0]))


def test_an_optimizer_number_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match=r"^SGD: lr must be a finite number >= 0, got lr='0.1' \(str\)$"):
        optim.SGD([param([1.0])], lr="0.1")
    with pytest.raises(TypeError, match=r"lr must be a finite number >= 0, got lr=True \(bool\)$"):
        optim.SGD([param([1.0])], lr=True)
    assert optim.SGD([param([1.0])], lr=np.float32(0.5)).param_groups[0]["lr"] == 0.5  # NumPy numbers are numbers


def test_zero_grad_set_to_none_false_zeroes_in_place():
    w = param([1.0, 2.0])
    opt = optim.SGD([w], lr=0.1)
    g = grad([3.0, 4.0])
    w.grad = g
    opt.zero_grad(set_to_none=False)
    assert w.grad is g  # the same gradient tensor, zeroed in place
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert w.grad is None


def test_state_dict_has_pytorchs_layout_and_numbers_parameters_across_groups():
    a, b, c = param([1.0]), param([2.0, 3.0]), param([4.0])
    opt = optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
    a.grad, c.grad = grad([1.0]), grad([2.0])  # b has no gradient: it gets no state
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["momentum"] == 0.9
    assert sorted(sd["state"]) == [0, 2]
    np.testing.assert_array_equal(sd["state"][2]["momentum_buffer"], [2.0])
    sd["state"][2]["momentum_buffer"][0] = 99.0  # a copy: the optimizer's own buffer is unchanged
    np.testing.assert_array_equal(opt.state[c]["momentum_buffer"], [2.0])


def test_load_state_dict_restores_group_options_and_momentum():
    a, b = param([1.0]), param([2.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.5)
    a.grad, b.grad = grad([1.0]), grad([1.0])
    opt.step()  # buffers are [1], [1]
    sd = opt.state_dict()
    a2, b2 = param(a.numpy()), param(b.numpy())
    opt2 = optim.SGD([{"params": [a2]}, {"params": [b2]}], lr=7.0, momentum=0.0)
    opt2.load_state_dict(sd)
    assert [g["lr"] for g in opt2.param_groups] == [0.1, 0.5]
    assert opt2.param_groups[1]["params"] == [b2]
    a2.grad, b2.grad = grad([1.0]), grad([1.0])
    opt2.step()  # buf = 0.5 * 1 + 1 = 1.5;  w -= lr * 1.5
    np.testing.assert_allclose(a2.numpy(), [1.0 - 0.1 - 0.1 * 1.5], rtol=1e-15)
    np.testing.assert_allclose(b2.numpy(), [2.0 - 0.5 - 0.5 * 1.5], rtol=1e-15)


def test_load_state_dict_refuses_mismatched_groups():
    a, b = param([1.0]), param([2.0, 3.0])
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="1 param groups, this optimizer has 2"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="param group 0 has 2 parameters in the saved state, 1 here"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="keys 'state' and 'param_groups'"):
        optim.SGD([a], lr=0.1).load_state_dict({"lr": 0.1})
    bad = optim.SGD([a], lr=0.1).state_dict()
    bad["param_groups"][0]["lr"] = float("inf")
    fresh = optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="lr must be a finite number >= 0, got lr=inf"):
        fresh.load_state_dict(bad)
    assert fresh.param_groups[0]["lr"] == 0.1  # nothing was written
    opt = optim.Adam([b])
    b.grad = grad([1.0, 1.0])
    opt.step()
    with pytest.raises(ValueError, match=r"has shape \(2,\), the parameter has shape \(1,\)"):
        optim.Adam([a]).load_state_dict(opt.state_dict())


def test_adam_state_holds_step_and_running_averages():
    w = param([0.0])
    opt = optim.Adam([w], lr=0.1, betas=(0.5, 0.75))
    for g in (2.0, -2.0):
        w.grad = grad([g])
        opt.step()
    s = opt.state[w]
    assert s["step"] == 2
    np.testing.assert_allclose(s["exp_avg"], [0.5 * (0.5 * 2.0) + 0.5 * -2.0], rtol=1e-15)  # m = -0.5
    np.testing.assert_allclose(s["exp_avg_sq"], [0.75 * (0.25 * 4.0) + 0.25 * 4.0], rtol=1e-15)  # v = 1.75
    first = -0.1 * (1.0 / 0.5) / (math.sqrt(1.0 / 0.25) + 1e-8)  # m_hat = 2, v_hat = 4 after step 1
    second = -0.1 * (-0.5 / 0.75) / (math.sqrt(1.75 / (1 - 0.75 ** 2)) + 1e-8)
    assert math.isclose(w.numpy()[0], first + second, rel_tol=1e-14)
