"""Idioms met while running public teaching code on tinyattn (torch-free; expected values from NumPy).

- ``torch.where(condition=..., input=..., other=...)``: a book's top-k sampling cell names every argument.
- ``torch.set_printoptions(sci_mode=False)``: a book's GPT chapter sets it before printing activations.
- ``torch.zeros(size=(n,), dtype=torch.long)``: a small transformer library pads a context with it.
- ``torch.tensor([pad_token] * n, dtype=torch.int64)`` with ``pad_token = torch.tensor([1])``: a translation
  tutorial pads with a list of one-element tensors, each one number of the result.
- ``torch.max(1 - x.abs(), torch.zeros_like(x))``: a textbook's Epanechnikov kernel, the two-tensor overload.
- ``for name in gru._flat_weights_names: init(gru._parameters[name])``: the same textbook's seq2seq init.
- ``nn.LayerNorm(2)(torch.tensor(..., dtype=torch.float32))`` under a float64 default: PyTorch refuses the mixed
  dtypes (a textbook cell fails there under float64), so tinyattn does too rather than computing in float32.
- ``torch.randint(high=20, size=(16, 24))`` and ``randint(size=(b,), low=0, high=n)``: the same library's
  tests and batch sampler name every argument.
"""
import numpy as np
import pytest

import tinyattn as torch


def test_where_takes_pytorchs_keyword_names():
    rng = np.random.default_rng(0)
    c, x, y = rng.random(6) < 0.5, rng.standard_normal(6), rng.standard_normal(6)
    got = torch.where(condition=torch.tensor(c), input=torch.tensor(x), other=torch.tensor(y))
    np.testing.assert_array_equal(got.numpy(), np.where(c, x, y))
    # the book's form: a 0-d -inf as input, the logits as other
    logits = torch.tensor([1.0, 5.0, 3.0])
    top = torch.topk(logits, 2).values
    got = torch.where(condition=logits < top[-1], input=torch.tensor(float("-inf")), other=logits)
    assert got.tolist() == [float("-inf"), 5.0, 3.0]
    with pytest.raises(TypeError, match="give both input and other"):
        torch.where(torch.tensor([True]), input=torch.tensor([1.0]))


def test_where_keyword_gradients_by_finite_differences():
    rng = np.random.default_rng(1)
    c = torch.tensor(rng.random((3, 4)) < 0.5)
    x = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((1, 4)), requires_grad=True)  # broadcast: its gradient sums rows
    assert torch.gradcheck(lambda a, b: torch.where(condition=c, input=a, other=b) * a, (x, y))


@pytest.fixture
def default_printing():
    yield
    torch.set_printoptions(profile="default")


def test_set_printoptions_precision_threshold_edgeitems(default_printing):
    x = torch.tensor([1.23456, 2.5, 3.0], dtype=torch.float64)
    torch.set_printoptions(precision=2)
    assert "1.23," in repr(x) and "1.2346" not in repr(x)
    torch.set_printoptions(profile="default")  # the profile puts precision back to 4
    assert "1.2346" in repr(x)
    long = torch.arange(10.0)
    assert "..." not in repr(long)
    torch.set_printoptions(threshold=5, edgeitems=1)  # more than 5 elements: summarised, one at each end
    body = repr(long)
    assert "..." in body and "0." in body and "9." in body and "5." not in body
    torch.set_printoptions(profile="full")  # no summary at any size
    assert "..." not in repr(torch.arange(2000.0))


def test_set_printoptions_sci_mode(default_printing):
    x = torch.tensor([1e-5, 1.0, 123456.0], dtype=torch.float64)
    torch.set_printoptions(sci_mode=False)
    assert "e-05" not in repr(x) and "0.0000" in repr(x) and "123456.0000" in repr(x)
    torch.set_printoptions(sci_mode=True)
    assert "1.0000e+00" in repr(x)
    torch.set_printoptions(precision=4)  # sci_mode is not given, so it goes back to None (NumPy's choice)
    assert "e-05" in repr(x)


def test_set_printoptions_bad_values(default_printing):
    with pytest.raises(ValueError, match="profile must be one of"):
        torch.set_printoptions(profile="long")
    with pytest.raises(TypeError, match="precision must be a number, got str"):
        torch.set_printoptions(precision="4")


def test_torch_onnx_imports_and_export_refuses_with_the_way_out():
    import tinyattn.onnx  # pytorch/examples' word_language_model: `import torch.onnx` at the top
    assert torch.onnx is tinyattn.onnx and torch.onnx.is_in_onnx_export() is False
    with pytest.raises(torch.onnx.OnnxExporterError, match="can not export Linear to ONNX.*torch.onnx.export there"):
        torch.onnx.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),), "model.onnx")
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)


def test_legacy_tensor_constructor_with_sizes():
    # sooftware/attentions: nn.Parameter(torch.Tensor(num_heads, d_head)) then xavier_uniform_
    p = torch.nn.Parameter(torch.Tensor(4, 3))
    assert p.shape == (4, 3) and p.dtype == torch.float32 and p.requires_grad
    torch.nn.init.xavier_uniform_(p)
    bound = np.sqrt(6.0 / (4 + 3))
    assert np.all(np.abs(p.detach().numpy()) <= bound) and np.abs(p.detach().numpy()).max() > 0
    assert torch.Tensor(5).shape == (5,) and torch.Tensor().shape == (0,)
    assert torch.Tensor(2, 3, dtype=torch.float64).dtype == torch.float64
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.Tensor(2, 2).dtype == torch.float64  # the default dtype, as PyTorch's
    finally:
        torch.set_default_dtype(torch.float32)
    # data is still data: an int array stays int64 and is shared (a documented difference)
    ids = np.array([[1, 2]])
    t = torch.Tensor(ids)
    assert t.dtype == torch.int64 and np.shares_memory(t.numpy(), ids)
    assert torch.Tensor(np.ones(2), requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="a shape needs ints"):
        torch.Tensor(2, "a")


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_the_size_keyword(name):
    fn = getattr(torch, name)
    for size in [(2, 3), [4], ()]:
        t = fn(size=size)
        assert t.shape == tuple(size) and t.dtype == torch.get_default_dtype()
    t = fn(size=(3,), dtype=torch.float64)
    assert t.shape == (3,) and t.dtype == torch.float64
    # the same tensor as the positional forms
    if name in ("zeros", "ones"):
        np.testing.assert_array_equal(fn(size=(2, 2)).numpy(), getattr(np, name)((2, 2)))
    torch.manual_seed(3); a = fn(size=(5,)).numpy()
    torch.manual_seed(3); b = fn(5).numpy()
    if name in ("rand", "randn"):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_refuse_a_size_given_twice_or_as_an_int_or_not_at_all(name):
    fn = getattr(torch, name)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        fn(2, size=(3,))
    with pytest.raises(TypeError, match="argument 'size' must be tuple of ints, not int"):
        fn(size=3)
    with pytest.raises(TypeError, match='missing 1 required positional arguments: "size"'):
        fn()


def test_full_takes_size_and_fill_value_by_keyword():
    t = torch.full(size=(2,), fill_value=3)
    assert t.dtype == torch.int64
    np.testing.assert_array_equal(t.numpy(), np.full(2, 3))
    assert torch.full(size=(1, 2), fill_value=1.5).dtype == torch.get_default_dtype()
    with pytest.raises(TypeError, match="argument 'size' must be tuple of ints, not int"):
        torch.full(3, 1.0)


@pytest.mark.parametrize("args,kw,low,high,shape", [
    ((), dict(high=20, size=(16, 24)), 0, 20, (16, 24)),
    ((), dict(size=(50,), low=3, high=9), 3, 9, (50,)),
    ((7,), dict(size=(40,)), 0, 7, (40,)),
    ((2,), dict(high=6, size=(40,)), 2, 6, (40,)),
    ((4, (40,)), {}, 0, 4, (40,)),
    ((-3, 3, (40,)), {}, -3, 3, (40,)),
])
def test_randint_forms_positional_and_keyword(args, kw, low, high, shape):
    torch.manual_seed(0)
    t = torch.randint(*args, **kw)
    assert t.shape == shape and t.dtype == torch.int64
    v = t.numpy()
    assert v.min() >= low and v.max() < high
    # every form is the same draw as the positional (low, high, size) one
    torch.manual_seed(0)
    np.testing.assert_array_equal(torch.randint(low, high, shape).numpy(), v)


@pytest.mark.parametrize("args,kw,match", [
    ((), dict(low=2, size=(2,)), '"high"'),
    ((), dict(size=(2,)), '"high"'),
    ((5,), {}, '"size"'),
    ((), dict(high=5), '"size"'),
    ((2, 5), dict(high=6, size=(2,)), "multiple values for argument 'high'"),
    ((2, 5, (2,)), dict(size=(2,)), "multiple values for argument 'size'"),
])
def test_randint_refuses_missing_or_doubled_arguments(args, kw, match):
    with pytest.raises(TypeError, match=match):
        torch.randint(*args, **kw)


def test_one_element_tensors_inside_a_list_are_numbers():
    pad = torch.tensor([7])
    t = torch.tensor([pad] * 3, dtype=torch.int64)
    assert t.shape == (3,)
    np.testing.assert_array_equal(t.numpy(), [7, 7, 7])
    # any shape of one element, nested, mixed with Python numbers
    got = torch.tensor([[torch.tensor([[1.5]]), 2.0], [torch.tensor(3.0), 4]])
    assert got.shape == (2, 2)
    np.testing.assert_array_equal(got.numpy(), np.array([[1.5, 2.0], [3.0, 4.0]], dtype=np.float32))


@pytest.mark.parametrize("items,want", [
    (lambda: [torch.tensor([1]), 5], np.int64),                                   # int64 with a Python int
    (lambda: [torch.tensor([1], dtype=torch.int32)] * 2, np.int32),               # the tensors' own dtype
    (lambda: [torch.tensor([1], dtype=torch.int32), 5], np.int64),                # promoted with int64
    (lambda: [torch.tensor(1, dtype=torch.uint8), torch.tensor(2, dtype=torch.int8)], np.int16),
    (lambda: [torch.tensor(1.0, dtype=torch.float16), 3], np.float16),            # a float beats an int
    (lambda: [torch.tensor([1]), 2.5], np.float32),                               # the default float
    (lambda: [torch.tensor(1.5, dtype=torch.float64), 2.5], np.float64),
    (lambda: [torch.tensor([True])] * 2, np.bool_),
])
def test_the_dtype_of_tensors_inside_a_list_joins_by_promotion(items, want):
    assert torch.tensor(items()).dtype == want


def test_a_tensor_of_several_elements_inside_a_list_is_refused():
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
        torch.tensor([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])])
    with pytest.raises(TypeError, match="only integer tensors of a single element can be converted to an index"):
        torch.tensor([torch.tensor([1, 2])])
    with pytest.raises(TypeError, match="only integer tensors of a single element can be converted to an index"):
        torch.tensor([torch.tensor([1.5])], dtype=torch.int64)  # a float can not be read as an index
    with pytest.raises(ValueError, match="only one element tensors"):
        torch.tensor([torch.tensor([])])


def test_max_and_min_with_a_tensor_are_elementwise_with_tie_split_gradients():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4)); y = rng.standard_normal((1, 4)); x[0, 0] = y[0, 0]  # one tie
    a, b = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    hi, lo = torch.max(a, b), a.min(b)
    np.testing.assert_array_equal(hi.detach().numpy(), np.maximum(x, y))
    np.testing.assert_array_equal(lo.detach().numpy(), np.minimum(x, y))
    np.testing.assert_array_equal(torch.max(a, other=b).detach().numpy(), np.maximum(x, y))
    (hi * 2 + lo).sum().backward()
    # d/dx of max is 1 where x wins (1/2 at a tie), of min 1 where x loses (1/2 at a tie)
    wins = (x > y) + 0.5 * (x == y)
    np.testing.assert_array_equal(a.grad.numpy(), 2 * wins + (1 - wins))
    np.testing.assert_array_equal(b.grad.numpy(), (2 * (1 - wins) + wins).sum(0, keepdims=True))
    with pytest.raises(TypeError, match="invalid combination"):
        torch.max(a, b, keepdim=True)


def test_max_with_a_tensor_gradients_by_finite_differences():
    rng = np.random.default_rng(5)
    a = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert torch.gradcheck(lambda p, q: torch.max(p, q) * 3 + torch.min(q, p), (a, b))


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("kw", [dict(num_layers=2), dict(bias=False, bidirectional=True)])
def test_rnn_flat_weights_names_list_every_weight_in_registration_order(cls, kw):
    m = getattr(torch.nn, cls)(3, 4, **kw)
    names = m._flat_weights_names
    assert names == [n for n, _ in m.named_parameters()]
    layers, dirs = kw.get("num_layers", 1), 2 if kw.get("bidirectional") else 1
    per = 4 if kw.get("bias", True) else 2
    assert len(names) == layers * dirs * per and names[0] == "weight_ih_l0" and names[1] == "weight_hh_l0"
    assert all(w is m._parameters[n] for w, n in zip(m._flat_weights, names))
    assert [len(g) for g in m.all_weights] == [per] * (layers * dirs)
    torch.nn.init.zeros_(m._parameters[names[0]])  # the textbook's way in: writes reach the module
    assert not m.weight_ih_l0.detach().numpy().any()


@pytest.mark.parametrize("x_dt,p_dt", [("float32", "float64"), ("float64", "float32"), ("float32", "float16")])
def test_layer_norm_refuses_parameters_of_another_dtype(x_dt, p_dt):
    x = torch.ones(2, 3, dtype=getattr(torch, x_dt))
    w, b = torch.ones(3, dtype=getattr(torch, p_dt)), torch.zeros(3, dtype=getattr(torch, p_dt))
    with pytest.raises(RuntimeError, match="mixed dtype"):
        torch.nn.functional.layer_norm(x, (3,), w, b)
    with pytest.raises(RuntimeError, match="mixed dtype"):
        torch.nn.functional.layer_norm(x, (3,), w)
    with pytest.raises(RuntimeError, match="expected scalar type"):
        torch.nn.functional.layer_norm(x, (3,), torch.ones(3, dtype=getattr(torch, x_dt)), b)


def test_layer_norm_half_input_takes_float32_parameters_and_stays_half():
    x = np.array([[1.0, 2.0, 4.0], [0.5, 0.25, 3.0]])
    w, b = np.array([1.0, 2.0, 0.5]), np.array([0.0, 1.0, -1.0])
    got = torch.nn.functional.layer_norm(torch.tensor(x, dtype=torch.float16), (3,),
                                         torch.tensor(w, dtype=torch.float32), torch.tensor(b, dtype=torch.float32))
    assert got.dtype == np.float16
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(got.numpy().astype(np.float64), (x - mu) / np.sqrt(var + 1e-5) * w + b, rtol=2e-3, atol=2e-3)
