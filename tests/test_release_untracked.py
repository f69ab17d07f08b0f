"""The student release ships what git tracks in the instructor's repository, never an untracked file."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tinyattn.grading.release import ReleaseError
from tinyattn.grading.student import _copy_tree, _files


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


def test_an_untracked_file_never_ships(tmp_path):
    repo, out = tmp_path / "repo", tmp_path / "out"
    (repo / "tinyattn" / "grading").mkdir(parents=True)
    (repo / "tinyattn" / "__init__.py").write_text("")
    (repo / "tinyattn" / "grading" / "checkkit.py").write_text("# tracked\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "tracked")
    # what a careless instructor leaves lying around: a backup of the references, a scratch answer
    (repo / "tinyattn" / "grading" / "references_backup.py").write_text("def attention(): ...\n")
    (repo / "tinyattn" / "scratch_answer.py").write_text("ANSWER = 42\n")
    (repo / "tinyattn" / "linked.py").symlink_to(repo / "tinyattn" / "grading" / "checkkit.py")
    _git(repo, "add", "tinyattn/linked.py")           # even a tracked link is not followed into the release
    assert _files(repo) == ["tinyattn/__init__.py", "tinyattn/grading/checkkit.py"]
    copied = _copy_tree(repo, out)
    assert sorted(copied) == ["tinyattn/__init__.py", "tinyattn/grading/checkkit.py"]
    shipped = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert shipped == copied


def test_not_a_git_checkout_is_refused_by_name(tmp_path):
    (tmp_path / "tinyattn").mkdir()
    with pytest.raises(ReleaseError, match="not a git checkout"):
        _files(tmp_path)
