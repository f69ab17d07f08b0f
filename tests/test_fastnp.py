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


SUM_SHAPES = [(8, 128, 512), (8, 4, 16, 16), (1024, 65), (3, 5), (7,), (4, 0), (2, 1)]


def _bound(a: np.ndarray) -> float:
    """What reassociating a float sum of a's rows may change: n ulps of the row's sum of magnitudes."""
    n = max(a.shape[-1], 1) if a.ndim else 1
    return n * np.finfo(a.dtype).eps * float(np.abs(a).sum(axis=-1).max(initial=0.0))


@pytest.mark.parametrize("shape", SUM_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_last_mean_last_and_dot_last_are_numpys_sums_reassociated(shape, dtype):
    from tinyattn.fastnp import dot_last, mean_last, sum_last
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape).astype(dtype)
    exact = a.astype(np.float64).sum(axis=-1, keepdims=True)
    pairs = [(sum_last(a), exact), (dot_last(a, b), (a.astype(np.float64) * b).sum(axis=-1, keepdims=True))]
    if shape[-1]:  # (the mean of nothing is NaN with a warning, in NumPy too)
        pairs.append((mean_last(a), exact / shape[-1]))
    for got, want in pairs:
        assert got.shape == a.shape[:-1] + (1,) and got.dtype == a.dtype
        np.testing.assert_allclose(got, want, rtol=0, atol=_bound(a * b if got is pairs[1][0] else a) * 4 + 1e-300)


def test_sum_last_equals_numpy_on_the_rows_it_reads_and_leaves_other_layouts_to_numpy():
    from tinyattn.fastnp import sum_last
    a = np.random.default_rng(2).standard_normal((64, 32)).astype(np.float32)
    t = a.T  # not contiguous: NumPy's own sum, bit for bit
    np.testing.assert_array_equal(sum_last(t), t.sum(-1, keepdims=True))
    i = np.arange(64 * 32).reshape(64, 32)  # ints: NumPy's exact integer sum
    assert sum_last(i).dtype == i.sum(-1).dtype
    np.testing.assert_array_equal(sum_last(i), i.sum(-1, keepdims=True))


def test_sums_propagate_inf_and_nan_like_numpy():
    from tinyattn.fastnp import dot_last, sum_last, sum_rows
    a = np.ones((64, 16), np.float32)
    a[1, 3], a[2, 0], a[2, 5], a[3, 7] = np.inf, np.inf, -np.inf, np.nan
    with np.errstate(invalid="ignore"):  # inf - inf: NumPy's own sum warns, and so do these
        got, want = sum_last(a)[:, 0], a.sum(-1)
        np.testing.assert_array_equal(got, want)  # inf, NaN (inf - inf) and NaN where NumPy has them; 16 elsewhere
        np.testing.assert_array_equal(dot_last(a, np.ones_like(a))[:, 0], want)
        np.testing.assert_array_equal(sum_rows(a.T.copy()), want)


@pytest.mark.parametrize("shape", [(1024, 512), (64, 10), (5, 3), (0, 4), (300, 1)])
def test_sum_rows_is_the_column_sum(shape):
    from tinyattn.fastnp import sum_rows
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    got = sum_rows(a)
    assert got.shape == (shape[1],) and got.dtype == a.dtype
    bound = shape[0] * np.finfo(np.float32).eps * float(np.abs(a).sum(axis=0).max(initial=0.0)) * 4
    np.testing.assert_allclose(got, a.astype(np.float64).sum(axis=0), rtol=0, atol=bound + 1e-30)


def test_measure_sums_reports_each_shape():
    from tinyattn.fastnp import measure_sums
    rows = measure_sums(shapes=((64, 16),), number=2)
    assert [r[0] for r in rows] == [(64, 16)] and all(r[1] > 0 and r[2] > 0 for r in rows)


@pytest.mark.parametrize("dim", [-1, 2, (2,), (-1,), 0, 1, (0, 2), None])
@pytest.mark.parametrize("keepdims", [True, False])
def test_sum_along_is_numpys_sum_for_every_dim(dim, keepdims):
    from tinyattn.fastnp import sum_along
    a = np.random.default_rng(4).standard_normal((6, 7, 40)).astype(np.float32)
    want = a.astype(np.float64).sum(axis=dim, keepdims=keepdims)
    got = sum_along(a, dim, keepdims)
    assert got.shape == want.shape and got.dtype == a.dtype
    n = a.size // max(want.size, 1)  # how many numbers each output adds up
    bound = n * np.finfo(np.float32).eps * float(np.abs(a).sum(axis=dim).max())  # n ulps of the largest |sum|
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    if dim not in (-1, 2, (2,), (-1,)):  # not the last axis alone: NumPy's own sum, bit for bit
        np.testing.assert_array_equal(got, a.sum(axis=dim, keepdims=keepdims))


@pytest.mark.parametrize("shape", [(1, 2048, 128), (8, 128, 128), (1, 512, 512), (3, 37, 40), (2, 3, 64, 16), (5, 1),
                                   (96, 48)])
def test_max_down_equals_numpys_max_down_the_rows(shape):
    from tinyattn.fastnp import max_down
    a = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    a.flat[::5] = -np.inf  # masked scores
    want = a.max(axis=-2, keepdims=True)
    got = max_down(a)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    a[..., 7 % a.shape[-2], 0] = np.nan  # a NaN anywhere in a column makes that column's max NaN, as in NumPy
    assert np.array_equal(np.isnan(max_down(a)), np.isnan(a.max(axis=-2, keepdims=True)))
    assert np.isnan(max_down(a)[..., 0]).all()


@pytest.mark.parametrize("shape", [(1, 2048, 128), (8, 128, 128), (3, 37, 40), (2, 3, 64, 16), (5, 1), (1, 7)])
def test_sum_down_is_the_sum_down_the_rows(shape):
    from tinyattn.fastnp import sum_down
    a = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    want = a.astype(np.float64).sum(axis=-2, keepdims=True)
    got = sum_down(a)
    assert got.shape == want.shape and got.dtype == a.dtype
    bound = shape[-2] * np.finfo(np.float32).eps * float(np.abs(a).sum(axis=-2).max())  # n ulps of the largest |sum|
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)


@pytest.mark.parametrize("id_dtype", [np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_rows_at_is_np_add_at_bit_for_bit(id_dtype, dtype):
    """Repeated ids (a character vocabulary: each id many times), negative ids, rows of any shape, -0.0."""
    from tinyattn.fastnp import add_rows_at

    rng = np.random.default_rng(4)
    for table, ids in [((65, 128), rng.integers(0, 65, size=(8, 128))), ((7, 3, 2), rng.integers(0, 7, size=(4, 5))),
                       ((5,), np.array([0, 0, 4, 0, 2])), ((6, 4), np.zeros((0,), dtype=np.int64))]:
        ids = ids.astype(id_dtype)
        rows = rng.standard_normal(ids.shape + table[1:]).astype(dtype)
        rows.reshape(-1)[::7] = -0.0  # 0.0 + -0.0 is 0.0: the first addition must be the same one too
        expected, got = np.zeros(table, dtype), np.zeros(table, dtype)
        np.add.at(expected, ids, rows)
        add_rows_at(got, ids, rows)
        assert np.array_equal(got, expected) and np.array_equal(np.signbit(got), np.signbit(expected))
        assert not np.array_equal(np.zeros(table), got) or ids.size == 0
    expected, got = np.zeros((5, 2)), np.zeros((5, 2))
    neg, rows = np.array([-1, 4, -5, 0]), rng.standard_normal((4, 2))
    np.add.at(expected, neg, rows)
    add_rows_at(got, neg, rows)
    assert np.array_equal(got, expected)


def test_add_at_equals_np_add_at_for_any_index():
    from tinyattn.fastnp import add_at

    rng = np.random.default_rng(5)
    for idx, shape in [((np.array([0, 0, 2]), np.array([1, 1, 0])), (3,)), ((slice(None), np.array([2, 2])), (4, 2)),
                       (np.array([1, 3, 1]), (3, 3))]:
        values = rng.standard_normal(shape)
        expected, got = np.zeros((4, 3)), np.zeros((4, 3))
        np.add.at(expected, idx, values)
        add_at(got, idx, values)
        assert np.array_equal(got, expected)
    expected, got = np.zeros((4, 3)), np.asfortranarray(np.zeros((4, 3)))  # not C-ordered: NumPy's own path
    rows = rng.standard_normal((3, 3))
    np.add.at(expected, np.array([1, 1, 0]), rows)
    add_at(got, np.array([1, 1, 0]), rows)
    assert np.array_equal(got, expected)
