"""Turning a failure of the store's database or disk into one line that says what to do.

``karni-historian`` prints this line and exits 1 instead of a traceback. A
write that failed part way leaves the store as its last committed
transaction (see ``docs/historian/store.md``). No line advises deleting the
store: a busy, full or read-only store is a wait or a fix elsewhere, and a
damaged one is moved aside, never removed (:mod:`karni_historian.store.recovery`).
"""

from __future__ import annotations

import errno
import os
import sqlite3

__all__ = ["BUSY_TIMEOUT_VARIABLE", "busy_timeout", "describe_failure", "describe_set_aside"]

BUSY_TIMEOUT_VARIABLE = "KARNI_HISTORIAN_BUSY_TIMEOUT"
"""Seconds to wait for another writer to let go of the store (default 10)."""

_DEFAULT_BUSY_TIMEOUT = 10.0
_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def busy_timeout() -> float:
    """How long to wait on a busy store: ``KARNI_HISTORIAN_BUSY_TIMEOUT`` or 10 seconds."""
    raw = os.environ.get(BUSY_TIMEOUT_VARIABLE, "")
    try:
        value = float(raw)
    except ValueError:
        return _DEFAULT_BUSY_TIMEOUT
    return value if 0 <= value < 3600 else _DEFAULT_BUSY_TIMEOUT


def _kind(error: BaseException) -> str:
    if isinstance(error, sqlite3.Error):
        from karni_historian.store.recovery import is_damaged

        if is_damaged(error):
            return "damaged"
        name = getattr(error, "sqlite_errorname", "") or ""
        text = str(error).lower()
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
            return "busy"
        if name.startswith(("SQLITE_FULL", "SQLITE_IOERR")) or "disk" in text:
            return "full"
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
            return "read-only"
        return "other"
    number = getattr(error, "errno", None)
    if number in _FULL:
        return "full"
    if number in _READ_ONLY:
        return "read-only"
    return "other"


def _detail(error: BaseException) -> str:
    text = str(getattr(error, "strerror", None) or error)
    return " ".join(text.split()) or type(error).__name__


def describe_failure(path: str, error: BaseException) -> str:
    """One line naming the store at ``path``, what went wrong and the fix."""
    detail = _detail(error)
    kind = _kind(error)
    if kind == "busy":
        return (
            f"the historian store {path} is busy: another karni-historian holds it; "
            f"wait for it to finish and run this command again"
        )
    if kind == "full":
        return (
            f"cannot write the historian store {path}: {detail} (is the disk full?); "
            f"free some space and run this command again; the store keeps its last commit"
        )
    if kind == "read-only":
        folder = os.path.dirname(path)
        return (
            f"cannot write the historian store {path}: {detail}; make {folder} writable "
            f"(or run karni-historian where the project can be written)"
        )
    if kind == "damaged":
        return (
            f"the historian store {path} is damaged ({detail}); run `karni-historian ingest`: "
            f"it moves the damaged file aside, keeping it, and starts a new store"
        )
    return (
        f"the historian store {path} failed: {detail}; run this command again "
        f"(the store keeps its last commit)"
    )


def describe_set_aside(path: str, aside: str, error: BaseException) -> str:
    """One line saying the damaged store at ``path`` is now ``aside`` and a new one was started."""
    return (
        f"the historian store {path} was damaged ({_detail(error)}): moved it to {aside}, "
        f"kept as it was, and started a new one; `karni-historian ingest` reads the "
        f"transcripts into the new one"
    )
