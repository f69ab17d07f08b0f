"""``tinyattn.distributed``: PyTorch's process-group names, for code that also runs as one process.

Training scripts import ``init_process_group`` and ``destroy_process_group`` at the top and call
them only under ``torchrun`` (when the ``RANK`` environment variable is set). tinyattn trains in
one process, so the names import, ``is_available()`` and ``is_initialized()`` are False, and
every call that needs a process group raises the error PyTorch raises when none was made.
"""
from __future__ import annotations

import enum
from typing import Any

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "all_reduce", "all_gather", "all_gather_into_tensor", "broadcast", "ReduceOp",
           "send", "recv", "reduce_scatter_tensor", "reduce_op"]

_NO_GROUP = ("Default process group has not been initialized, please make sure to call init_process_group. "
             "(tinyattn runs in one process: there is no process group to make)")


def is_available() -> bool:
    """False: this build has no multi-process support (PyTorch's answer when built without it)."""
    return False


def is_initialized() -> bool:
    return False


def init_process_group(backend: str | None = None, *args: Any, **kwargs: Any) -> None:
    raise RuntimeError(f"init_process_group(backend={backend!r}): tinyattn trains in one process and has no "
                       "distributed backend; run the script without torchrun (unset RANK) to train on one CPU")


def _needs_group(name: str):
    def call(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"{name}: {_NO_GROUP}")
    call.__name__ = name
    call.__doc__ = f"Raises, as PyTorch's {name} does when no process group was initialized."
    return call


destroy_process_group = _needs_group("destroy_process_group")
get_rank = _needs_group("get_rank")
get_world_size = _needs_group("get_world_size")
barrier = _needs_group("barrier")
all_reduce = _needs_group("all_reduce")
all_gather = _needs_group("all_gather")
all_gather_into_tensor = _needs_group("all_gather_into_tensor")
broadcast = _needs_group("broadcast")
send = _needs_group("send")
recv = _needs_group("recv")
reduce_scatter_tensor = _needs_group("reduce_scatter_tensor")


class ReduceOp(enum.IntEnum):
    """How all_reduce combines the processes' tensors (``op=dist.ReduceOp.SUM``): PyTorch's names and values."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


reduce_op = ReduceOp  # PyTorch's deprecated name for it
