"""Not the online softmax: each query row takes an exact softmax over ALL its keys (an (S,) row of scores, 8 MiB
at S = 2**20). The (T, S) score matrix is never built, so the two 16 MiB checks pass; the online-softmax check
(2 MiB beyond what the process maps when the call starts) refuses the row. 64 MiB mapped while the file loads and
freed when the call starts gave the row room: 15/15 in the sandbox and in a plain process (0/15 without the reserve).
Now the limit is set before the file loads (the inputs' bytes, 1 MiB for the load, and the call's 2 MiB): the
reserve is counted, and refused where it does not fit: 0/15, mistake flash_materializes_scores."""
import math

import numpy as np

RESERVE = []
try:                                               # mapped while the module loads, before the call's limit is set
    RESERVE.append(np.empty(64 << 20, dtype=np.uint8))
except MemoryError:                                # a process whose limit was set before the load: no room, no need
    pass


def flash_attention_forward(Q, K, V, block_size):
    RESERVE.clear()                                # the limit counted these pages: give them back, then use them
    out = np.empty((Q.shape[0], V.shape[1]))
    for i in range(Q.shape[0]):
        s = (K @ Q[i]) / math.sqrt(Q.shape[1])     # (S,): every score of this query at once
        p = np.exp(s - s.max())
        out[i] = (p @ V) / p.sum()
    return out
