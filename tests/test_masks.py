"""tinyattn.masks: each mask against its definition, element by element, and its errors."""
import numpy as np
import pytest

from tinyattn.masks import causal_mask, padding_mask, sliding_window_mask


def _by_rule(T, S, rule):
    """The mask written the slow, obvious way: one (i, j) at a time."""
    return np.array([[rule(i, j) for j in range(S)] for i in range(T)], dtype=bool)


@pytest.mark.parametrize("T,S", [(1, 1), (5, 5), (3, 7), (6, 2)])
def test_causal_mask_is_bottom_right_aligned(T, S):
    m = causal_mask(T, S)
    assert m.dtype == bool and m.shape == (T, S)
    np.testing.assert_array_equal(m, _by_rule(T, S, lambda i, j: j <= i + S - T))


def test_causal_mask_square_is_lower_triangle():
    np.testing.assert_array_equal(causal_mask(6), np.tril(np.ones((6, 6), dtype=bool)))
    # one decoding step over 4 cached keys: the new token sees all of them
    np.testing.assert_array_equal(causal_mask(1, 4), np.ones((1, 4), dtype=bool))


def test_padding_mask_marks_real_tokens():
    m = padding_mask([2, 4, 0], 4)
    assert m.dtype == bool and m.shape == (3, 1, 1, 4)
    np.testing.assert_array_equal(m[:, 0, 0], [[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    np.testing.assert_array_equal(padding_mask(np.array([3]), 3)[0, 0, 0], [True, True, True])


@pytest.mark.parametrize("T,window", [(7, 1), (7, 3), (5, 5), (4, 9)])
def test_sliding_window_causal(T, window):
    m = sliding_window_mask(T, window)
    np.testing.assert_array_equal(m, _by_rule(T, T, lambda i, j: i - window < j <= i))
    # each query sees itself and at most window-1 earlier keys
    np.testing.assert_array_equal(m.sum(1), np.minimum(np.arange(T) + 1, window))


@pytest.mark.parametrize("T,window", [(7, 1), (7, 3), (4, 9)])
def test_sliding_window_bidirectional(T, window):
    m = sliding_window_mask(T, window, causal=False)
    np.testing.assert_array_equal(m, _by_rule(T, T, lambda i, j: abs(i - j) < window))
    np.testing.assert_array_equal(m, m.T)


def test_sliding_window_wider_than_sequence_is_causal():
    np.testing.assert_array_equal(sliding_window_mask(6, 6), causal_mask(6))


def test_sliding_window_with_more_keys_is_bottom_right():
    m = sliding_window_mask(2, 3, causal=True, S=5)  # the last 2 of 5 positions
    np.testing.assert_array_equal(m, _by_rule(2, 5, lambda i, j: (i + 3) - 3 < j <= i + 3))


def test_mask_errors_name_the_numbers():
    with pytest.raises(ValueError, match="T=0"):
        causal_mask(0)
    with pytest.raises(ValueError, match="S=-2"):
        causal_mask(3, -2)
    with pytest.raises(TypeError, match=r"causal_mask: T must be a positive int, got T=2.5 \(float\)"):
        causal_mask(2.5)
    with pytest.raises(ValueError, match="window=0"):
        sliding_window_mask(4, 0)
    with pytest.raises(ValueError, match=r"lengths must be <= T=3, got lengths=\[2, 5\]"):
        padding_mask([2, 5], 3)
    with pytest.raises(ValueError, match=r"1-D.*\(2, 1\)"):
        padding_mask([[1], [2]], 3)
    with pytest.raises(TypeError, match="integers"):
        padding_mask([1.5], 3)
