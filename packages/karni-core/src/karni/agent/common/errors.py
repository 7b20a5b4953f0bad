"""The root of karni-core's error hierarchy, and the errors of the shared modules.

Every error karni-core defines derives from :class:`KarniCoreError`, the
history errors (:class:`karni.agent.history.HistoryError`) included. The
errors about files are also :class:`OSError`, so code that already handles a
failed write or read handles them too.
"""

from __future__ import annotations

__all__ = [
    "ConfigFileError",
    "FileTooLargeError",
    "KarniCoreError",
    "PathError",
    "UnsafePathError",
]


class KarniCoreError(Exception):
    """The root of every error karni-core defines."""


class ConfigFileError(KarniCoreError):
    """A configuration file cannot be read or is not valid TOML.

    The message names the file and what to do; ``path`` is the file.
    """

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class PathError(KarniCoreError, OSError):
    """A file Karni will not read or write as asked; the message says why and what to do.

    ``strerror`` holds the message and ``filename`` the path, so
    ``cannot write X: {strerror}`` reads well.
    """

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.strerror = message
        self.filename = path

    def __str__(self) -> str:
        return str(self.strerror)


class UnsafePathError(PathError):
    """A symlink on the way to a file, or something that is not a regular file."""


class FileTooLargeError(PathError):
    """A file is larger than the most Karni reads of it."""
