"""Who shared each history file, as git says: the author of the commit that last changed it.

A shared file's own text could name anyone, so attribution never comes
from it (``docs/how-to/team-history.md``). ``git log`` over
``.karni/history/`` gives, newest first, each commit's author and the files
it changed; a file's author is that of the first commit naming it. A file
git does not know, or one changed since its last commit, is the local
user's (it is on their disk, not yet anyone else's), and so is a file whose
author's e-mail is the local user's. Outside git every file is the local
user's. Git runs with optional locks and the file system monitor off, so
reading never writes the repository's index nor starts another program.
"""

from __future__ import annotations

import os
import subprocess

from karni_historian.shared_folder import HISTORY_FOLDER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Author", "file_authors"]

Author = tuple[str, str, str]
"""``(name, e-mail, ISO 8601 date)`` of a commit's author."""

_TIMEOUT = 20.0
_PATHSPEC = "/".join(HISTORY_FOLDER)


def _git(root: str, *arguments: str) -> str | None:
    """``git ARGUMENTS`` run in ``root``: its output, or None when git fails or is missing."""
    command = ["git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-C", root, *arguments]
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def _committed(log: str) -> dict[str, Author]:
    """File name → the author of the newest commit that changed it, from ``git log`` text."""
    found: dict[str, Author] = {}
    for record in log.split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        fields = head.split("\x1f")
        if len(fields) != 3:
            continue
        for line in names.splitlines():
            name = line.strip().rsplit("/", 1)[-1]
            if name and name not in found:
                found[name] = (fields[0], fields[1], fields[2])
    return found


def _uncommitted(status: str) -> set[str]:
    """The names git reports as new or changed (``git status --porcelain -z``)."""
    names = set()
    for entry in status.split("\0"):
        if len(entry) > 3:
            names.add(entry[3:].rsplit("/", 1)[-1])
    return names


def file_authors(root: str, names: Sequence[str]) -> dict[str, Author | None]:
    """Each of ``names`` (files in the history folder) → its author, or None for the local user."""
    authors: dict[str, Author | None] = dict.fromkeys(names)
    log = _git(
        root,
        "log",
        "--no-renames",
        "--format=%x1e%an%x1f%ae%x1f%aI",
        "--name-only",
        "--",
        _PATHSPEC,
    )
    if log is None:
        return authors
    status = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", _PATHSPEC)
    changed = _uncommitted(status or "")
    local = (_git(root, "config", "user.email") or "").strip().lower()
    committed = _committed(log)
    for name in names:
        author = committed.get(name)
        if author is None or name in changed or (local and author[1].strip().lower() == local):
            continue
        authors[name] = author
    return authors
