"""What the shared history folder holds, in one cheap look: the brief's freshness check.

``karni context --with-history`` runs before every edit, and the shared
history under ``.karni/history/`` must be in the store's index before the
brief reads it. This module says, with one directory listing, one
``lstat`` per entry and two small reads of git's ``HEAD``, whether anything
changed since the index was last refreshed: :func:`fingerprint` is compared
with the one the store keeps. A commit or a pull moves ``HEAD``, which can
change who a file is attributed to, so ``HEAD`` is part of it.

Before that, :func:`folder_stamp` looks at the folder alone: adding,
removing or replacing a file (as ``share``, ``git pull``, ``git checkout``
and ``git rm`` do, by creating or renaming) changes the folder's own
modification time, so an unchanged stamp taken well after the folder last
changed (:func:`settled_stamp`) spares the brief the per-file look. A file
edited in place by hand changes no stamp; the next commit, pull or
``karni-historian ingest`` sees it. Nothing here
imports more than :mod:`os` and :mod:`stat`, and it lives outside ``ingest/``
so that the brief does not load the readers to run it.
"""

from __future__ import annotations

import os
import stat

__all__ = [
    "HISTORY_FOLDER",
    "Entry",
    "fingerprint",
    "folder_stamp",
    "git_head",
    "history_folder",
    "listing",
    "settled_stamp",
]

HISTORY_FOLDER = (".karni", "history")
"""The shared history's folder, relative to the project root."""

Entry = tuple[str, int, int, str]
"""``(name, size, mtime_ns, kind)`` of an entry; kind is ``file``, ``link`` or ``other``."""

_MAX_HEAD_BYTES = 4096
_SETTLED_NS = 3_000_000_000
"""How long before a refresh the folder must have last changed for its stamp to be trusted.

A coarse clock (a second, or two on FAT) could give a change made just after
the refresh the same modification time as the folder the refresh read.
"""


def history_folder(root: str | os.PathLike[str]) -> str:
    """The shared history folder of the project at ``root``."""
    return os.path.join(os.fspath(root), *HISTORY_FOLDER)


def listing(root: str | os.PathLike[str]) -> list[Entry]:
    """The folder's entries by name; empty when it is missing, a link or not a folder."""
    folder = history_folder(root)
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return []
        entries = []
        with os.scandir(folder) as found:
            for entry in found:
                info = entry.stat(follow_symlinks=False)
                mode = info.st_mode
                kind = "file" if stat.S_ISREG(mode) else "link" if stat.S_ISLNK(mode) else "other"
                entries.append((entry.name, info.st_size, info.st_mtime_ns, kind))
    except OSError:
        return []
    entries.sort()
    return entries


def _small(path: str) -> str:
    try:
        with open(path, "rb") as file:
            return file.read(_MAX_HEAD_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _git_dir(root: str) -> str | None:
    """The project's git folder (a worktree's ``.git`` file names its own), or None."""
    current = os.path.abspath(root)
    while True:
        dot_git = os.path.join(current, ".git")
        if os.path.isdir(dot_git):
            return dot_git
        if os.path.isfile(dot_git):
            text = _small(dot_git)
            if text.startswith("gitdir:"):
                named = text[len("gitdir:") :].strip()
                return named if os.path.isabs(named) else os.path.join(current, named)
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def git_head(root: str | os.PathLike[str]) -> str:
    """``HEAD`` and the commit it names (``""`` outside git): it moves with a commit or a pull."""
    folder = _git_dir(os.fspath(root))
    if folder is None:
        return ""
    head = _small(os.path.join(folder, "HEAD"))
    if not head.startswith("ref:"):
        return head
    ref = head[4:].strip()
    common = _small(os.path.join(folder, "commondir"))
    where = [folder]
    if common:
        where.append(common if os.path.isabs(common) else os.path.join(folder, common))
    for base in where:
        commit = _small(os.path.join(base, *ref.split("/")))
        if commit:
            return f"{head} {commit}"
    packed = os.path.join(where[-1], "packed-refs")
    try:
        info = os.stat(packed)
    except OSError:
        return head
    return f"{head} packed {info.st_size} {info.st_mtime_ns}"


def folder_stamp(root: str | os.PathLike[str]) -> str:
    """``HEAD`` and the folder's own device, inode and modification time; ``""``: no folder."""
    try:
        info = os.lstat(history_folder(root))
    except OSError:
        return ""
    if not stat.S_ISDIR(info.st_mode):
        return ""
    return f"{git_head(root)}\n{info.st_dev} {info.st_ino} {info.st_mtime_ns}"


def settled_stamp(root: str | os.PathLike[str], now_ns: int) -> str | None:
    """:func:`folder_stamp`, when the folder last changed well before ``now_ns``; else None."""
    try:
        changed = os.lstat(history_folder(root)).st_mtime_ns
    except OSError:
        return None
    if now_ns - changed < _SETTLED_NS:
        return None
    return folder_stamp(root) or None


def fingerprint(root: str | os.PathLike[str], entries: list[Entry] | None = None) -> str:
    """What the folder (its ``entries``, else listed now) and ``HEAD`` look like; ``""``: none."""
    if entries is None:
        entries = listing(root)
    if not entries:
        return ""
    rows = [f"{name}\t{size}\t{mtime}\t{kind}" for name, size, mtime, kind in entries]
    return git_head(root) + "\n" + "\n".join(rows)
