"""The README is a newcomer's entry point: within its budget, and every command, flag, path, link and
count it states exists. (What a command prints is tested where the command lives.)"""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

# The repository's README: a student release writes a README of its own, so these are the instructor's tests.
pytestmark = pytest.mark.instructor

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", ROOT / "docs" / "pytorch.md", ROOT / "docs" / "instructors.md",
         ROOT / "benchmarks" / "README.md"]
WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                    "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def _bash_blocks(text: str) -> list[list[str]]:
    return [[ln for ln in block.splitlines() if ln.strip()] for block in re.findall(r"```bash\n(.*?)```", text, re.S)]


def _tinyattn_commands(text: str) -> list[list[str]]:
    """Every `tinyattn SUB ...` command line in the bash blocks (after `&&`, comments dropped)."""
    found = []
    for block in _bash_blocks(text):
        for line in block:
            for part in line.split("#")[0].split("&&"):
                words = shlex.split(part.replace("\\", ""))
                if words[:1] == ["tinyattn"]:
                    found.append(words)
    return found


def test_the_readme_fits_its_budget():
    assert len(README) <= 12_000, f"README.md has {len(README)} characters; the budget is 12,000"


def test_the_quickstart_is_one_bash_block_of_two_commands_demo_then_the_tests():
    section = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = _bash_blocks(section)
    assert len(blocks) == 1 and len(blocks[0]) == 2, blocks
    first, second = blocks[0]
    assert first.endswith("tinyattn demo") and second.endswith("python -m pytest")
    assert "--quick" in section  # the shorter demo is named where the time is


@pytest.mark.parametrize("words", _tinyattn_commands(README), ids=lambda w: " ".join(w[:2]))
def test_every_tinyattn_command_in_the_readme_exists_with_its_flags(words):
    sub = words[1]
    run = subprocess.run([sys.executable, "-m", "tinyattn", sub, "--help"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert run.returncode == 0, f"`tinyattn {sub}` is not a command: {run.stderr[-500:]}"
    for flag in (w.split("=")[0] for w in words[2:] if w.startswith("--")):
        assert flag in run.stdout, f"`tinyattn {sub} --help` does not list {flag}"


def test_commands_named_inline_exist_too():
    subs = set(re.findall(r"`tinyattn (\w+)", README))
    run = subprocess.run([sys.executable, "-m", "tinyattn", "--help"], capture_output=True, text=True, timeout=120)
    assert subs and all(re.search(rf"\b{s}\b", run.stdout) for s in subs), (subs, run.stdout)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_that_exists(page):
    text = page.read_text(encoding="utf-8")
    links = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]
    assert links or page.name != "README.md"
    missing = [t for t in links if t and not (page.parent / t).exists()]
    assert not missing, f"{page.name} links to files that do not exist: {missing}"


def test_the_counts_match_the_course():
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    exercises = sorted((ROOT / "exercises").glob("ex[0-9][0-9]_*.py"))
    stated = re.search(r"(\w+) notebooks walk", README).group(1).lower()
    assert WORDS[stated] == len(notebooks), (stated, len(notebooks))
    stated = re.search(r"(\w+) graded exercises", README).group(1).lower()
    assert WORDS[stated] == len(exercises), (stated, len(exercises))
    table = set(re.findall(r"\(notebooks/(\d\d_\w+)\.ipynb\)", README))
    assert table == {p.stem for p in notebooks}, "the course table lists every notebook, once"


def test_every_path_in_the_code_map_exists():
    tree = README.split("## Where the code lives", 1)[1]
    block = re.search(r"```\n(.*?)```", tree, re.S).group(1)
    folder = None
    for line in block.splitlines():
        name = line.split()[0] if line.strip() else ""
        if not line.startswith(" "):
            folder = ROOT
        for entry in re.findall(r"(?:^|\s|, |: )([\w/]+(?:\.py|/))", line):
            assert (folder / entry).exists() or (ROOT / entry).exists(), f"the code map names {entry}, which is missing"
        if name.endswith("/") and not line.startswith(" "):
            folder = ROOT / name
