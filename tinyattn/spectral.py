"""torch.stft: the short-time Fourier transform of a 1-D signal or a (B, L) batch, with PyTorch's arguments.

A speech model's front end computes ``torch.stft(audio, 400, 160, window=torch.hann_window(400),
return_complex=True)``, then ``stft[..., :-1].abs() ** 2`` and a mel filter bank. Here the frames are cut
with ``unfold``, windowed, and multiplied by the DFT's cosine and sine tables (a matrix product, not an
FFT), so the result is differentiable through the ops it is made of; values agree with PyTorch's FFT
to rounding (float32 ~1e-6 relative, float64 ~1e-15).
"""
from __future__ import annotations

import warnings

import numpy as np

from .tensor import Tensor

__all__ = ["stft"]


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None, align_to_window=None) -> Tensor:
    """-> (n_freq, n_frames) or (B, n_freq, n_frames), complex; n_freq = n_fft // 2 + 1 when onesided
    (the default for a real signal), n_fft otherwise; n_frames = 1 + (L' - n_fft) // hop_length where
    L' = L + 2 (n_fft // 2) when centred. ``return_complex=False`` gives (..., 2) real and imaginary parts."""
    from .compat.complex import complex as make_complex
    from .functions import stack
    from .nn import functional as F
    x = input if isinstance(input, Tensor) else Tensor(input)
    if x.dtype.kind == "c":
        raise NotImplementedError("stft: complex input is not supported here; pass a real signal")
    if return_complex is None:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor (signal (L,) or batch (B, L)), got shape {tuple(x.shape)}")
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if not 0 < win <= n_fft or hop <= 0:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft and hop_length > 0, got n_fft={n_fft}, "
                           f"hop_length={hop}, win_length={win}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
        w = np.ones(win, dtype=x._data.dtype)
    else:
        w = np.asarray(window._data if isinstance(window, Tensor) else window)
        if w.shape != (win,):
            raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win}, but got window "
                               f"with size {list(w.shape)}")
    left = (n_fft - win) // 2
    w = np.pad(w, (left, n_fft - win - left)).astype(x._data.dtype)  # centred in n_fft, as PyTorch pads it
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.", UserWarning,
                      stacklevel=2)
    batch = x if x.ndim == 2 else x.unsqueeze(0)  # (B, L)
    if center:
        p = n_fft // 2
        if pad_mode == "reflect" and p >= batch.shape[-1]:
            raise RuntimeError(f"stft: reflect padding of {p} needs a signal longer than {p}, got {batch.shape[-1]}")
        batch = F.pad(batch.unsqueeze(1), (p, p), mode=pad_mode).squeeze(1)
    if batch.shape[-1] < n_fft:
        raise RuntimeError(f"stft: the signal ({batch.shape[-1]} samples after padding) is shorter than n_fft={n_fft}")
    frames = batch.unfold(-1, n_fft, hop) * Tensor(w)  # (B, n_frames, n_fft)
    n_freq = n_fft // 2 + 1 if onesided is None or onesided else n_fft
    angle = 2 * np.pi * np.outer(np.arange(n_fft), np.arange(n_freq)) / n_fft  # (n_fft, n_freq)
    scale = n_fft ** -0.5 if normalized else 1.0
    re = frames @ Tensor((np.cos(angle) * scale).astype(x._data.dtype))   # (B, n_frames, n_freq)
    im = frames @ Tensor((-np.sin(angle) * scale).astype(x._data.dtype))  # e^{-i angle}
    out = (stack([re, im], -1) if not return_complex else make_complex(re, im)).transpose(1, 2)
    return out if x.ndim == 2 else out.squeeze(0)  # (B, n_freq, n_frames[, 2])
