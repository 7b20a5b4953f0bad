"""Per-project local state in ``.karni/local/state.json``: never committed, never shared.

``.karni/local/`` carries its own ``.gitignore`` (``*``). The state file is a
JSON object; one that cannot be read or parsed is treated as empty and
rewritten. Updates happen under an exclusive lock on ``.karni/local/state.lock``
and replace the file atomically, so concurrent ``karni`` processes never lose
an update or leave a half-written file.

Only commands that may show a tip (``doctor``, ``check``) touch this folder;
``context``, ``types``, ``rules`` and ``new`` never create it.
"""

from __future__ import annotations

import os
import sys

__all__ = ["LOCAL_DIR", "STATE_FILE", "ExclusiveLock", "claim_once", "read_state"]

LOCAL_DIR = ".karni/local"
"""Machine-local files, relative to the project root."""

STATE_FILE = ".karni/local/state.json"
"""The state file, relative to the project root."""

_LOCK_FILE = "state.lock"
_GITIGNORE = "*\n"


def _local_dir(root: str) -> str:
    return os.path.join(root, *LOCAL_DIR.split("/"))


def _state_path(root: str) -> str:
    return os.path.join(root, *STATE_FILE.split("/"))


def _ensure_local_dir(root: str) -> str:
    folder = _local_dir(root)
    os.makedirs(folder, exist_ok=True)
    gitignore = os.path.join(folder, ".gitignore")
    if not os.path.isfile(gitignore):
        from karni.cli.atomic import write_text_atomic

        write_text_atomic(gitignore, _GITIGNORE)
    return folder


def read_state(root: str) -> dict[str, object]:
    """The project's local state; empty when missing, unreadable or corrupt."""
    import json

    try:
        with open(_state_path(root), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class ExclusiveLock:
    """An exclusive advisory lock on a file, held for a ``with`` block (never via a link)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._fd = -1

    def __enter__(self) -> ExclusiveLock:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        self._fd = os.open(self._path, flags, 0o666)
        try:
            if sys.platform == "win32":  # mypy narrows on sys.platform, not os.name
                import msvcrt

                msvcrt.locking(self._fd, msvcrt.LK_LOCK, 1)
            else:
                import fcntl

                fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self._fd)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            if sys.platform == "win32":
                import msvcrt

                os.lseek(self._fd, 0, os.SEEK_SET)
                msvcrt.locking(self._fd, msvcrt.LK_UNLCK, 1)
            else:
                import fcntl

                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)


def claim_once(root: str, key: str) -> bool:
    """Record ``key`` as done in the project's state; True only for the first caller.

    The read-check-write happens under the lock, so among any number of
    concurrent callers exactly one gets True. When the record cannot be
    written (read-only project, full disk), the answer is False: something
    recorded as "once" must never happen twice.
    """
    import json

    try:
        folder = _ensure_local_dir(root)
        with ExclusiveLock(os.path.join(folder, _LOCK_FILE)):
            state = read_state(root)
            if state.get(key):
                return False
            state[key] = True
            from karni.cli.atomic import write_text_atomic

            write_text_atomic(_state_path(root), json.dumps(state, indent=2, sort_keys=True) + "\n")
    except OSError:
        return False
    return True
