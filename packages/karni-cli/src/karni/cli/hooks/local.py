"""The hooks' log in ``.karni/local/hooks.log``: the one place a hook reports a failure.

``.karni/local/`` is created as the rest of Karni creates it (its own
``.gitignore``, never through a symlink). A repository is untrusted input:
the log is opened with ``O_NOFOLLOW`` where the system has it, and a
symlink in its place is refused.
"""

from __future__ import annotations

import os
import time

from karni.agent.common.errors import UnsafePathError
from karni.cli.config.state import ensure_local_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

__all__ = ["LOG_FILE", "append_log", "open_log"]

LOG_FILE = "hooks.log"
"""The hooks' log, in ``.karni/local/``."""

_LOG_LIMIT = 1_000_000
"""Bytes; a longer log is renamed to ``hooks.log.1`` (replacing the older one)."""

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_log(root: str) -> IO[bytes]:
    """The project's hook log, opened for appending (created with its folder when missing).

    Raises:
        UnsafePathError: The log, ``.karni`` or ``.karni/local`` is a symlink.
        OSError: The log cannot be opened.
    """
    path = os.path.join(ensure_local_dir(root), LOG_FILE)
    try:
        if os.lstat(path).st_size > _LOG_LIMIT:
            os.replace(path, path + ".1")
    except FileNotFoundError:
        pass
    if os.path.islink(path):
        raise UnsafePathError(f"{path} is a symlink; Karni does not write through symlinks", path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NO_FOLLOW, 0o600)
    return open(fd, "ab")


def append_log(root: str, line: str) -> None:
    """Append one line (made single-line) with a UTC time stamp to the hook log.

    Never raises: the log is the last resort of a hook that must not fail.
    """
    text = " ".join(line.split())
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        with open_log(root) as handle:
            handle.write(f"{stamp} {text}\n".encode("utf-8", "replace"))
    except OSError:
        pass
