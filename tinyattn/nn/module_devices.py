"""Module's device and dtype moves beside ``to`` (``cpu``, ``cuda``, ``half``, ``bfloat16``, ``type``) and
``requires_grad_`` (freezing a module, as fine-tuning lessons do).

NumPy is the only device, so ``cpu()`` returns the module unchanged (the same Parameter objects, as
PyTorch's ``cpu()`` on a CPU module), and ``cuda()`` fails the way a CPU-only PyTorch build does: through
each parameter's own ``Tensor.cuda`` (one rule, kept there), so a module that holds no tensor moves
without error, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from tinyattn.tensor import Tensor


class DeviceMoves:
    """Mixed into ``nn.Module``; ``parameters``, ``modules``, ``to`` and ``_register`` come from it."""

    def cpu(self):
        """The module itself: its tensors already live in NumPy's (CPU) memory."""
        return self

    def cuda(self, device=None):
        """A CPU-only build's error from the first parameter or buffer (``Tensor.cuda``); self if there is none."""
        for t in self._held_tensors():
            t.cuda() if device is None else t.cuda(device)
        return self

    def half(self):
        """Floating parameters and buffers to float16 (integer buffers keep their dtype), as ``to(float16)``."""
        return self.to(np.float16)

    def bfloat16(self):
        """As ``to(bfloat16)``: NumPy has no bfloat16, so this raises tinyattn's dtype error naming the way out."""
        from tinyattn import bfloat16
        return self.to(bfloat16)

    def type(self, dst_type):
        """EVERY parameter and buffer cast to ``dst_type`` (a dtype or a name such as 'torch.DoubleTensor'),
        integer buffers included (BatchNorm's count becomes float64 under ``type(float64)``), as PyTorch.
        A parameter that needs gradients can not become an integer tensor: PyTorch's RuntimeError."""
        for p in self.parameters():
            new = Tensor.type(p, dst_type)
            if new.dtype.kind not in "fc" and p.requires_grad:
                raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
            p._data = new._data
            if p.grad is not None:
                p.grad._data = Tensor.type(p.grad, dst_type)._data
        for m in self.modules():
            for name, b in list(m._buffers.items()):
                if isinstance(b, Tensor):
                    m._register("_buffers", name, Tensor(Tensor.type(b, dst_type)._data))
        return self

    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` on every parameter (freeze with False); returns self, as PyTorch."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def _held_tensors(self):
        yield from self.parameters()
        for m in self.modules():
            yield from (b for b in m._buffers.values() if isinstance(b, Tensor))
