"""Karni's own stdout and stderr, out of reach of the provider code it runs.

A program that runs provider code in its own process (the ``karni`` command)
calls :func:`claim` once, before any provider is imported. From then on:

- ``sys.stdout`` and ``sys.stderr`` write to private duplicates of the
  original file descriptors, and only the thread that claimed them may write
  (or flush, or close): a provider's thread, even one left running after its
  call, writes nowhere.
- File descriptors 1 and 2 point at ``/dev/null`` for good, so ``os.write(1,
  …)``, C code, ``sys.__stdout__`` and child processes write nowhere, and
  closing ``sys.__stdout__`` closes only ``/dev/null``.
- A forked child closes the private duplicates at once, so it cannot hold
  Karni's output open.

:func:`finish` then flushes Karni's output and ends the process with
``os._exit``: nothing a provider left behind (a thread that never ends, an
``atexit`` handler) can add a byte or keep the process alive. See
``docs/how-to/write-a-provider.md``.
"""

from __future__ import annotations

import _thread
import io
import os
import sys

__all__ = ["OwnedStream", "claim", "claimed", "finish", "restore_standard_fds"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

_state: dict[str, Any] = {}


class OwnedStream(io.TextIOBase):
    """A text stream only its owner thread can write to; everyone else writes nowhere."""

    def __init__(self, stream: io.TextIOWrapper, owner: int) -> None:
        """Wrap ``stream``; ``owner`` is the ident of the thread allowed to use it."""
        self._stream = stream
        self._owner = owner

    def _mine(self) -> bool:
        return _thread.get_ident() == self._owner and not self._stream.closed

    def write(self, text: str) -> int:
        """Write ``text`` when called from the owner thread; discard it otherwise."""
        if self._mine():
            return self._stream.write(text)
        return len(text)

    def flush(self) -> None:
        """Flush, from the owner thread only."""
        if self._mine():
            self._stream.flush()

    def close(self) -> None:
        """Close, from the owner thread only."""
        if self._mine():
            self._stream.close()

    def writable(self) -> bool:
        """Always true: writes from other threads are accepted and dropped."""
        return True

    def isatty(self) -> bool:
        """Whether Karni's own output is a terminal."""
        return not self._stream.closed and self._stream.isatty()

    def fileno(self) -> int:
        """The private descriptor (only the owner should use it)."""
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The encoding of the underlying stream."""
        return self._stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        """Unencodable characters are replaced, never raised."""
        return self._stream.errors


def _own(fd: int, original: Any, owner: int) -> OwnedStream | None:
    try:
        private = os.dup(fd)  # not inheritable: no child process gets it
    except OSError:
        return None  # the descriptor was closed before Karni started
    encoding = getattr(original, "encoding", None) or "utf-8"
    buffering = 1 if getattr(original, "line_buffering", False) is True else -1
    stream = open(  # noqa: SIM115 - Karni's output stream lives as long as the process
        private, "w", buffering=buffering, encoding=encoding, errors="replace"
    )
    return OwnedStream(stream, owner)


def claim() -> None:
    """Move Karni's stdout and stderr to private descriptors; point 1 and 2 at /dev/null.

    Calling it again does nothing. Call it from the thread that writes
    Karni's output, before any provider code runs.
    """
    if _state:
        return
    owner = _thread.get_ident()
    streams: dict[int, OwnedStream | None] = {}
    for fd, name in ((1, "stdout"), (2, "stderr")):
        original = getattr(sys, name)
        if original is not None:
            try:
                original.flush()
            except (OSError, ValueError):
                pass
        streams[fd] = _own(fd, original, owner)
    _state["null"] = os.open(os.devnull, os.O_RDWR)
    _state["streams"] = streams
    restore_standard_fds()
    sys.stdout = streams[1] or sys.stdout
    sys.stderr = streams[2] or sys.stderr
    os.register_at_fork(after_in_child=_close_in_child)


def claimed() -> bool:
    """Whether :func:`claim` has run in this process."""
    return bool(_state)


def restore_standard_fds() -> None:
    """Point descriptors 1 and 2 at /dev/null again (a provider may have moved or closed them)."""
    null = _state.get("null")
    if null is not None:
        for fd in (1, 2):
            os.dup2(null, fd)


def _close_in_child() -> None:
    for stream in _state.get("streams", {}).values():
        if stream is not None:
            try:
                os.close(stream.fileno())
            except (OSError, ValueError):
                pass


def finish(status: int) -> NoReturn:
    """Flush Karni's output and end the process with ``status`` at once.

    ``os._exit`` skips interpreter shutdown: no ``atexit`` handler runs and
    no thread is waited for, so what a provider left behind cannot write
    after Karni's output or keep the process alive.
    """
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    os._exit(status)
