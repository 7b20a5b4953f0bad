"""Who shared each history file, as git says: the author of the commit that last changed it.

A shared file's own text could name anyone, so attribution never comes
from it (``docs/how-to/team-history.md``). ``git log`` over
``.karni/history/`` gives, newest first, each commit's author and the files
it changed; a file's author is that of the first commit naming it, and the
log is stopped as soon as every file has one. A file
git does not know, or one changed since its last commit, is the local
user's (it is on their disk, not yet anyone else's), and so is a file whose
author's e-mail is the local user's. Outside git every file is the local
user's. Git runs with optional locks and the file system monitor off, so
reading never writes the repository's index nor starts another program.
"""

from __future__ import annotations

import os
import subprocess
import threading

from karni_historian.shared_folder import HISTORY_FOLDER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Author", "file_authors"]

Author = tuple[str, str, str]
"""``(name, e-mail, ISO 8601 date)`` of a commit's author."""

_TIMEOUT = 20.0
_PATHSPEC = "/".join(HISTORY_FOLDER)


def _command(root: str, *arguments: str) -> list[str]:
    return ["git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-C", root, *arguments]


_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def _git(root: str, *arguments: str) -> str | None:
    """``git ARGUMENTS`` run in ``root``: its output, or None when git fails or is missing."""
    try:
        done = subprocess.run(
            _command(root, *arguments),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
            env={**os.environ, **_ENV},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def _committed(root: str, wanted: set[str]) -> dict[str, Author] | None:
    """Each wanted file name → the author of the newest commit that changed it (``git log``).

    The log is read newest first and stopped once every wanted name has its
    commit, so a long history is not walked to its start. None outside git.
    """
    found: dict[str, Author] = {}
    command = _command(
        root,
        "log",
        "--no-renames",
        "--format=%x1e%an%x1f%ae%x1f%aI",
        "--name-only",
        "--",
        _PATHSPEC,
    )
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **_ENV},
        )
    except OSError:
        return None
    assert process.stdout is not None
    author: Author | None = None
    timer = threading.Timer(_TIMEOUT, process.kill)  # a git that hangs is stopped
    timer.start()
    with process:
        for raw in process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith("\x1e"):
                fields = line[1:].split("\x1f")
                author = (fields[0], fields[1], fields[2]) if len(fields) == 3 else None
                continue
            name = line.strip().rsplit("/", 1)[-1]
            if author is not None and name in wanted and name not in found:
                found[name] = author
                if len(found) == len(wanted):
                    process.kill()
                    break
        stopped = len(found) == len(wanted)
    timer.cancel()
    if not stopped and process.returncode != 0:
        return None
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
    committed = _committed(root, set(names))
    if committed is None:
        return authors
    status = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", _PATHSPEC)
    changed = _uncommitted(status or "")
    local = (_git(root, "config", "user.email") or "").strip().lower()
    for name in names:
        author = committed.get(name)
        if author is None or name in changed or (local and author[1].strip().lower() == local):
            continue
        authors[name] = author
    return authors
