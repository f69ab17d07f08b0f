"""One module per exercise, each with `run(session)`; loaded by id so a runner imports only its own."""
from __future__ import annotations

import importlib
from types import ModuleType

from ..exercises import get


def load(ex_id: str) -> ModuleType:
    """The checks module of exercise `ex_id` (e.g. tinyattn.grading.checks.ex04_attention).

    Also points the oracle at this exercise's recorded answers (used where there are no references)."""
    from .. import oracle
    oracle.use_exercise(get(ex_id).id)
    return importlib.import_module(f"{__name__}.{get(ex_id).filename[:-3]}")
