"""Adversarial: never returns."""
import numpy as np


def attention_scores(Q, K):
    while True:
        pass
