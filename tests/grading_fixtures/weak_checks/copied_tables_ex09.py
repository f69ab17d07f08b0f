"""No formula: the tables the student release recorded (fixtures/ex09.npz, public) pasted into RECORDED as
{(T, d_model): table}, and any (T, d) read off one of them. PE(T, d) is PE(T', d')'s first T rows and every
(d' / d)-th column pair whenever T <= T' and d / 2 divides d' / 2.

tests/test_grading_weak_checks.py fills RECORDED with what a release records. Measured over seeds 1-200: 2.45/5
on average (full marks on 49% of seeds) while ex09 checked a fixed T = 128, d_model = 64; now 0.225/5 (4.5%)."""
import numpy as np

RECORDED: dict = {}


def sinusoidal_encoding(T, d_model):
    for (T_rec, d_rec), table in RECORDED.items():
        if T <= T_rec and (d_rec // 2) % (d_model // 2) == 0:
            step = d_rec // d_model
            out = np.empty((T, d_model))
            out[:, 0::2] = table[:T, 0::2][:, ::step]
            out[:, 1::2] = table[:T, 1::2][:, ::step]
            return out
    raise NotImplementedError(f"no recorded table answers ({T}, {d_model})")
