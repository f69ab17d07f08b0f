"""The engine's open differences (tests/engine_open_cases.py: PyTorch's behaviour, which tinyattn does not
match yet) still fail here, each on its assertion. When one passes, the engine fixed its class: move the case
into test_engine_fuzz_regressions.py and strike its row from docs/pytorch.md. (tests/oracle checks that the
same cases pass with torch in place of tinyattn.)"""
import pytest

import engine_open_cases as oc

CASES = {
    "F8: a binary op's result takes NumPy's layout": oc.test_binary_op_result_follows_the_first_operands_layout,
    "F15: unbind's unused sibling": lambda: oc.test_hook_on_an_unused_sibling_output_fires_with_none("x.unbind(0)"),
    "F15: split's unused sibling": lambda: oc.test_hook_on_an_unused_sibling_output_fires_with_none(
        "(x * 1.0).split(1)"),
}


def test_every_open_case_is_listed():
    written = {n for n in dir(oc) if n.startswith("test_")}
    assert written == {"test_binary_op_result_follows_the_first_operands_layout",
                       "test_hook_on_an_unused_sibling_output_fires_with_none"}, written


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_open_case_still_differs_from_pytorch(case):
    with pytest.raises(AssertionError):  # an assertion of PyTorch's behaviour, not a crash
        CASES[case]()
