"""tinyattn.blas: setting the BLAS thread count after NumPy is loaded (the notebooks' setup)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tinyattn import blas


@pytest.fixture
def restore_threads():
    before = blas.get_num_threads()
    yield before
    if before is not None:
        blas.set_num_threads(before)


def test_set_num_threads_changes_what_the_blas_reports(restore_threads):
    if restore_threads is None:                      # Accelerate / MKL without threadpoolctl: a stated no-op
        assert blas.set_num_threads(2) is None
        return
    for n in (2, 1, 3):
        assert blas.set_num_threads(n) == n
        assert blas.get_num_threads() == n
    a = np.random.default_rng(0).standard_normal((64, 64))
    np.testing.assert_allclose(a @ np.eye(64), a)     # the BLAS still computes after the change


@pytest.mark.parametrize("bad,error", [(0, ValueError), (-1, ValueError), (1.5, TypeError), ("2", TypeError),
                                       (True, TypeError)])
def test_set_num_threads_rejects_what_is_not_a_positive_int(bad, error):
    with pytest.raises(error, match=f"set_num_threads: n must be a positive int, got n={bad!r}"):
        blas.set_num_threads(bad)


def _course_threads_in_fresh_python(env_extra: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(env_extra)
    code = "import numpy; from tinyattn import blas; print(blas.get_num_threads(), blas.course_threads())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()


def test_course_threads_is_one_by_default_and_the_environment_wins():
    before, after = _course_threads_in_fresh_python({})
    if after == "None":
        assert before == "None"
        return
    assert after == "1"                               # numpy was already imported: set at run time
    assert _course_threads_in_fresh_python({"OPENBLAS_NUM_THREADS": "2"}) == ["2", "2"]
