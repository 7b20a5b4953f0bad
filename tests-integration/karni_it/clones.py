"""Throwaway git clones of the repository, for testing the scripts that act on a checkout.

A clone holds the repository's history plus the current working tree
committed on top, so the scripts under test are the ones on disk. Its
``.venv`` is a link to the workspace's, so nothing is installed; commits and
tags made in a clone never reach the real checkout.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from karni_it.workspace import ROOT

GIT_ID = ["-c", "user.name=Integration Test", "-c", "user.email=integration@example.invalid"]


def git(repo: Path, *args: str) -> str:
    """Run ``git args`` in ``repo``; its stdout, or an assertion naming the failure."""
    result = subprocess.run(
        ["git", *GIT_ID, *args], cwd=repo, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"git {args}: {result.stderr}"
    return result.stdout


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


def status(repo: Path) -> str:
    """``git status --porcelain``: empty for a clean tree."""
    return git(repo, "status", "--porcelain")


def working_tree_template(folder: Path) -> Path:
    """Clone the repository into ``folder/repo`` and commit the working tree on top."""
    repo = folder / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        relative = raw.decode()
        source, target = ROOT / relative, repo / relative
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        elif target.exists():
            target.unlink()
    commit_all(repo, "working tree under test")
    return repo


def clone_of(template: Path, folder: Path) -> Path:
    """A fresh clone of ``template`` in ``folder/repo``; its ``.venv`` links to the workspace's."""
    repo = folder / "repo"
    subprocess.run(["git", "clone", "-q", str(template), str(repo)], check=True)
    (repo / ".venv").symlink_to(ROOT / ".venv")
    # `.venv/` in .gitignore matches directories only, not this link.
    with (repo / ".git/info/exclude").open("a") as exclude:
        exclude.write("/.venv\n")
    return repo
