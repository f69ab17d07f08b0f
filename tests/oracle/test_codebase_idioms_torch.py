"""Idioms met in public teaching code, against PyTorch: where's keyword names, set_printoptions' state,
the factories' size= keyword."""
import numpy as np
import pytest
import torch

import tinyattn
from tinyattn import defaults


def test_where_keywords_values_and_gradients_match_pytorch():
    rng = np.random.default_rng(0)
    c, x, y = rng.random((3, 4)) < 0.5, rng.standard_normal((3, 4)), rng.standard_normal((1, 4))
    out = {}
    for lib in (torch, tinyattn):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        r = lib.where(condition=lib.tensor(c), input=a, other=b)
        (r * lib.tensor(x)).sum().backward()
        out[lib.__name__] = (r.detach().numpy(), a.grad.numpy(), b.grad.numpy())
    for got, want in zip(out["tinyattn"], out["torch"]):
        np.testing.assert_array_equal(got, want)
    # a Python scalar and a 0-d tensor as input, as in top-k filtering
    for lib in (torch, tinyattn):
        lg = lib.tensor([1.0, 5.0, 3.0])
        out[lib.__name__] = lib.where(condition=lg < 3.0, input=lib.tensor(float("-inf")), other=lg).tolist()
    assert out["tinyattn"] == out["torch"]


@pytest.mark.parametrize("calls", [
    [dict(sci_mode=False)],
    [dict(precision=2), dict(threshold=5)],
    [dict(profile="short")],
    [dict(profile="full"), dict(edgeitems=1, linewidth=120)],
    [dict(precision=3, profile="full")],           # the profile first, then precision over it
    [dict(sci_mode=True), dict(precision=6)],      # sci_mode not given: back to None
    [dict(threshold=10, profile="default")],
])
def test_set_printoptions_leaves_the_same_options_as_pytorch(calls):
    try:
        for kw in calls:
            torch.set_printoptions(**kw)
            tinyattn.set_printoptions(**kw)
        assert defaults._print_opts == vars(torch._tensor_str.PRINT_OPTS)
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)
        tinyattn.set_printoptions(profile="default")


def test_summarised_print_keeps_pytorchs_edge_items():
    try:
        for lib in (torch, tinyattn):
            lib.set_printoptions(threshold=5, edgeitems=2)
        mine, theirs = repr(tinyattn.arange(10.0)), repr(torch.arange(10.0))
        for r in (mine, theirs):
            assert "..." in r and "1." in r and "8." in r and "2." not in r and "7." not in r
    finally:
        torch.set_printoptions(profile="default")
        tinyattn.set_printoptions(profile="default")


def test_onnx_module_names_exist_as_in_pytorch():
    import torch.onnx  # noqa: F401

    import tinyattn.onnx  # noqa: F401
    for name in tinyattn.onnx.__all__:
        assert hasattr(torch.onnx, name)
    assert tinyattn.onnx.is_in_onnx_export() == torch.onnx.is_in_onnx_export()
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)


@pytest.mark.parametrize("sizes", [(4,), (2, 3), (1, 2, 3), ()])
def test_legacy_tensor_sizes_form_matches_pytorchs_shape_and_dtype(sizes):
    theirs, mine = torch.Tensor(*sizes), tinyattn.Tensor(*sizes)
    assert tuple(theirs.shape) == mine.shape
    assert str(theirs.dtype) == "torch.float32" and mine.dtype == tinyattn.float32
    p_t, p_a = torch.nn.Parameter(torch.Tensor(*sizes)), tinyattn.nn.Parameter(tinyattn.Tensor(*sizes))
    assert p_t.requires_grad and p_a.requires_grad


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn", "full"])
@pytest.mark.parametrize("args,kw", [
    ((), dict(size=(2, 3))), ((), dict(size=[2])), ((), dict(size=())), ((), dict(size=3)), ((2,), dict(size=(3,))),
    ((), {}), ((), dict(size=(2,), dtype="float64")),
])
def test_factory_size_keyword_shape_dtype_and_errors_match_pytorch(name, args, kw):
    def call(lib):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(lib, k["dtype"])
        if name == "full":
            k["fill_value"] = 7
        try:
            t = getattr(lib, name)(*args, **k)
        except TypeError:
            return "TypeError"
        return tuple(t.shape), str(t.dtype).split(".")[-1]
    assert call(tinyattn) == call(torch)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full"])
def test_integer_factory_by_size_keyword_matches_pytorch(name):
    got = {}
    for lib in (torch, tinyattn):
        k = dict(size=(2, 1), dtype=lib.int64, **({"fill_value": 7} if name == "full" else {}))
        t = getattr(lib, name)(**k)
        got[lib.__name__] = (tuple(t.shape), str(t.dtype).split(".")[-1], None if name == "empty" else t.tolist())
    assert got["tinyattn"] == got["torch"]


@pytest.mark.parametrize("args,kw", [
    ((), dict(high=5, size=(2, 3))), ((5,), dict(size=(4,))), ((), dict(low=2, high=5, size=(3,))),
    ((2, 5, (3,)), {}), ((5, (3,)), {}), ((2,), dict(high=5, size=(2,))),
    ((), dict(low=2, size=(2,))), ((), dict(size=(2,))), ((5,), {}), ((), dict(high=5)), ((), dict(high=5, size=3)),
    ((2, 5), dict(high=6, size=(2,))),
])
def test_randint_forms_shape_dtype_bounds_and_errors_match_pytorch(args, kw):
    # the draws differ by design (NumPy's PCG64 against PyTorch's generator); shape, dtype, bounds and errors do not
    def call(lib):
        try:
            t = lib.randint(*args, **kw)
        except TypeError:
            return "TypeError"
        return tuple(t.shape), str(t.dtype).split(".")[-1]
    assert call(tinyattn) == call(torch)
    if call(torch) != "TypeError":
        lo = kw.get("low", args[0] if len(args) == 3 or (len(args) == 1 and "high" in kw) or (len(args) == 2 and not isinstance(args[1], tuple)) else 0)
        hi = kw.get("high", args[1] if len(args) >= 2 and not isinstance(args[1], tuple) else args[0] if args and "high" not in kw else None)
        v = tinyattn.randint(*args, **kw).numpy()
        assert v.min() >= lo and v.max() < hi


_LISTS = {
    "pad": lambda L: ([L.tensor([1])] * 3, {}),
    "pad_int64": lambda L: ([L.tensor([1])] * 3, {"dtype": L.int64}),
    "pad_float64": lambda L: ([L.tensor([1])] * 2, {"dtype": L.float64}),
    "scalars_0d": lambda L: ([L.tensor(1.5), L.tensor(2.5)], {}),
    "shape_1x1": lambda L: ([L.tensor([[1.5]])] * 2, {}),
    "nested": lambda L: ([[L.tensor([1.0]), L.tensor([2.0])]], {}),
    "int_and_float": lambda L: ([L.tensor([1]), 2.5], {}),
    "bool": lambda L: ([L.tensor([True])] * 2, {}),
    "float64": lambda L: ([L.tensor([1.5], dtype=L.float64)] * 2, {}),
    "int32_and_int": lambda L: ([L.tensor([1], dtype=L.int32), 5], {}),
    "uint8_int8": lambda L: ([L.tensor(1, dtype=L.uint8), L.tensor(2, dtype=L.int8)], {}),
    "float16_int": lambda L: ([L.tensor(1.0, dtype=L.float16), 3], {}),
    "tuple": lambda L: ((L.tensor([1]), L.tensor([2])), {}),
    "two_elements_float": lambda L: ([L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])], {}),
    "two_elements_int": lambda L: ([L.tensor([1, 2])], {}),
    "two_elements_bool": lambda L: ([L.tensor([True, False])], {}),
    "empty": lambda L: ([L.tensor([])], {}),
    "float_to_int": lambda L: ([L.tensor([1.5])] * 2, {"dtype": L.int64}),
    "float_0d_to_int32": lambda L: ([L.tensor(2.0)], {"dtype": L.int32}),
    "float_to_bool": lambda L: ([L.tensor([1.5])], {"dtype": L.bool}),
    "bool_to_int": lambda L: ([L.tensor([True])], {"dtype": L.int64}),
    "two_elements_float_to_float64": lambda L: ([L.tensor([1.0, 2.0])], {"dtype": L.float64}),
}


@pytest.mark.parametrize("case", sorted(_LISTS))
def test_tensors_inside_a_list_give_pytorchs_values_dtype_or_error(case):
    def call(L):
        data, kw = _LISTS[case](L)
        try:
            t = L.tensor(data, **kw)
        except (TypeError, ValueError) as e:
            return type(e).__name__, str(e)
        return tuple(t.shape), str(t.dtype).split(".")[-1], t.tolist()
    assert call(tinyattn) == call(torch)


@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("how", ["function", "method", "other_keyword"])
def test_max_min_with_a_tensor_match_pytorch_values_and_gradients(fn, how):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4)); y = rng.standard_normal((4,)); x[1, 2] = y[2]
    got = {}
    for L in (torch, tinyattn):
        a, b = L.tensor(x, requires_grad=True), L.tensor(y, requires_grad=True)
        r = (getattr(L, fn)(a, b) if how == "function" else getattr(a, fn)(b) if how == "method"
             else getattr(L, fn)(a, other=b))
        (r * L.tensor(x)).sum().backward()
        got[L.__name__] = (r.detach().numpy(), a.grad.numpy(), b.grad.numpy())
    for t, a in zip(got["torch"], got["tinyattn"]):
        np.testing.assert_array_equal(a, t)


def test_max_with_a_tensor_and_keepdim_raises_as_pytorch():
    for L in (torch, tinyattn):
        with pytest.raises(TypeError):
            L.max(L.ones(2), L.ones(2), keepdim=True)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("kw", [dict(num_layers=2), dict(bias=False, bidirectional=True), {}])
def test_rnn_flat_weights_names_and_all_weights_match_pytorch(cls, kw):
    t, a = getattr(torch.nn, cls)(3, 4, **kw), getattr(tinyattn.nn, cls)(3, 4, **kw)
    assert a._flat_weights_names == t._flat_weights_names
    assert [[tuple(p.shape) for p in g] for g in a.all_weights] == [[tuple(p.shape) for p in g] for g in t.all_weights]
    assert [tuple(p.shape) for p in a._flat_weights] == [tuple(p.shape) for p in t._flat_weights]


@pytest.mark.parametrize("x_dt,w_dt,b_dt", [
    ("float32", "float64", "float64"), ("float64", "float32", "float32"), ("float16", "float32", "float32"),
    ("float32", "float16", "float16"), ("float32", "float32", "float64"), ("float64", None, None),
    ("float32", "float64", None), ("float16", "float64", "float64"), ("float64", "float64", "float64"),
])
def test_layer_norm_dtype_rules_match_pytorch(x_dt, w_dt, b_dt):
    x = np.random.default_rng(7).standard_normal((2, 3))
    out = {}
    for L in (torch, tinyattn):
        w = None if w_dt is None else L.tensor([1.0, 2.0, 0.5], dtype=getattr(L, w_dt))
        b = None if b_dt is None else L.tensor([0.0, 1.0, -1.0], dtype=getattr(L, b_dt))
        try:
            r = L.nn.functional.layer_norm(L.tensor(x, dtype=getattr(L, x_dt)), (3,), w, b)
            out[L.__name__] = (str(r.dtype).split(".")[-1], r.detach().numpy().astype(np.float64))
        except RuntimeError as e:
            out[L.__name__] = (str(e), None)
    assert out["tinyattn"][0] == out["torch"][0]
    if out["torch"][1] is not None:
        tol = 2e-3 if x_dt == "float16" else 1e-6 if x_dt == "float32" else 1e-12
        np.testing.assert_allclose(out["tinyattn"][1], out["torch"][1], rtol=tol, atol=tol)
