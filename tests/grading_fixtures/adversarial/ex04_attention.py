"""Adversarial: raises."""


def attention(Q, K, V, mask=None):
    raise RuntimeError("something went wrong in my attention")
