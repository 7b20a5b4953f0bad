"""The few git questions a release asks: is the tree clean, what was released, what changed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from release_tools.versions import VersionError, parse


class GitError(Exception):
    """A git command failed."""


def git(root: Path, *args: str) -> str:
    """Run ``git args`` in ``root`` and return its stdout; raise GitError on failure."""
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise GitError(f"`git {' '.join(args)}` failed: {result.stderr.strip()}")
    return result.stdout


def dirty_paths(root: Path) -> list[str]:
    """Changed, staged or untracked (not ignored) paths; empty for a clean tree."""
    return [line[3:] for line in git(root, "status", "--porcelain").splitlines() if line]


def released_versions(root: Path, tag_prefix: str) -> list[str]:
    """Versions tagged ``<tag_prefix><version>``, oldest first (other tags ignored)."""
    versions = []
    for tag in git(root, "tag", "--list", f"{tag_prefix}*").split():
        version = tag.removeprefix(tag_prefix)
        try:
            parse(version)
        except VersionError:
            continue
        versions.append(version)
    return sorted(versions, key=parse)


def changed_since(root: Path, ref: str, folder: Path) -> bool:
    """Has anything under ``folder`` changed between ``ref`` and HEAD?"""
    result = subprocess.run(
        ["git", "diff", "--quiet", ref, "HEAD", "--", str(folder.relative_to(root))],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return result.returncode != 0


def export(root: Path, ref: str, destination: Path) -> None:
    """Write the tree at ``ref`` into ``destination`` (``git archive``; no git state changes)."""
    destination.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=root, capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise GitError(f"`git archive {ref}` failed: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive.stdout, check=True)
