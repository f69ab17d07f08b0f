"""``tinyattn.multiprocessing``: ``import torch.multiprocessing as mp`` for code that also runs as one process.

PyTorch's module is Python's ``multiprocessing`` plus ``spawn``. Here the stdlib names are the stdlib's
own (NumPy arrays, and so tensors, pickle across processes as they are). ``spawn(fn, args, nprocs=1)``
calls ``fn(0, *args)`` in this process: the one-process answer a training script's ``mp.spawn(train,
nprocs=world_size)`` needs when the world is one CPU. More than one process raises: tinyattn has no
process group to join them (``tinyattn.distributed``).
"""
from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403  (torch.multiprocessing re-exports the stdlib's names)
from typing import Any, Callable

__all__ = list(_mp.__all__) + ["spawn"]


def spawn(fn: Callable[..., Any], args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> None:
    """Run ``fn(0, *args)`` here, as process 0 of 1; returns None, as PyTorch's spawn with ``join=True``."""
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs != 1:
        raise RuntimeError(f"spawn: nprocs={nprocs!r}, but tinyattn trains in one process and has no process "
                           "group to join several; use nprocs=1 (fn runs here as fn(0, *args))")
    if not join:
        raise RuntimeError("spawn: join=False returns a ProcessContext to wait on in PyTorch; tinyattn runs fn "
                           "here and has none to return, so use join=True")
    fn(0, *tuple(args))
