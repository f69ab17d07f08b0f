"""tinyattn's benchmarks: speed and memory, each against the plain-NumPy (or naive) way of doing the same thing.

Run them all with ``python -m benchmarks`` (or ``tinyattn bench``); ``--quick`` for a smoke run,
``--only NAME`` for one, ``--json FILE`` to keep the numbers. Each benchmark is one module with a
``run(quick: bool) -> list[Row]``; the shared timing helpers are in ``benchmarks.common``.
"""
from __future__ import annotations

BENCHMARKS = ("engine_overhead", "mlp_step", "mha", "matmul_roofline", "flash_memory", "demo_throughput",
              "gpt2_forward", "bert_forward")
# Run as well when what they compare against can be imported (each module's ``available()`` says):
# torch_cpu and tutorial_styles need PyTorch, hf_gpt2 PyTorch and transformers: none is a dependency.
OPTIONAL_BENCHMARKS = ("torch_cpu", "tutorial_styles", "hf_gpt2")
