"""PyTorch's top-level math functions, dtype names, Tensor.type/type_as/repeat and the new_* factories."""
import math

import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(7)


def t64(*shape):
    return torch.tensor(rng.standard_normal(shape), requires_grad=True)


def test_sin_cos_values_and_gradcheck():
    x = t64(3, 4)
    np.testing.assert_allclose(torch.sin(x).numpy(), np.sin(x.numpy()), rtol=1e-15)
    np.testing.assert_allclose(x.cos().numpy(), np.cos(x.numpy()), rtol=1e-15)
    assert gradcheck(torch.sin, [x]) and gradcheck(torch.cos, [x])
    # the sinusoidal positional encoding, written the way tutorials write it
    pos = torch.arange(0, 6).unsqueeze(1)  # (T, 1)
    div = torch.exp(torch.arange(0, 4, 2) * -(math.log(10000.0) / 4))  # (C/2,)
    np.testing.assert_allclose(torch.sin(pos * div).numpy(), np.sin(np.arange(6)[:, None] * 10000.0 ** (-np.arange(0, 4, 2) / 4)),
                               rtol=1e-6)


@pytest.mark.parametrize("name,args", [
    ("abs", ()), ("neg", ()), ("square", ()), ("clamp", (-0.5, 0.5)), ("clip", (None, 0.2)), ("cumsum", (1,)),
    ("var", (1,)), ("std", (0,)), ("amax", (1,)), ("amin", (0,)), ("reshape", ((4, 3),)), ("flatten", ()),
    ("transpose", (0, 1)), ("permute", ((1, 0),)), ("unsqueeze", (1,)), ("squeeze", ()), ("repeat_interleave", (2, 0)),
])
def test_top_level_functions_are_the_methods(name, args):
    x = t64(3, 4)
    method = {"neg": lambda a: -a, "square": lambda a: a * a}.get(name) or (lambda a: getattr(a, name)(*args))
    np.testing.assert_array_equal(getattr(torch, name)(x, *args).numpy(), method(x).numpy())
    assert gradcheck(lambda a: getattr(torch, name)(a, *args), [x])


def test_top_level_functions_that_return_several_tensors_or_indices():
    x = t64(4, 3)
    assert [p.shape for p in torch.split(x, 3, dim=0)] == [(3, 3), (1, 3)]
    assert [p.shape for p in torch.chunk(x, 2, dim=1)] == [(4, 2), (4, 1)]
    assert len(torch.unbind(x, 1)) == 3
    np.testing.assert_array_equal(torch.argmin(x, 0).numpy(), x.numpy().argmin(0))
    idx = torch.tensor([[0], [2], [1], [0]])
    np.testing.assert_array_equal(torch.gather(x, 1, idx).numpy(), np.take_along_axis(x.numpy(), idx.numpy(), 1))
    filled = torch.masked_fill(x, x > 0, 0.0)
    assert (filled.numpy() <= 0).all()
    np.testing.assert_allclose(torch.pow(x, 2).numpy(), x.numpy() ** 2)


def test_dtype_names_are_numpy_types():
    assert torch.long is torch.int64 is np.int64 and torch.int is torch.int32 is np.int32
    assert torch.uint8 is np.uint8 and torch.bool is np.bool_ and torch.half is torch.float16 is np.float16
    assert torch.float is torch.float32 and torch.double is torch.float64 and torch.short is np.int16
    assert torch.ones(2, dtype=torch.uint8).dtype == np.uint8
    assert torch.zeros(2, dtype=torch.half).dtype == np.float16


def test_bfloat16_can_be_named_but_not_used():
    table = {"float32": torch.float32, "bfloat16": torch.bfloat16}  # nanoGPT's train.py builds this table
    assert repr(table["bfloat16"]) == "tinyattn.bfloat16"
    for use in (lambda: torch.zeros(2, dtype=torch.bfloat16), lambda: torch.ones(2).to(torch.bfloat16),
                lambda: torch.tensor([1.0], dtype=torch.bfloat16), lambda: torch.ones(2).type(torch.bfloat16)):
        with pytest.raises(TypeError, match="bfloat16 is not supported: NumPy has no bfloat16"):
            use()


def test_typed_tensor_constructors():
    ids = torch.LongTensor([[0, 1, 2]])
    assert ids.dtype == np.int64 and ids.tolist() == [[0, 1, 2]]
    assert torch.FloatTensor([1, 2]).dtype == np.float32 and torch.ByteTensor([1]).dtype == np.uint8
    z = torch.LongTensor(2, 3)
    assert z.shape == (2, 3) and z.dtype == np.int64 and not z.numpy().any()
    assert torch.FloatTensor().shape == (0,)
    # one size alone is a 1-D tensor of that length (word_language_model: LongTensor(n).zero_().view(-1, bsz))
    assert torch.LongTensor(6).zero_().view(-1, 2).shape == (3, 2) and torch.IntTensor(4).dtype == np.int32


def test_type_with_names_dtypes_and_constructors():
    x = torch.tensor([[0.0, 1.5], [2.0, 3.0]])
    assert x.type() == "torch.FloatTensor" and torch.arange(2).type() == "torch.LongTensor"
    assert x.double().type() == "torch.DoubleTensor" and (x > 1).type() == "torch.BoolTensor"
    assert x.type(torch.uint8).dtype == np.uint8
    assert x.type("torch.LongTensor").dtype == np.int64 and x.type(torch.LongTensor).tolist() == [[0, 1], [2, 3]]
    assert x.type("tinyattn.DoubleTensor").dtype == np.float64
    with pytest.raises(ValueError, match="unknown tensor type"):
        x.type("torch.FancyTensor")
    # annotated-transformer's mask: a uint8 upper triangle, compared with 0
    mask = torch.triu(torch.ones(1, 3, 3), diagonal=1).type(torch.uint8) == 0
    assert mask.dtype == np.bool_ and mask.numpy()[0].tolist() == [[True, False, False], [True, True, False], [True, True, True]]


def test_type_as_and_its_gradient():
    a = t64(2, 3)
    y = a.type_as(torch.zeros(1))  # float64 -> float32, differentiable
    assert y.dtype == np.float32
    y.sum().backward()
    assert a.grad.dtype == np.float64 and np.all(np.asarray(a.grad) == 1.0)
    assert torch.zeros(1, 1).type_as(torch.LongTensor([[3]])).dtype == np.int64


@pytest.mark.parametrize("shape,reps", [((3,), (2,)), ((2, 3), (2, 1)), ((2, 3), (1, 3)), ((2, 3), (2, 2, 2)),
                                        ((1, 2), (3, 1, 2))])
def test_repeat_tiles_like_np_tile_with_gradcheck(shape, reps):
    x = t64(*shape)
    y = x.repeat(*reps)
    np.testing.assert_array_equal(y.numpy(), np.tile(x.numpy(), reps))
    assert x.repeat(reps).shape == y.shape  # a tuple works too
    assert gradcheck(lambda a: a.repeat(*reps), [x])


def test_repeat_errors_and_zero_copies():
    x = t64(2, 3)
    with pytest.raises(ValueError, match="at least one per dim"):
        x.repeat(2)
    assert x.repeat(0, 1).shape == (0, 3)
    x.repeat(0, 1).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.zeros((2, 3)))


def test_new_factories_take_dtype_from_the_tensor():
    x = torch.tensor(np.zeros(2, dtype=np.float64))
    for t, shape in ((x.new_zeros(2, 3), (2, 3)), (x.new_ones((4,)), (4,)), (x.new_full((2, 2), 7.0), (2, 2)),
                     (x.new_tensor([[1, 2]]), (1, 2))):
        assert t.dtype == np.float64 and t.shape == shape and not t.requires_grad
    assert x.new_full((2,), 7.0).tolist() == [7.0, 7.0] and x.new_ones(1).tolist() == [1.0]
    assert x.new_zeros(3, dtype=torch.long).dtype == np.int64
    assert x.new_zeros(2, requires_grad=True).requires_grad
    data = np.array([1.0, 2.0])
    t = x.new_tensor(data)
    data[0] = 9.0
    assert t.tolist() == [1.0, 2.0]  # new_tensor copies
    with pytest.raises(ValueError, match=">= 0"):
        x.new_zeros(-1)


def test_sum_and_mean_take_numpys_axis_as_another_name_for_dim():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 9.0]], requires_grad=True)
    np.testing.assert_array_equal(x.sum(axis=1).numpy(), [6.0, 18.0])          # 1+2+3, 4+5+9
    np.testing.assert_array_equal(x.mean(axis=0).numpy(), [2.5, 3.5, 6.0])     # column means
    np.testing.assert_array_equal(torch.mean(x, axis=1, keepdim=True).numpy(), [[2.0], [6.0]])
    assert torch.sum(x, axis=(0, 1)).item() == 24.0
    x.mean(axis=1).sum().backward()  # d/dx of (row means summed) = 1/3 everywhere
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 1 / 3))
    with pytest.raises(TypeError, match=r"sum\(\) got both dim=0 and axis=1; they are one argument"):
        x.sum(0, axis=1)


def test_reductions_take_the_tensor_by_its_keyword_input():
    """torch.sum(input=x, dim=1) and torch.max(input=a, other=b) are PyTorch calls too: the tensor is a
    keyword like any other (the reductions' axis=/keepdims= wrapper once named it self, so input= failed)."""
    x = torch.tensor([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]])
    other = torch.tensor([3.0, 2.0, 2.5])
    np.testing.assert_array_equal(torch.sum(input=x, dim=1).numpy(), [8.0, 7.0])
    np.testing.assert_array_equal(torch.max(input=x, other=other).numpy(), np.maximum(x.numpy(), other.numpy()))
    values, indices = torch.min(input=x, dim=1)
    assert values.tolist() == [1.0, 0.0] and indices.tolist() == [0, 1]
    np.testing.assert_array_equal(torch.mean(input=x, axis=0, keepdims=True).numpy(), [[2.5, 2.5, 2.5]])
    assert torch.argmax(input=x).item() == 1 and torch.any(input=x > 4).item()
    with pytest.raises(TypeError, match=r"sum\(\) got both dim=1 and axis=0; they are one argument"):
        torch.sum(input=x, dim=1, axis=0)
    with pytest.raises(TypeError, match=r"mean\(\) got both dim=1 and axis=0; they are one argument"):
        torch.mean(x, 1, axis=0)
