"""Module.cpu/cuda/half/bfloat16/type (torch-free): a BERT trainer saves ``model.cpu()``, GPU code calls
``model.cuda()`` behind an availability check, mixed-precision lessons call ``half()``."""
import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn


def test_cpu_returns_the_module_with_the_same_parameters_and_values():
    m = nn.Linear(3, 2)
    w, before = m.weight, m.weight.detach().numpy().copy()
    assert m.cpu() is m and m.weight is w
    np.testing.assert_array_equal(m.weight.detach().numpy(), before)


def test_cuda_fails_as_a_cpu_only_build_unless_the_module_holds_no_tensor():
    assert isinstance(nn.ReLU().cuda(), nn.ReLU)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        nn.Linear(2, 2).cuda()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        nn.Linear(2, 2).cuda(0)
    bn = nn.BatchNorm1d(2)  # buffers count too
    with pytest.raises(AssertionError):
        bn.cuda()


def test_half_casts_floating_tensors_and_keeps_integer_buffers():
    m = nn.BatchNorm1d(3)
    m.weight.grad = torch.ones(3)
    w = m.weight
    assert m.half() is m and m.weight is w
    sd = m.state_dict()
    assert {k: str(v.dtype) for k, v in sd.items()} == {
        "weight": "float16", "bias": "float16", "running_mean": "float16", "running_var": "float16",
        "num_batches_tracked": "int64"}
    assert m.weight.grad.dtype == np.float16


def test_bfloat16_names_the_missing_dtype():
    with pytest.raises(TypeError, match="bfloat16"):
        nn.Linear(2, 2).bfloat16()


@pytest.mark.parametrize("dst", [torch.float64, "torch.DoubleTensor"])
def test_type_casts_every_parameter_and_buffer_integer_ones_included(dst):
    m = nn.BatchNorm1d(2)
    m.running_mean.add_(torch.tensor([0.25, -1.5], dtype=torch.float32))
    m.type(dst)
    sd = m.state_dict()
    assert all(v.dtype == np.float64 for v in sd.values())  # num_batches_tracked too
    np.testing.assert_array_equal(sd["running_mean"].numpy(), [0.25, -1.5])
    x = torch.tensor(np.arange(6.0).reshape(3, 2))
    assert m(x).dtype == np.float64


def test_type_to_an_integer_dtype_refuses_trainable_parameters():
    with pytest.raises(RuntimeError, match="must be floating point or complex"):
        nn.Linear(2, 2).type(torch.int32)
    frozen = nn.Linear(2, 2).requires_grad_(False)
    frozen.type(torch.int32)
    assert frozen.weight.dtype == np.int32


def test_requires_grad_freezes_and_unfreezes_every_parameter():
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert m.requires_grad_(False) is m
    assert all(not p.requires_grad for p in m.parameters())
    x = torch.tensor(np.ones((4, 2)), dtype=torch.float32, requires_grad=True)
    m(x).sum().backward()
    assert all(p.grad is None for p in m.parameters()) and x.grad is not None
    m[2].requires_grad_()
    m(x).sum().backward()
    assert m[0].weight.grad is None and m[2].weight.grad is not None
