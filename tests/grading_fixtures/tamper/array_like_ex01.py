"""Tamper: an object that is not an array but pretends to be one through __array__ and friends."""
import numpy as np


class Fake:
    shape = (1, 1)
    dtype = np.dtype(float)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("you should never call me")

    def __eq__(self, other):
        return True


def attention_scores(Q, K):
    return Fake()
