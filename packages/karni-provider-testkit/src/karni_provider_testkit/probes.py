"""Watching what provider code does while it runs.

The conformance suite must see a provider start a process, open a socket or
wait without a deadline, even when the provider swallows every exception (as
the rules tell it to). These context managers patch the standard library's
entry points for the duration of one call and *record* what happened, so the
test can fail afterwards whatever the provider caught.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "FileSystemCalls",
    "ForbiddenCall",
    "bounded_call",
    "count_file_system_calls",
    "forbid_processes_and_sockets",
    "unbounded_waits",
]


class ForbiddenCall(Exception):
    """Raised inside provider code that starts a process or opens a socket under a probe."""


_PROCESS_FUNCTIONS = (
    "system",
    "popen",
    "fork",
    "forkpty",
    "posix_spawn",
    "posix_spawnp",
    "execv",
    "execve",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "execvp",
    "execvpe",
    "spawnv",
    "spawnve",
    "spawnvp",
    "spawnvpe",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
)


@contextmanager
def _patched(patches: list[tuple[Any, str, Any]]) -> Iterator[None]:
    saved: list[tuple[Any, str, Any]] = []
    try:
        for owner, attribute, replacement in patches:
            if hasattr(owner, attribute):
                saved.append((owner, attribute, getattr(owner, attribute)))
                setattr(owner, attribute, replacement)
        yield
    finally:
        for owner, attribute, original in reversed(saved):
            setattr(owner, attribute, original)


@contextmanager
def forbid_processes_and_sockets() -> Iterator[list[str]]:
    """Record (and refuse) every process start and socket creation in the block.

    Patched: ``subprocess.Popen``, the ``os`` functions that start processes
    (``system``, ``popen``, ``fork``, ``posix_spawn``, ``exec*``, ``spawn*``),
    ``_posixsubprocess.fork_exec`` and ``socket.socket``/``socketpair``/
    ``create_connection``. Each refused call raises :class:`ForbiddenCall`
    and is recorded.

    Yields:
        The list the attempts are appended to, one description each.
    """
    attempts: list[str] = []

    def refuse(what: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            shown = ", ".join(repr(arg)[:60] for arg in args[:2])
            attempts.append(f"{what}({shown})")
            raise ForbiddenCall(f"{what} is not allowed here")

        return refused

    patches: list[tuple[Any, str, Any]] = [
        (subprocess, "Popen", refuse("subprocess.Popen")),
        (socket, "socket", refuse("socket.socket")),
        (socket, "socketpair", refuse("socket.socketpair")),
        (socket, "create_connection", refuse("socket.create_connection")),
    ]
    patches += [(os, name, refuse(f"os.{name}")) for name in _PROCESS_FUNCTIONS]
    try:
        import _posixsubprocess

        patches.append((_posixsubprocess, "fork_exec", refuse("_posixsubprocess.fork_exec")))
    except ImportError:  # Windows has no _posixsubprocess
        pass
    with _patched(patches):
        yield attempts


class FileSystemCalls:
    """What :func:`count_file_system_calls` saw: each call, as ``(kind, path)``."""

    def __init__(self) -> None:
        self.stats: list[str] = []
        """``os.stat``/``os.lstat`` calls (``is_dir``, ``exists``, ``realpath`` go through them)."""
        self.reads: list[str] = []
        """Files opened and folders listed (``open``, ``os.open``, ``scandir``, ``listdir``)."""


_STAT_FUNCTIONS = ("stat", "lstat")
_READ_FUNCTIONS = ("open", "scandir", "listdir")


@contextmanager
def count_file_system_calls() -> Iterator[FileSystemCalls]:
    """Count the stats, opens and listings done in the block; the calls go ahead unchanged.

    Patched: ``os.stat``, ``os.lstat``, ``os.open``, ``os.scandir``,
    ``os.listdir``, ``builtins.open`` and ``io.open`` (``pathlib`` and
    ``os.path`` call these at call time, so their checks are counted too).
    """
    import builtins
    import io

    seen = FileSystemCalls()

    def counting(original: Callable[..., Any], into: list[str], what: str) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            into.append(f"{what}({repr(args[0])[:80] if args else ''})")
            return original(*args, **kwargs)

        return counted

    patches: list[tuple[Any, str, Any]] = [
        (os, name, counting(getattr(os, name), seen.stats, f"os.{name}"))
        for name in _STAT_FUNCTIONS
    ]
    patches += [
        (os, name, counting(getattr(os, name), seen.reads, f"os.{name}"))
        for name in _READ_FUNCTIONS
    ]
    patches += [
        (builtins, "open", counting(builtins.open, seen.reads, "open")),
        (io, "open", counting(io.open, seen.reads, "io.open")),
    ]
    with _patched(patches):
        yield seen


_TIMEOUT_POSITION = {"communicate": 2, "wait": 1}
"""A ``Popen`` wait's positional arguments besides ``self`` when ``timeout`` is one of them."""


class _WaitWatch:
    """The replacements :func:`unbounded_waits` patches in, and what they found."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self._signalled: set[int] = set()
        self._lock = threading.Lock()
        self._nesting = threading.local()  # communicate() waits through wait(): judge the outer

    def _note(self, process: Any, what: str, timeout: Any) -> None:
        if getattr(self._nesting, "depth", 0):
            return
        if timeout is None and process.returncode is None and id(process) not in self._signalled:
            with self._lock:
                self.found.append(f"{what} without a timeout, on {process.args!r}")

    def judged(self, what: str, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Popen.<what>``, noting a call without a timeout on a process still running."""
        arity = _TIMEOUT_POSITION[what]
        nesting = self._nesting

        def method(process: Any, *args: Any, **kwargs: Any) -> Any:
            timeout = kwargs.get("timeout", args[-1] if len(args) == arity else None)
            self._note(process, f"Popen.{what}", timeout)
            nesting.depth = getattr(nesting, "depth", 0) + 1
            try:
                return original(process, *args, **kwargs)
            finally:
                nesting.depth -= 1

        return method

    def marked(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """A ``Popen`` method that signals the process: a wait after it is bounded."""

        def method(process: Any, *args: Any) -> Any:
            self._signalled.add(id(process))
            return original(process, *args)

        return method

    def connecting(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``socket.connect``/``connect_ex``, noting a connection with no timeout at all."""

        def method(sock: Any, address: Any) -> Any:
            if sock.gettimeout() is None and socket.getdefaulttimeout() is None:
                with self._lock:
                    self.found.append(f"socket.connect({address!r}) without a timeout")
            return original(sock, address)

        return method


@contextmanager
def unbounded_waits() -> Iterator[list[str]]:
    """Record every wait on a process or a socket that has no deadline.

    A wait is unbounded when ``Popen.communicate`` or ``Popen.wait`` is called
    with no ``timeout`` on a process that is still running (a ``wait()`` after
    ``kill()``, as ``subprocess.run`` does on a timeout, is fine), or when a
    socket connects while neither it nor ``socket.getdefaulttimeout()`` has a
    timeout. This covers ``subprocess.run``/``check_output``/``call`` (they
    wait through these methods) and ``urllib``/``http.client`` (they connect
    through ``socket``). The calls themselves go ahead unchanged.

    Yields:
        The list the unbounded waits are appended to, one description each.
    """
    watch = _WaitWatch()
    popen, socket_class = subprocess.Popen, socket.socket
    patches: list[tuple[Any, str, Any]] = [
        (popen, name, watch.judged(name, getattr(popen, name))) for name in ("communicate", "wait")
    ]
    patches += [
        (popen, name, watch.marked(getattr(popen, name)))
        for name in ("send_signal", "kill", "terminate")
    ]
    patches += [
        (socket_class, name, watch.connecting(getattr(socket_class, name)))
        for name in ("connect", "connect_ex")
    ]
    with _patched(patches):
        yield watch.found


class _Outcome:
    __slots__ = ("error", "finished", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.finished = False


def bounded_call(function: Callable[..., Any], *args: Any, seconds: float = 30.0) -> Any:
    """Call ``function(*args)`` and return its value, failing if it hangs.

    Unlike Karni's own isolation this lets exceptions through (re-raised in the
    caller), so a test can report them.

    Raises:
        TimeoutError: The call did not return within ``seconds``; it is left
            running in a daemon thread.
    """
    outcome = _Outcome()

    def run() -> None:
        try:
            outcome.value = function(*args)
        except BaseException as error:
            outcome.error = error
        outcome.finished = True

    worker = threading.Thread(target=run, name="karni-contract-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome.finished:
        raise TimeoutError(f"the call did not return within {seconds:g} seconds")
    if outcome.error is not None:
        raise outcome.error
    return outcome.value
