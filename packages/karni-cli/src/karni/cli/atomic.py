"""Writing a file so that readers only ever see the old or the new contents.

The text goes to a temporary file beside the target, is flushed to disk, and
then renamed over it with :func:`os.replace`, which is atomic on POSIX and
Windows. On any failure the temporary file is removed and the target is left
as it was.
"""

from __future__ import annotations

import os

__all__ = ["write_bytes_atomic", "write_text_atomic"]


def write_text_atomic(path: str, text: str) -> None:
    """Replace ``path``'s contents with ``text`` (UTF-8, newlines as given) atomically.

    Raises:
        OSError: The folder is missing or not writable, or the disk is full.
    """
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str, data: bytes) -> None:
    """Replace ``path``'s contents with ``data`` atomically.

    An existing file keeps its permission bits; a new one gets the umask's.

    Raises:
        OSError: The folder is missing or not writable, or the disk is full.
    """
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode: int | None = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = None
    temporary = os.path.join(
        folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    )
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
