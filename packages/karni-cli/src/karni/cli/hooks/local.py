"""The hooks' machine-local files under ``.karni/local/``: the log and small state files.

``.karni/local/`` carries its own ``.gitignore`` (``*``), as everywhere in
Karni. A repository is untrusted input, so no file here is ever written
through a symbolic link: ``.karni``, ``.karni/local`` and the file itself
must not be links, and files are opened with ``O_NOFOLLOW`` where the system
has it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

__all__ = [
    "LOG_FILE",
    "LinkRefusedError",
    "append_log",
    "local_dir",
    "open_no_follow",
    "refuse_link",
]

LOG_FILE = "hooks.log"
"""The hooks' log, in ``.karni/local/``."""

_LOG_LIMIT = 1_000_000
"""Bytes; a longer log is renamed to ``hooks.log.1`` (replacing the older one)."""

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


class LinkRefusedError(OSError):
    """A folder or file Karni would write is a symbolic link."""


def refuse_link(path: str) -> None:
    """Raise :class:`LinkRefusedError` when ``path`` is a symbolic link."""
    if os.path.islink(path):
        raise LinkRefusedError(f"{path} is a symbolic link; Karni never writes through one")


def local_dir(root: str) -> str:
    """``ROOT/.karni/local``, created with its ``.gitignore`` when missing.

    Raises:
        LinkRefusedError: ``.karni`` or ``.karni/local`` is a symbolic link.
        OSError: The folder cannot be created.
    """
    karni = os.path.join(root, ".karni")
    folder = os.path.join(karni, "local")
    for path in (karni, folder):
        refuse_link(path)
        if not os.path.isdir(path):
            os.mkdir(path, 0o700)
            refuse_link(path)
    gitignore = os.path.join(folder, ".gitignore")
    if not os.path.lexists(gitignore):
        with open_no_follow(gitignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, "wb") as handle:
            handle.write(b"*\n")
    return folder


def open_no_follow(path: str, flags: int, mode: str) -> IO[bytes]:
    """Open ``path`` (``os.open`` ``flags``, then file ``mode`` such as ``"ab"``) never via a link.

    Raises:
        LinkRefusedError: ``path`` is a symbolic link.
        OSError: The file cannot be opened.
    """
    refuse_link(path)
    try:
        fd = os.open(path, flags | _NO_FOLLOW, 0o600)
    except OSError:
        refuse_link(path)  # a link that appeared in between
        raise
    return open(fd, mode)


def append_log(root: str, line: str) -> None:
    """Append one line (made single-line) with a UTC time stamp to ``.karni/local/hooks.log``.

    Never raises: the log is the last resort of a hook that must not fail.
    """
    import time

    text = " ".join(line.split())
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        path = os.path.join(local_dir(root), LOG_FILE)
        try:
            if os.lstat(path).st_size > _LOG_LIMIT:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        with open_no_follow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "ab") as handle:
            handle.write(f"{stamp} {text}\n".encode("utf-8", "replace"))
    except OSError:
        pass
