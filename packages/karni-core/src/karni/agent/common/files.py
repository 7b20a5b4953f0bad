"""Writing a file so readers only ever see the old or the new contents, and reading one safely.

:func:`write_atomic` writes to a temporary file beside the target (created
exclusively, never through a symlink), flushes it to disk, then renames it
over the target with :func:`os.replace`. On any failure the temporary file is
removed and the target is left as it was. A symlink in the target's place, or
on the way down from the folder the caller names as ``within``, is refused:
a repository is untrusted input, and a symlinked folder could lead a write
out of it.

:func:`read_regular_file` reads at most a given number of bytes, and only
from a regular file, so a FIFO or a device planted in a repository cannot
hang or flood the reader.
"""

from __future__ import annotations

import os
import stat

from karni.agent.common.errors import FileTooLargeError, UnsafePathError

__all__ = [
    "TEMPORARY_PATTERN",
    "check_writable",
    "make_folders",
    "open_regular_file",
    "read_regular_file",
    "sweep_temporaries",
    "write_atomic",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def _refuse_symlink(path: str) -> os.stat_result | None:
    """``lstat`` of ``path`` (None when missing); a symlink is an :class:`UnsafePathError`."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(f"{path} is a symlink; Karni does not write through symlinks", path)
    return info


def make_folders(folder: str, *, within: str | None = None, mode: int = 0o777) -> None:
    """Create ``folder`` and its missing parents.

    Args:
        folder: The folder to create.
        within: A folder ``folder`` must lie in. Every part below it is
            created one by one and must not be a symlink; ``within`` itself may be.
        mode: The permission bits of folders created (less the umask);
            ``0o700`` for a cache only its owner may read.

    Raises:
        UnsafePathError: A part below ``within`` is a symlink, or ``folder``
            lies outside ``within``.
        OSError: A part is not a folder, or it cannot be created.
    """
    if within is None:
        os.makedirs(folder, mode=mode, exist_ok=True)
        return
    relative = os.path.relpath(os.path.abspath(folder), os.path.abspath(within))
    if relative == os.curdir:
        return
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        raise UnsafePathError(f"{folder} lies outside {within}", folder)
    current = os.path.abspath(within)
    for part in relative.split(os.sep):
        current = os.path.join(current, part)
        info = _refuse_symlink(current)
        if info is None:
            try:
                os.mkdir(current, mode)
            except FileExistsError:
                _refuse_symlink(current)  # someone else made it meanwhile: check again
        elif not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(f"{current} is not a folder")


def check_writable(path: str, *, within: str | None = None) -> None:
    """Refuse, before anything is written, what :func:`write_atomic` would refuse on the way.

    A command that writes more than one file (a settings file and its
    folder's ``.gitignore``) calls it first, so that a refusal writes nothing
    at all, not even the files it would have written before the refused one.

    Raises:
        UnsafePathError: ``path``, or a folder between ``within`` and it, is a
            symlink, or ``path`` lies outside ``within``.
    """
    if within is not None:
        folder = os.path.dirname(os.path.abspath(path))
        relative = os.path.relpath(folder, os.path.abspath(within))
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            raise UnsafePathError(f"{path} lies outside {within}", path)
        current = os.path.abspath(within)
        for part in () if relative == os.curdir else relative.split(os.sep):
            current = os.path.join(current, part)
            if _refuse_symlink(current) is None:
                return  # missing: no link below it, and the file cannot be there yet
    _refuse_symlink(path)


def write_atomic(
    path: str,
    data: bytes | str,
    *,
    within: str | None = None,
    mode: int | None = None,
    durable: bool = True,
) -> None:
    """Replace ``path``'s contents with ``data`` (text is written as UTF-8) atomically.

    Args:
        path: The file to write.
        data: The new contents; ``str`` is encoded as UTF-8, newlines as given.
        within: When given, ``path`` must lie in this folder; missing folders
            below it are created (see :func:`make_folders`) and none may be a symlink.
        mode: Permission bits for the file. By default an existing file keeps
            its own and a new one gets the umask's.
        durable: Flush the data to disk before the rename (caches may skip it).

    Raises:
        UnsafePathError: ``path``, or a folder below ``within``, is a symlink.
        OSError: The folder is missing or not writable, or the disk is full.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if within is not None:
        make_folders(folder, within=within)
    existing = _refuse_symlink(path)
    if mode is None and existing is not None:
        mode = existing.st_mode & 0o7777
    payload = data.encode("utf-8") if isinstance(data, str) else data
    sweep_temporaries(path)
    temporary = os.path.join(
        folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    )
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
    fd = os.open(temporary, flags, 0o666)
    try:
        with open(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
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


def open_regular_file(path: str, *, follow_symlinks: bool = True) -> BinaryIO:
    """Open ``path`` for reading in binary, only when it is a regular file.

    The open never blocks: a FIFO or a device is refused before anything is
    read from it.

    Raises:
        FileNotFoundError: Nothing is at ``path``.
        UnsafePathError: ``path`` is not a regular file, or is a symlink and
            ``follow_symlinks`` is False.
        OSError: It cannot be opened.
    """
    flags = os.O_RDONLY | _NONBLOCK | _BINARY | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        if not follow_symlinks and os.path.islink(path):
            raise UnsafePathError(f"{path} is a symlink; Karni does not read it", path) from None
        if os.path.isdir(path):
            raise UnsafePathError(f"{path} is not a regular file", path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(f"{path} is not a regular file", path)
    return open(fd, "rb")


TEMPORARY_PATTERN = ".*.tmp"
"""The names of :func:`write_atomic`'s temporary files, for a ``.gitignore``."""


def sweep_temporaries(path: str) -> None:
    """Remove temporary files an earlier, killed :func:`write_atomic` of ``path`` left behind.

    A temporary file is named ``.<name>.<pid>.<random>.tmp``; one whose
    process is gone is removed. A live writer's file is left alone.
    """
    folder, name = os.path.split(os.path.abspath(path))
    prefix = f".{name}."
    try:
        with os.scandir(folder) as listing:
            leftovers = [
                e.name for e in listing if e.name.startswith(prefix) and e.name.endswith(".tmp")
            ]
    except OSError:
        return
    for leftover in leftovers:
        pid = leftover[len(prefix) :].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _process_alive(int(pid)):
            try:
                os.unlink(os.path.join(folder, leftover))
            except OSError:
                pass


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


def read_regular_file(path: str, max_bytes: int, *, follow_symlinks: bool = True) -> bytes:
    """The contents of the regular file at ``path``, refusing anything larger than ``max_bytes``.

    Args:
        path: The file to read.
        max_bytes: The most bytes it may hold.
        follow_symlinks: When False, a symlink at ``path`` is refused.

    Raises:
        FileNotFoundError: Nothing is at ``path``.
        UnsafePathError: ``path`` is not a regular file (a folder, a FIFO, a
            device), or is a symlink and ``follow_symlinks`` is False.
        FileTooLargeError: The file holds more than ``max_bytes`` bytes.
        OSError: It cannot be opened or read.
    """
    with open_regular_file(path, follow_symlinks=follow_symlinks) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLargeError(f"{path} is larger than {max_bytes:,} bytes", path)
    return data
