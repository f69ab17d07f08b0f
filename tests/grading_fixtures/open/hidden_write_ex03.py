"""OPEN (not collected by any test): apply_mask writes -inf into the caller's scores and returns that buffer, and
hides it by patching np.array_equal, which the learner's own process uses to report which inputs a call changed.
Measured: full marks (5/5), where the same code without the patch earns 0 on apply_mask (modifies_input).
The inputs are the learner process's own copies, so what a call does to them is seen only by that process;
in a confined exercise (ex02, ex05, ex06, ex10) the learner's code can not reach that process's NumPy."""
import numpy as np

np.array_equal = lambda *a, **k: True          # the learner's process reports mutations with this


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool))


def apply_mask(scores, mask):
    np.copyto(scores, -np.inf, where=~np.broadcast_to(mask, scores.shape))
    return scores
