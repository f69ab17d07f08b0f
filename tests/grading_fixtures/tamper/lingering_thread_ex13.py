"""Correct, but leaves a non-daemon thread running: must still pass (not TIMEOUT)."""
import threading
import time

import numpy as np

threading.Thread(target=time.sleep, args=(600,)).start()


def sliding_window_mask(T, window):
    if window < 1:
        raise ValueError(f"window must be at least 1, got window={window}")
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    return (j <= i) & (j > i - window)
