"""tinyattn.device, tinyattn.cuda, tinyattn.backends and tinyattn.amp: a CPU-only PyTorch's answers."""
import warnings

import numpy as np
import pytest

import tinyattn as torch  # the names a training script reaches for
import tinyattn.nn as nn
from tinyattn import optim


def test_the_device_idiom_picks_the_cpu():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert device == "cpu" and torch.cuda.device_count() == 0 and not torch.cuda.is_bf16_supported()
    torch.cuda.manual_seed_all(1337)  # accepted, changes nothing here
    torch.cuda.manual_seed(1)
    torch.cuda.empty_cache()
    model = nn.Linear(2, 2).to(device)
    x = torch.zeros((1, 2), dtype=torch.float32, device=device).to(device)
    assert model(x).shape == (1, 2)


def test_device_objects_have_pytorchs_type_index_and_repr():
    d = torch.device("cuda", 1)
    assert (d.type, d.index, str(d), repr(d)) == ("cuda", 1, "cuda:1", "device(type='cuda', index=1)")
    assert torch.device("cuda:1") == d and torch.device("cpu").index is None
    assert repr(torch.device("cpu")) == "device(type='cpu')" and torch.device(d) is d
    cpu = torch.device("cpu")
    x = torch.ones(2)
    assert x.to(cpu) is x and nn.Linear(1, 1).to(cpu).weight.shape == (1, 1)
    assert torch.zeros(2, device=cpu).shape == (2,)
    with cpu:
        assert torch.ones(1).device == "cpu"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, mps, meta device type at start of device "
                                           "string: gpu"):
        torch.device("gpu")
    with pytest.raises(RuntimeError, match="index must be an int >= 0, got -1"):
        torch.device("cuda", -1)
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:x'"):
        torch.device("cuda:x")


def test_putting_anything_on_a_gpu_raises_pytorchs_messages():
    with pytest.raises(AssertionError, match=r"^Torch not compiled with CUDA enabled \(Tensor.to='cuda'"):
        torch.ones(2).to("cuda")
    with pytest.raises(AssertionError, match=r"^Torch not compiled with CUDA enabled \(Module.to='cuda:0'"):
        nn.Linear(2, 2).to(torch.device("cuda", 0))
    with pytest.raises(AssertionError, match=r"^Torch not compiled with CUDA enabled"):
        torch.zeros(2, device="cuda")
    with pytest.raises(AssertionError, match=r"^Torch not compiled with CUDA enabled"):
        torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match=r"^PyTorch is not linked with support for mps devices"):
        torch.ones(2).to("mps")


def test_backends_flags_are_settable_and_mps_is_absent():
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    assert torch.backends.mps.is_available() is False and torch.backends.mps.is_built() is False


def test_grad_scaler_without_cuda_is_disabled_and_the_loop_trains_as_the_plain_one():
    def train(use_scaler):
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        opt = optim.SGD(model.parameters(), lr=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler = torch.cuda.amp.GradScaler(enabled=True)
        x = torch.randn(4, 3)
        for _ in range(3):
            loss = (model(x) ** 2).mean()
            if use_scaler:
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            opt.zero_grad(set_to_none=True)
        return model.weight.numpy().copy(), scaler

    (a, scaler), (b, _) = train(True), train(False)
    np.testing.assert_array_equal(a, b)
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available. Disabling."):
        torch.amp.GradScaler("cuda", enabled=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.amp.GradScaler(enabled=False)  # asked for nothing: no warning


def test_autocast_changes_no_dtype_and_says_so():
    x = torch.ones(2, 2)
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
        ctx = torch.amp.autocast(device_type="cuda", dtype=None)
    with ctx:
        assert (x @ x).dtype == np.float32
    with pytest.warns(UserWarning, match="changes nothing in tinyattn: NumPy has no bfloat16"):
        torch.autocast(device_type="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with torch.amp.autocast(device_type="cpu", enabled=False):
            assert (x + 1).dtype == np.float32


def test_a_multi_gpu_scripts_imports_work_and_its_single_process_branch_runs():
    # nanoGPT-style header: the names import; the DDP branch is taken only under torchrun (RANK set)
    from tinyattn.distributed import destroy_process_group, init_process_group
    from tinyattn.nn.parallel import DistributedDataParallel as DDP
    assert not torch.distributed.is_available() and not torch.distributed.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group\\(backend='nccl'\\): tinyattn trains in one process"):
        init_process_group(backend="nccl")
    with pytest.raises(RuntimeError, match="destroy_process_group: Default process group has not been initialized"):
        destroy_process_group()
    with pytest.raises(RuntimeError, match="get_world_size: Default process group has not been initialized"):
        torch.distributed.get_world_size()
    with pytest.raises(RuntimeError, match="DistributedDataParallel: Default process group has not been initialized"):
        DDP(nn.Linear(2, 2), device_ids=[0])


def test_data_parallel_without_gpus_calls_the_module_and_prefixes_names_with_module():
    inner = nn.Linear(3, 2)
    with torch.no_grad():
        inner.weight.fill_(1.0)
        inner.bias.fill_(0.5)
    dp = nn.parallel.DataParallel(inner)
    assert dp.module is inner and dp.device_ids == []
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert [p is q for p, q in zip(dp.parameters(), inner.parameters())] == [True, True]
    out = dp(torch.tensor([[1.0, 2.0, 3.0]]))  # 1 + 2 + 3 + 0.5 in each of the two outputs
    np.testing.assert_array_equal(out.numpy(), [[6.5, 6.5]])
    with pytest.raises(TypeError, match="DataParallel wraps a Module, got function"):
        nn.parallel.DataParallel(lambda x: x)


def test_compile_returns_the_model_itself_so_nothing_it_computes_changes():
    model = nn.Linear(2, 2)
    assert torch.compile(model) is model and torch.compile(model, mode="max-autotune") is model

    def f(x):
        return x * 2

    assert torch.compile(f) is f
    assert torch.compile(mode="reduce-overhead")(f) is f  # the decorator-with-options form
    assert not torch.compiler.is_compiling()
    with pytest.raises(TypeError, match="compile expects a Module or a function, got int"):
        torch.compile(3)
    assert "compile" not in torch.__all__  # `from tinyattn import *` keeps Python's builtin compile
