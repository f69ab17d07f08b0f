"""``tinyattn.backends``: the switches PyTorch code sets for GPU kernels, accepted and without effect here.

``torch.backends.cuda.matmul.allow_tf32 = True`` and ``torch.backends.cudnn.allow_tf32 = True``
let a GPU round float32 matmul inputs to 19 bits; NumPy on the CPU always multiplies in full
float32, so the flags are stored and never read. ``mps.is_available()`` is False.
"""
from __future__ import annotations

import contextlib
import warnings
from types import SimpleNamespace

__all__ = ["cuda", "cudnn", "mps", "set_float32_matmul_precision", "get_float32_matmul_precision"]


def _false() -> bool:
    return False


@contextlib.contextmanager
def _sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
                enable_cudnn: bool = True):
    """The old spelling of ``torch.nn.attention.sdpa_kernel``: warns as PyTorch does, changes nothing here."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature", FutureWarning, stacklevel=3)
    yield


cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
                       is_built=_false, sdp_kernel=_sdp_kernel)

_PRECISION = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium': how far a GPU may round float32 matmul inputs. NumPy always multiplies
    in full float32, so the setting is kept (get_float32_matmul_precision reads it) and changes no number."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _PRECISION[0] = precision


def get_float32_matmul_precision() -> str:
    return _PRECISION[0]
cudnn = SimpleNamespace(allow_tf32=True, enabled=True, benchmark=False, deterministic=False, is_available=_false)
mps = SimpleNamespace(is_available=_false, is_built=_false)
