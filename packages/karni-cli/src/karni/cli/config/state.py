"""Per-project local state in ``.karni/local/state.json``: never committed, never shared.

``.karni/local/`` carries its own ``.gitignore`` (``*``). The state file is a
JSON object; one that cannot be read or parsed is treated as empty and
rewritten. Updates happen under an exclusive lock on ``.karni/local/state.lock``
and replace the file atomically, so concurrent ``karni`` processes never lose
an update or leave a half-written file.

Only commands that may show a tip (``doctor``, ``check``) touch this folder;
``context``, ``rules``, ``config`` and ``new`` never create it.
"""

from __future__ import annotations

import os
import sys

from karni.agent.common.files import make_folders, read_regular_file, write_atomic
from karni.agent.common.jsontext import loads
from karni.agent.common.root import LOCAL_DIR, local_dir

__all__ = [
    "LOCAL_DIR",
    "STATE_FILE",
    "ExclusiveLock",
    "claim_once",
    "ensure_local_dir",
    "read_state",
]

STATE_FILE = ".karni/local/state.json"
"""The state file, relative to the project root."""

_LOCK_FILE = "state.lock"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_MAX_STATE_BYTES = 1 << 20
_GITIGNORE = "*\n"


def _state_path(root: str) -> str:
    return os.path.join(root, *STATE_FILE.split("/"))


def ensure_local_dir(root: str) -> str:
    """``ROOT/.karni/local``, created with its ``.gitignore`` (never through a symlink)."""
    folder = local_dir(root)
    make_folders(folder, within=root)
    gitignore = os.path.join(folder, ".gitignore")
    if not os.path.isfile(gitignore):
        write_atomic(gitignore, _GITIGNORE, within=root)
    return folder


def read_state(root: str) -> dict[str, object]:
    """The project's local state; empty when missing, unreadable or corrupt.

    Parsed with :mod:`karni.agent.common.jsontext` (``json.loads``'s results
    without importing ``json`` and ``re``): ``karni doctor`` reads the state
    on every run to see whether the tip was shown.
    """
    try:
        data = loads(_without_bom(read_regular_file(_state_path(root), _MAX_STATE_BYTES)))
    except (OSError, ValueError, RecursionError):  # a bad UTF-8 sequence is a ValueError
        return {}
    return data if isinstance(data, dict) else {}


def _without_bom(data: bytes) -> str:
    """``data.decode("utf-8-sig")``, without loading that codec's module on every run."""
    return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")


class ExclusiveLock:
    """An exclusive advisory lock on a file, held for a ``with`` block (never via a link)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._fd = -1

    def __enter__(self) -> ExclusiveLock:
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o666)
        try:
            if sys.platform == "win32":  # mypy narrows on sys.platform, not os.name
                # bench row "karni check" runs without it
                import msvcrt

                msvcrt.locking(self._fd, msvcrt.LK_LOCK, 1)
            else:
                # bench row "karni check" runs without it
                import fcntl

                fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self._fd)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            if sys.platform == "win32":
                # bench row "karni check" runs without it
                import msvcrt

                os.lseek(self._fd, 0, os.SEEK_SET)
                msvcrt.locking(self._fd, msvcrt.LK_UNLCK, 1)
            else:
                # bench row "karni check" runs without it
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
    # bench row "karni check" runs without it
    import json

    try:
        folder = ensure_local_dir(root)
        with ExclusiveLock(os.path.join(folder, _LOCK_FILE)):
            state = read_state(root)
            if state.get(key):
                return False
            state[key] = True
            text = json.dumps(state, indent=2, sort_keys=True) + "\n"
            write_atomic(_state_path(root), text, within=root)
    except OSError:
        return False
    return True
