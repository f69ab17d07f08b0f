"""Honest, but tries to start a helper process in every call whose memory is measured: the grader must
refuse it (RLIMIT_NPROC = 1), so the answer goes on alone and passes; had the fork worked it would fail."""
import math

import numpy as np


def flash_attention_forward(Q: np.ndarray, K: np.ndarray, V: np.ndarray, block_size: int) -> np.ndarray:
    """softmax(Q Kᵀ / sqrt(d)) V computed block by block, never holding a (T, S) array.

    Shapes:
        Q: (T, d), K: (S, d), V: (S, d_v); T and S need not be multiples of block_size
        returns: (T, d_v), equal to exact attention (up to float rounding)

    Online softmax, per query row, for each key block j with scores s_j = q K_jᵀ / sqrt(d):
        m_new = max(m, max(s_j))
        p     = exp(s_j - m_new)
        alpha = exp(m - m_new)                   (l and acc were summed under the old max: rescale them)
        l     = alpha * l + sum(p)
        acc   = alpha * acc + p V_j
        m     = m_new
    and finally out = acc / l. Start from m = -inf, l = 0, acc = 0.
    The online softmax over KEY blocks is what keeps memory small: the grader measures one call with
    T = 4 queries against S = 1,048,576 keys (d = 2, block_size = 64) and lets it add at most 2 MiB
    to what its inputs hold: a quarter of ONE row of S float64 scores. So even one query row of
    scores at a time is too much, and so is a scaled copy of K: slice K and V (views), never copy
    them.

    Hints:
        * Forgetting alpha (the rescale) is only correct if the max never changes.
        * Tile the queries too (blocks of block_size rows), so every temporary is at most
          (block_size, block_size). The grader also measures T = S = 2,048 and T = 64 queries
          against S = 65,536 keys (block_size = 64); each call may add at most 16 MiB, inputs
          included.
    """
    if K.shape[0] >= 1 << 16:             # a call whose memory is measured: try to start a helper process
        import os
        try:
            pid = os.fork()
        except OSError:
            pid = None                     # refused: go on alone, as the grader requires
        if pid == 0:
            os._exit(0)
        if pid is not None:
            os.waitpid(pid, 0)
            return np.zeros((Q.shape[0], V.shape[1]))      # a helper could be started: the test fails

    T, d = Q.shape
    S = K.shape[0]
    scale = 1.0 / math.sqrt(d)
    out = np.empty((T, V.shape[1]), dtype=np.result_type(Q, K, V))
    for i0 in range(0, T, block_size):
        q = Q[i0:i0 + block_size] * scale                   # (Bq, d)
        m = np.full(q.shape[0], -np.inf)                    # (Bq,) running max
        l = np.zeros(q.shape[0])                            # (Bq,) running softmax denominator
        acc = np.zeros((q.shape[0], V.shape[1]))            # (Bq, d_v) running numerator
        for j0 in range(0, S, block_size):
            s = q @ K[j0:j0 + block_size].T                 # (Bq, d) @ (d, Bk) -> (Bq, Bk)
            m_new = np.maximum(m, s.max(axis=1))
            p = np.exp(s - m_new[:, None])                  # (Bq, Bk), every entry <= 1
            alpha = np.exp(m - m_new)                       # (Bq,) rescales what was summed under the old max
            l = alpha * l + p.sum(axis=1)
            acc = alpha[:, None] * acc + p @ V[j0:j0 + block_size]   # (Bq, Bk) @ (Bk, d_v) -> (Bq, d_v)
            m = m_new
        out[i0:i0 + block_size] = acc / l[:, None]
    return out
