"""Shared test setup: a headless matplotlib, and global state (seed, default dtype) reset around each test."""
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tinyattn  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_global_state():
    """Each test starts from seed 0 and float32, whatever the previous test did (even if it failed)."""
    tinyattn.manual_seed(0)
    tinyattn.set_default_dtype(np.float32)
    yield
    tinyattn.set_default_dtype(np.float32)


@pytest.fixture
def float64():
    """Build everything in float64 inside the test (for finite-difference gradient checks)."""
    tinyattn.set_default_dtype(np.float64)
    yield
    tinyattn.set_default_dtype(np.float32)
