"""``torch.autograd.function``: the module path of ``torch.autograd.Function``, as PyTorch code imports it."""
import subprocess
import sys

import numpy as np

import tinyattn
from tinyattn.gradcheck import gradcheck


def test_both_import_spellings_work_in_a_fresh_interpreter_and_name_the_same_class():
    code = ("import tinyattn.autograd.function\n"
            "from tinyattn.autograd.function import Function, FunctionCtx, once_differentiable\n"
            "import tinyattn as torch\n"
            "print(Function is torch.autograd.Function is torch.autograd.function.Function is torch.Function)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"


def test_a_function_defined_from_that_path_runs_forward_and_backward():
    from tinyattn.autograd.function import Function, FunctionCtx, once_differentiable

    seen = []

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(isinstance(ctx, FunctionCtx))
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            seen.append(tinyattn.is_grad_enabled())
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = tinyattn.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    Cube.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2, rtol=1e-15)
    assert seen == [True, False]  # ctx is a FunctionCtx; backward ran with gradients off
    assert gradcheck(lambda x: Cube.apply(x), (x,))
