"""tinyattn.fastnp: the fast helpers give exactly NumPy's numbers."""
import numpy as np
import pytest

from tinyattn.fastnp import max_keepdims, measure


@pytest.mark.parametrize("shape,axis", [((4096, 16), -1), ((8, 4, 64, 32), 3), ((64, 10), -1), ((5, 33), -1),
                                        ((16, 2), 1), ((7, 5), 0), ((3,), 0), ((0, 4), -1)])
def test_max_keepdims_equals_numpys_max(shape, axis):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if a.size:
        a.flat[::7] = -np.inf  # masked scores
    want = a.max(axis=axis, keepdims=True)
    got = max_keepdims(a, axis)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_max_keepdims_propagates_nan_like_numpy():
    a = np.zeros((64, 8))
    a[3, 5] = np.nan
    got = max_keepdims(a, -1)
    assert np.isnan(got[3, 0]) and np.isnan(got).sum() == 1


def test_measure_reports_each_shape():
    rows = measure(shapes=((64, 16),), number=2)
    assert [r[0] for r in rows] == [(64, 16)] and all(r[1] > 0 and r[2] > 0 for r in rows)


def _keeps_in_fresh_process(**env):
    import os
    import subprocess
    import sys
    full = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "TINYATTN_KEEP_FREED_MEMORY"}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", "import tinyattn.fastnp as f; print(f.KEEPS_FREED_MEMORY)"],
                         capture_output=True, text=True, env=full, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_keep_freed_memory_is_on_by_default_on_glibc_and_can_be_turned_off():
    import platform
    on_glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
    assert _keeps_in_fresh_process() == str(on_glibc)
    assert _keeps_in_fresh_process(TINYATTN_KEEP_FREED_MEMORY="0") == "False"
    assert _keeps_in_fresh_process(MALLOC_TRIM_THRESHOLD_="1000000") == "False"  # the user's own tuning wins
