"""Adversarial: a hard-coded answer (right only for T = 4, window = 2)."""
import numpy as np


def sliding_window_mask(T, window):
    return np.array([[True, False, False, False],
                     [True, True, False, False],
                     [False, True, True, False],
                     [False, False, True, True]])
