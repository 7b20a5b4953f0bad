"""A damaged store is moved aside, never deleted: ``historian.db.broken-<time>``.

The store holds compartments and facts that cost model calls, and a
transcript they came from may be gone, so no message of karni-historian
ever advises deleting it. When SQLite finds the file damaged (not a
database, or a malformed page), :func:`set_aside` renames it, with its
``-wal``, ``-shm`` and ``-journal`` companions, to
``historian.db.broken-YYYYMMDDTHHMMSSZ`` beside it (kept for the user to
inspect or repair), and the caller starts a new store in its place and says
where the old one went.

Any number of processes may meet the same damaged file at once: the move
happens under an exclusive lock on the store's folder, and only when the
file is still the one found damaged (same device and inode), so a store
another process has just started is never moved aside in its turn.
"""

from __future__ import annotations

import os

__all__ = ["BROKEN_MARK", "identity", "is_damaged", "set_aside"]

BROKEN_MARK = ".broken-"
"""What a moved-aside store's name adds to ``historian.db``, before the time."""

_COMPANIONS = ("-wal", "-shm", "-journal")
_DAMAGED_CODES = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
_DAMAGED_TEXTS = ("file is not a database", "database disk image is malformed")


def is_damaged(error: BaseException) -> bool:
    """Whether SQLite's ``error`` says the database file itself is damaged."""
    name = getattr(error, "sqlite_errorname", None)
    if isinstance(name, str) and name.startswith(_DAMAGED_CODES):
        return True
    text = str(error).lower()
    return any(damaged in text for damaged in _DAMAGED_TEXTS)


def identity(path: str) -> tuple[int, int] | None:
    """The file's device and inode, to tell it from a store started later; None when missing."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def set_aside(path: str, found: tuple[int, int] | None) -> str | None:
    """Rename the damaged store ``path`` (found with :func:`identity` ``found``) and its companions.

    Returns:
        Where it went, or None when the file is no longer the damaged one
        (another process moved it aside and may have started a new store).

    Raises:
        OSError: The folder cannot be locked or the file cannot be renamed.
    """
    with _FolderLock(os.path.dirname(path)):
        if found is None or identity(path) != found:
            return None
        aside = _free_name(path)
        os.rename(path, aside)
        for suffix in _COMPANIONS:
            try:
                os.rename(path + suffix, aside + suffix)
            except FileNotFoundError:
                pass
    return aside


def _free_name(path: str) -> str:
    import time

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = f"{path}{BROKEN_MARK}{stamp}"
    number = 1
    while os.path.lexists(aside):
        number += 1
        aside = f"{path}{BROKEN_MARK}{stamp}-{number}"
    return aside


class _FolderLock:
    """An exclusive ``flock`` on a folder for a ``with`` block; no lock file is left behind.

    Where ``flock`` is missing (Windows), there is no lock: a file another
    process holds open cannot be renamed there anyway.
    """

    def __init__(self, folder: str) -> None:
        self._folder = folder
        self._fd = -1

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:
            return
        self._fd = os.open(self._folder, os.O_RDONLY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            raise

    def __exit__(self, *exc: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = -1
