"""The census of what public PyTorch attention/transformer teaching code calls, checked against tinyattn.

tests/data/census_names.csv was built by tests/data/build_census.py from the codebases listed in
tests/data/census_sources.json (repository, commit, files read). This test reads it without PyTorch:
  * every public name used by 2 or more codebases exists in tinyattn (``torch.nn.functional.x`` ->
    ``tinyattn.nn.functional.x``, ``Tensor.m`` -> ``tinyattn.Tensor.m``);
  * a name that can not mean anything in a one-process CPU framework (a GPU, a stream, a process
    group) is listed in CPU_ONLY below with the answer PyTorch 2.13's CPU-only build gives (measured):
    it exists here and gives that same answer, a value or PyTorch's error;
  * the coverage figure (names used by 2 or more codebases that exist here / all such names) stays at
    or above the figure measured when the census was committed.
Names of kind ``private`` (PyTorch internals such as ``torch._utils._rebuild_tensor_v2``) and
``ambiguous`` (``x.index(...)``, ``x.values()``: far more often str/dict methods) are counted, not required.
"""
from __future__ import annotations

import ast
import csv
import importlib
import json
import os
import re
import sys
import types

import pytest

import tinyattn

DATA = os.path.join(os.path.dirname(__file__), "data")
REQUIRED_KINDS = ("torch", "module", "method", "attribute")

# Measured by coverage() below: have / total, kept as that fraction (372/384 and 445/566 when the census was
# committed; raised when Conv3d, interpolate, autograd.function and the storage names came, measured without the
# tensorboard package, which SummaryWriter needs; then 383/384 and 469/566 with complex tensors, the activations,
# fold/unfold and the long tail the op-surface fuzzer found; the one missing name is SummaryWriter without tensorboard;
# 537/566 of all names once the names used by one codebase came: BCE/L1/Huber losses, GroupNorm/RMSNorm, channel
# dropout, transposed convolution, 3-D and adaptive max pooling, padding layers, torch.nn.modules paths, linalg,
# torch.func, torch.hub, distributions.Normal, SyncBatchNorm, serialization.safe_globals, xpu, ...; 539/566 with
# torch.onnx and the serialization names the real-codebase runs needed).
COVERAGE_FLOOR_2 = 383 / 384
COVERAGE_FLOOR_ALL = 539 / 566


def load_names():
    with open(os.path.join(DATA, "census_names.csv"), newline="") as fh:
        return [dict(r, codebases=int(r["codebases"]), total=int(r["total"])) for r in csv.DictReader(fh)]


def load_sources():
    with open(os.path.join(DATA, "census_sources.json")) as fh:
        return json.load(fh)["sources"]


def resolve(name: str, kind: str):
    """tinyattn's object for a census name, or raise LookupError naming what is missing."""
    if kind in ("method", "attribute", "ambiguous") or name.startswith("Tensor."):
        attr = name.split(".", 1)[1]
        if not hasattr(tinyattn.Tensor, attr):
            raise LookupError(name)
        return getattr(tinyattn.Tensor, attr)
    parts = name.split(".")
    assert parts[0] == "torch", name
    obj, path = tinyattn, ["tinyattn"]
    for p in parts[1:]:
        if hasattr(obj, p):
            obj = getattr(obj, p)
        elif isinstance(obj, types.ModuleType):
            try:
                obj = importlib.import_module(".".join(path + [p]))
            except ImportError:
                raise LookupError(name) from None
        else:
            raise LookupError(name)
        path.append(p)
    return obj


def exists(name: str, kind: str) -> bool:
    try:
        resolve(name, kind)
    except LookupError:
        return False
    return True


# ------------------------------------------------------------------ names that mean nothing here
NO_CUDA = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."
NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."


class Raises:
    def __init__(self, exc: type[BaseException], text: str):
        self.exc, self.text = exc, text


# name -> (call on tinyattn, PyTorch 2.13 CPU-only's answer: a value or Raises(type, text), why).
# The texts were measured in a CPU build; tinyattn's message says PyTorch's text and may add to it.
CPU_ONLY = {
    "torch.cuda.is_available": (lambda t: t.cuda.is_available(), False, "no GPU: the CPU branch is taken"),
    "torch.cuda.device_count": (lambda t: t.cuda.device_count(), 0, "no GPU"),
    "torch.cuda.is_bf16_supported": (lambda t: t.cuda.is_bf16_supported(), False, "no GPU"),
    "torch.cuda.manual_seed": (lambda t: t.cuda.manual_seed(0), None, "no GPU generator to seed; accepted"),
    "torch.cuda.manual_seed_all": (lambda t: t.cuda.manual_seed_all(0), None, "no GPU generators; accepted"),
    "torch.cuda.empty_cache": (lambda t: t.cuda.empty_cache(), None, "no GPU cache to empty"),
    "torch.cuda.max_memory_allocated": (lambda t: t.cuda.max_memory_allocated(), 0, "no GPU memory used"),
    "torch.cuda.memory_allocated": (lambda t: t.cuda.memory_allocated(), 0, "no GPU memory used"),
    "torch.cuda.max_memory_reserved": (lambda t: t.cuda.max_memory_reserved(), 0, "no GPU memory reserved"),
    "torch.accelerator.is_available": (lambda t: t.accelerator.is_available(), False, "no accelerator: the CPU branch"),
    "torch.accelerator.current_accelerator": (lambda t: t.accelerator.current_accelerator(), None, "no accelerator"),
    "torch.xpu.get_device_properties": (lambda t: t.xpu.get_device_properties(0),
                                        Raises(AssertionError, "Torch not compiled with XPU enabled"), "no Intel GPU"),
    "torch.cuda.current_device": (lambda t: t.cuda.current_device(), Raises(AssertionError, NO_CUDA), "no GPU"),
    "torch.cuda.synchronize": (lambda t: t.cuda.synchronize(), Raises(AssertionError, NO_CUDA), "no GPU stream"),
    "torch.cuda.get_device_name": (lambda t: t.cuda.get_device_name(0), Raises(AssertionError, NO_CUDA), "no GPU"),
    "torch.cuda.get_device_properties": (lambda t: t.cuda.get_device_properties(0), Raises(AssertionError, NO_CUDA),
                                         "no GPU"),
    "torch.cuda.get_device_capability": (lambda t: t.cuda.get_device_capability(), Raises(AssertionError, NO_CUDA),
                                         "no GPU"),
    "torch.cuda.set_device": (lambda t: t.cuda.set_device(0),
                              Raises(AttributeError, "module 'torch._C' has no attribute '_cuda_setDevice'"),
                              "no GPU to select: a CPU build lacks the CUDA binding"),
    "torch.cuda.reset_peak_memory_stats": (
        lambda t: t.cuda.reset_peak_memory_stats(),
        Raises(AttributeError, "module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'"), "no GPU memory"),
    "torch.cuda.HalfTensor": (lambda t: t.cuda.HalfTensor(2), Raises(
        TypeError, "type torch.cuda.HalfTensor not available. Torch not compiled with CUDA enabled."),
        "a GPU tensor type"),
    "torch.cuda.Stream": (lambda t: t.cuda.Stream(), Raises(RuntimeError, "torch.cuda.Stream requires CUDA support"),
                          "GPU streams"),
    "torch.cuda.Event": (lambda t: t.cuda.Event(), Raises(RuntimeError, "Tried to instantiate dummy base class Event"),
                         "GPU events"),
    "Tensor.cuda": (lambda t: t.ones(2).cuda(), Raises(AssertionError, NO_CUDA), "no GPU to copy to"),
    "Tensor.is_cuda": (lambda t: t.ones(2).is_cuda, False, "every tensor lives on the CPU"),
    "Tensor.pin_memory": (lambda t: t.ones(2).pin_memory(), Raises(RuntimeError, NO_ACCELERATOR),
                          "page-locked memory is for copies to a GPU"),
    "torch.backends.mps.is_available": (lambda t: t.backends.mps.is_available(), False, "no Apple GPU"),
    # The distributed package: tinyattn answers as a PyTorch built without it (is_available() False).
    # PyTorch 2.13 with gloo raises ValueError with NO_GROUP's text for the calls that need a group.
    "torch.distributed.is_available": (lambda t: t.distributed.is_available(), False, "one process"),
    "torch.distributed.is_initialized": (lambda t: t.distributed.is_initialized(), False, "no process group"),
    "torch.distributed.get_rank": (lambda t: t.distributed.get_rank(), Raises(RuntimeError, NO_GROUP),
                                   "no process group"),
    "torch.distributed.get_world_size": (lambda t: t.distributed.get_world_size(), Raises(RuntimeError, NO_GROUP),
                                         "no process group"),
    "torch.distributed.all_reduce": (lambda t: t.distributed.all_reduce(t.ones(2)), Raises(RuntimeError, NO_GROUP),
                                     "no process group"),
    "torch.distributed.all_gather_into_tensor": (
        lambda t: t.distributed.all_gather_into_tensor(t.zeros(2), t.ones(2)), Raises(RuntimeError, NO_GROUP),
        "no process group"),
    "torch.distributed.barrier": (lambda t: t.distributed.barrier(), Raises(RuntimeError, NO_GROUP),
                                  "no process group"),
    "torch.distributed.send": (lambda t: t.distributed.send(t.ones(2), 1), Raises(RuntimeError, NO_GROUP),
                               "no other process"),
    "torch.distributed.recv": (lambda t: t.distributed.recv(t.ones(2), 0), Raises(RuntimeError, NO_GROUP),
                               "no other process"),
    "torch.distributed.reduce_scatter_tensor": (lambda t: t.distributed.reduce_scatter_tensor(t.ones(2), t.ones(4)),
                                                Raises(RuntimeError, NO_GROUP), "no process group"),
    "torch.distributed.destroy_process_group": (lambda t: t.distributed.destroy_process_group(),
                                                Raises(RuntimeError, NO_GROUP), "no process group"),
    "torch.nn.parallel.DistributedDataParallel": (
        lambda t: t.nn.parallel.DistributedDataParallel(t.nn.Linear(1, 1)), Raises(RuntimeError, NO_GROUP),
        "no process group"),
    "torch.utils.data.DistributedSampler": (
        lambda t: t.utils.data.DistributedSampler([1, 2]),
        Raises(RuntimeError, "Requires distributed package to be available"),
        "the replicas are not given and there is no process group to ask"),
}


def answer(call):
    try:
        return call(tinyattn)
    except BaseException as e:  # noqa: BLE001  (the error is the answer under test)
        return e


@pytest.mark.parametrize("name", sorted(CPU_ONLY))
def test_a_name_that_needs_a_gpu_or_a_process_group_answers_as_a_cpu_only_pytorch(name):
    call, expected, _why = CPU_ONLY[name]
    assert exists(name, "torch"), f"{name} is missing: a CPU-only PyTorch has it, so code that names it imports"
    got = answer(call)
    if isinstance(expected, Raises):
        assert isinstance(got, expected.exc), f"{name}: expected {expected.exc.__name__}, got {got!r}"
        assert expected.text in str(got), f"{name}: {str(got)!r} does not say PyTorch's {expected.text!r}"
    else:
        assert not isinstance(got, BaseException), f"{name} raised {got!r}; PyTorch answers {expected!r}"
        assert got == expected and type(got) is type(expected), f"{name}: {got!r}, PyTorch: {expected!r}"


# ------------------------------------------------------------------ the census itself
def test_the_census_covers_at_least_30_codebases_each_at_a_commit():
    sources = load_sources()
    repos = [s["repo"] for s in sources]
    assert len(repos) >= 30 and len(set(repos)) == len(repos)
    for s in sources:
        assert re.fullmatch(r"[0-9a-f]{40}", s["commit"]), s
        assert s["files"], f"{s['repo']}: no file read"
    for row in load_names():
        used = row["used_by"].split(";")
        assert set(used) <= set(repos), row["name"]
        assert row["codebases"] == len(used) and row["total"] >= row["codebases"], row["name"]
        assert row["kind"] in REQUIRED_KINDS + ("private", "ambiguous"), row


def coverage(min_codebases: int):
    rows = [r for r in load_names() if r["kind"] in REQUIRED_KINDS and r["codebases"] >= min_codebases]
    missing = [r for r in rows if not exists(r["name"], r["kind"])]
    return len(rows) - len(missing), len(rows), missing


# Names used by 2 or more codebases that tinyattn does not have yet, each with why. The test below fails when
# a name outside this table is missing AND when a name in it appears (then strike it from the table), so
# the table is always exactly what is missing.
KNOWN_GAPS = {
}
# Names that exist and, without their optional package, raise PyTorch's own ModuleNotFoundError naming it.
NEEDS_PACKAGE = {"torch.utils.tensorboard.SummaryWriter": ("tinyattn.utils.tensorboard", "tensorboard")}


def test_every_name_used_by_two_or_more_codebases_exists_in_tinyattn():
    have, total, missing = coverage(2)
    names = {r["name"] for r in missing} - set(NEEDS_PACKAGE)
    listing = "\n".join(f"  {r['name']} ({r['kind']}): {r['codebases']} codebases, {r['total']} uses"
                        for r in missing if r["name"] in names - set(KNOWN_GAPS))
    assert not names - set(KNOWN_GAPS), (f"names used by 2 or more codebases are missing (coverage {have}/{total} "
                                         f"= {have / total:.1%}):\n{listing}")
    assert not set(KNOWN_GAPS) - names, f"now present: strike from KNOWN_GAPS: {sorted(set(KNOWN_GAPS) - names)}"


def test_names_behind_an_optional_package_exist_and_name_the_package():
    import importlib.util
    import subprocess
    import sys

    for name, (module, package) in NEEDS_PACKAGE.items():
        if importlib.util.find_spec(package) is not None:
            assert exists(name, "torch"), name
            continue
        code = f"import {module}"
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert run.returncode != 0 and "ModuleNotFoundError" in run.stderr and package in run.stderr, run.stderr


def test_the_coverage_figure_does_not_fall():
    have2, total2, _ = coverage(2)
    have1, total1, _ = coverage(1)
    print(f"census coverage: {have2}/{total2} = {have2 / total2:.1%} of the names used by 2 or more codebases, "
          f"{have1}/{total1} = {have1 / total1:.1%} of all")
    assert have2 / total2 >= COVERAGE_FLOOR_2 and have1 / total1 >= COVERAGE_FLOOR_ALL


# ------------------------------------------------------------------ the extractor's rules, on a stand-in torch
def _stand_in_torch():
    """A module tree shaped like torch's, enough for the extractor to resolve names against."""
    torch = types.ModuleType("torch")
    nn = types.ModuleType("torch.nn")
    functional = types.ModuleType("torch.nn.functional")
    data = types.ModuleType("torch.utils.data")
    utils = types.ModuleType("torch.utils")

    class Tensor:
        def view(self): ...
        def split(self): ...
        shape = property(lambda self: ())

    torch.Tensor, torch.nn, nn.functional, torch.utils, utils.data = Tensor, nn, functional, utils, data
    torch.zeros = torch.float32 = nn.Linear = nn.Module = functional.softmax = data.DataLoader = object()
    return torch


def test_the_extractor_follows_every_import_spelling():
    sys.path.insert(0, DATA)
    try:
        build = importlib.import_module("build_census")
    finally:
        sys.path.remove(DATA)
    src = ("import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"
           "from torch.utils.data import DataLoader\nimport numpy as np\n"
           "class M(nn.Module):\n    def f(self, x):\n"
           "        y = F.softmax(x.view(2), -1).view(1)\n        np.split(x)\n"
           "        return torch.zeros(1, dtype=torch.float32), x.shape, 'a b'.split(), x.nothing()\n"
           "DataLoader([1])\n")
    fc = build.FileCensus(_stand_in_torch())
    assert fc.scan(build.code_chunks("m.py", src)) == 1
    assert dict(fc.counts) == {
        ("module", "torch"): 1, ("module", "torch.nn"): 1, ("module", "torch.nn.functional"): 1,
        ("torch", "torch.utils.data.DataLoader"): 2,   # the import line and the use
        ("torch", "torch.nn.Module"): 1, ("torch", "torch.nn.functional.softmax"): 1,
        ("torch", "torch.zeros"): 1, ("torch", "torch.float32"): 1,
        ("method", "Tensor.view"): 2,                  # np.split is a module's function, not a method
        ("attribute", "Tensor.shape"): 1, ("ambiguous", "Tensor.split"): 1}
    # a notebook: magics and shell lines dropped, the cells share their imports
    nb = {"cells": [{"cell_type": "code", "source": ["%matplotlib inline\n", "import torch.nn as nn\n", "!ls\n"]},
                    {"cell_type": "markdown", "source": "nn.Linear"},
                    {"cell_type": "code", "source": "layer = nn.Linear(2, 2)"}]}
    fc = build.FileCensus(_stand_in_torch())
    assert fc.scan(build.code_chunks("n.ipynb", json.dumps(nb))) == 2
    assert dict(fc.counts) == {("module", "torch.nn"): 1, ("torch", "torch.nn.Linear"): 1}
    ast.parse(src)  # the source above is valid Python, so the counts are the extractor's, not a parse failure's
