"""torch.jit on a CPU eager build: script/trace/ignore/export/unused return what they are given."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn


def test_script_and_trace_return_the_function_or_module_itself():
    tinyattn.manual_seed(0)
    model = nn.Linear(3, 2)
    x = tinyattn.randn(4, 3)
    assert tinyattn.jit.script(model) is model
    assert tinyattn.jit.trace(model, x) is model and tinyattn.jit.trace(model, example_inputs=(x,)) is model
    assert tinyattn.jit.trace_module(model, {"forward": x}) is model

    @tinyattn.jit.script
    def double(t):
        return t * 2

    np.testing.assert_array_equal(double(x).numpy(), x.numpy() * 2)
    with pytest.raises(TypeError, match="expected a function or Module to trace, got int"):
        tinyattn.jit.trace(3, x)


def test_decorators_with_and_without_arguments():
    class M(nn.Module):
        @tinyattn.jit.ignore
        def a(self):
            return "a"

        @tinyattn.jit.ignore(drop=True)
        def b(self):
            return "b"

        @tinyattn.jit.export
        def c(self):
            return "c"

        @tinyattn.jit.unused
        def d(self):
            return "d"

        def forward(self, x):
            return x + 1 if not tinyattn.jit.is_scripting() else x

    m = tinyattn.jit.script(M())
    assert (m.a(), m.b(), m.c(), m.d()) == ("a", "b", "c", "d")
    assert m(tinyattn.ones(1)).item() == 2
    assert tinyattn.jit.is_tracing() is False
    assert tinyattn.jit.annotate(list, [1]) == [1]
    with pytest.raises(TypeError, match="torch.jit.export decorates a function or method, got int"):
        tinyattn.jit.export(3)


def test_save_and_load_say_what_to_use_instead():
    with pytest.raises(NotImplementedError, match="tinyattn.save\\(model.state_dict\\(\\), path\\)"):
        tinyattn.jit.save(nn.Linear(2, 2), "m.pt")
