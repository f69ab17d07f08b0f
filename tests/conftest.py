"""Shared test setup: a headless matplotlib, and global state (seed, default dtype) reset around each test."""
import os
from pathlib import Path

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


ROOT = Path(__file__).resolve().parents[1]
SHIPPED_STUBS = ROOT / "tests" / "data" / "stubs"     # a student release's copy (tinyattn release --student)


@pytest.fixture(scope="session")
def shipped_stubs(tmp_path_factory):
    """A folder holding the exercise stubs as shipped, whatever a learner has written in exercises/.

    exercises/ is the learner's working copy: a test that needs untouched stubs reads these, so
    `python -m pytest` still passes once a learner has solved an exercise. The instructor's copy
    generates them from solutions/; a student release carries them in tests/data/stubs/.
    """
    if (ROOT / "solutions").is_dir():
        from tinyattn.grading.release import planned
        out = tmp_path_factory.mktemp("stubs") / "exercises"
        out.mkdir()
        for rel, text in planned(ROOT / "solutions").items():
            if rel.endswith(".py"):
                (out / rel).write_text(text, encoding="utf-8")
        return out
    assert SHIPPED_STUBS.is_dir(), f"{SHIPPED_STUBS} is missing: rebuild the student release"
    return SHIPPED_STUBS
