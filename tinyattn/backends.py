"""``tinyattn.backends``: the switches PyTorch code sets for GPU kernels, accepted and without effect here.

``torch.backends.cuda.matmul.allow_tf32 = True`` and ``torch.backends.cudnn.allow_tf32 = True``
let a GPU round float32 matmul inputs to 19 bits; NumPy on the CPU always multiplies in full
float32, so the flags are stored and never read. ``mps.is_available()`` is False.
"""
from __future__ import annotations

from types import SimpleNamespace

__all__ = ["cuda", "cudnn", "mps"]


def _false() -> bool:
    return False


cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
                       is_built=_false)
cudnn = SimpleNamespace(allow_tf32=True, enabled=True, benchmark=False, deterministic=False, is_available=_false)
mps = SimpleNamespace(is_available=_false, is_built=_false)
