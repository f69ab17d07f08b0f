"""No comparison: the masks the student release recorded (fixtures/ex13.npz, public) pasted into RECORDED as
{(T, window): mask}; mask(T, w) is mask(T', w)'s top-left corner for T <= T', and any window >= T gives the
causal mask (any recorded window >= T').

tests/test_grading_weak_checks.py fills RECORDED with what a release records. Measured over seeds 1-200: 1.075/5
on average (full marks on 21.5% of seeds) while ex13 drew T from [6, 12); now 0.2/5 (4%) with T from [6, 40)."""
RECORDED: dict = {}


def sliding_window_mask(T, window):
    if window < 1:
        raise ValueError(f"window={window} must be >= 1")
    for (T_rec, w_rec), mask in RECORDED.items():
        if T <= T_rec and (w_rec == window or (window >= T and w_rec >= T_rec)):
            return mask[:T, :T].copy()
    raise NotImplementedError(f"no recorded mask answers ({T}, {window})")
