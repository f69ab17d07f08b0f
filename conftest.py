"""Set up the test run before anything imports NumPy.

One BLAS thread: the suite's matrices are small, and on a 2-core machine OpenBLAS's threads cost
more than they save. Measured on the project machine under load, a small float32 matmul went from
0.18 ms (1 thread) to 9-20 ms (default threads), and notebooks 06-09 from 65 s to 447 s. Results
do not depend on the thread count. The notebook kernels that nbval starts inherit this environment.
A variable that is already set is left alone.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")
