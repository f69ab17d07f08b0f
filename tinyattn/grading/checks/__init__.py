"""One module per exercise, each with `run(session)`; loaded by id so a runner imports only its own."""
from __future__ import annotations

import importlib
from types import ModuleType

from ..exercises import get


def load(ex_id: str) -> ModuleType:
    """The checks module of exercise `ex_id` (e.g. tinyattn.grading.checks.ex04_attention)."""
    return importlib.import_module(f"{__name__}.{get(ex_id).filename[:-3]}")
