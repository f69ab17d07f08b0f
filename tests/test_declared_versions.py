"""The versions pyproject.toml says tinyattn works with are the ones CI runs the whole suite on.

pyproject.toml's lower bounds (Python, NumPy, matplotlib, tqdm) are a promise to everyone who installs
tinyattn into an environment they already have; .ci/run keeps it by running the suite with exactly those
versions. This test fails when one is changed without the other.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _release(text: str) -> tuple[int, ...]:
    """'2.0', '2.0.*' or '4.60.0' as a tuple of ints with trailing zeros dropped: (2,), (2,), (4, 60)."""
    parts = [int(p) for p in text.rstrip(".*").split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _declared() -> dict[str, tuple[int, ...]]:
    # (read with a regex: tomllib is Python 3.11's, and this runs on 3.10 too)
    text = (ROOT / "pyproject.toml").read_text()
    out = {"python": _release(re.search(r'^requires-python = ">=\s*([\d.]+)"', text, re.M).group(1))}
    for dep in ast.literal_eval(re.search(r"^dependencies = (\[.*\])", text, re.M).group(1)):
        name, low = re.fullmatch(r"([A-Za-z0-9_-]+)>=([\d.]+)", dep).groups()
        out[name] = _release(low)
    return out


def _oldest_stage() -> dict[str, tuple[int, ...]]:
    """The first (oldest) 'VERSION|pins' entry of .ci/run's loop over Pythons."""
    stages = re.findall(r'"(\d+\.\d+)\|([^"]*)"', (ROOT / ".ci" / "run").read_text())
    assert stages, ".ci/run has no stage of the form \"3.10|numpy==... \""
    version, pins = stages[0]
    out = {"python": _release(version)}
    for pin in pins.split():
        name, exact = re.fullmatch(r"([A-Za-z0-9_-]+)==([\d.*]+)", pin).groups()
        out[name] = _release(exact)
    return out


def test_ci_runs_the_lowest_versions_pyproject_declares():
    declared, tested = _declared(), _oldest_stage()
    assert set(declared) == set(tested), (declared, tested)
    for name, low in declared.items():
        assert tested[name] == low, f"{name}: pyproject.toml allows >= {low}, the oldest CI stage runs {tested[name]}"


def test_release_parses_what_the_two_files_write():
    assert _release("2.0") == _release("2.0.*") == (2,)
    assert _release("4.60.0") == _release("4.60") == (4, 60)
    assert _release("3.8.4") == (3, 8, 4) != _release("3.8")
