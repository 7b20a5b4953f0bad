"""Provider code in a forked child, so that nothing the provider does can end Karni.

A thread keeps a provider's output and its exceptions away from Karni, but not
``os._exit(7)``, ``os.abort()`` or a crash in C code: those end the whole
process, with the provider's status. So the ``karni`` command (a program that
claimed its output, :mod:`karni.agent.common.output`) runs provider calls in
a child it forks:

- :func:`run_in_children` runs a whole composition (every provider's
  ``detect``, its brief, ``full_command``) in one child, which says which
  provider it is about to call before each call (:func:`entering`). A child
  that ends without its result is started again without the provider it
  was in, until one child finishes: one fork for a ``karni context
  --with-history``, however many providers answer, and one more for each
  provider that ends its process;
- :func:`call_in_child` runs one call (``karni doctor``'s and ``karni
  rules``' ``detect``) and reports how its child ended.

In the child, ``sys.stdout`` and ``sys.stderr`` lead nowhere and descriptors
1 and 2 to ``/dev/null`` (Karni's own output descriptors are closed in every
forked child); the calls still run in the isolated call, with its deadlines
(:mod:`karni.agent.history.isolation`). The result goes back on a pipe
(``marshal``: a ``str``, a ``bool`` or ``None``) and the child ends with
``os._exit(0)``: threads, ``atexit`` handlers and whatever else a provider
left behind end with it. A process a provider forks does not keep the pipe,
so it cannot hold the result back. A child that sends nothing for a call's
deadline and a second is killed. A Ctrl-C (SIGINT reaching the child) is
still Karni's: it ends Karni with 130.

What a call changes in a provider object stays in the child. Without
``os.fork`` (Windows) the calls run on threads in Karni's own process.
"""

from __future__ import annotations

import _thread
import gc
import io
import marshal
import os
import sys
import time

__all__ = ["ProviderCallError", "call_in_child", "entering", "run_in_children"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

    Outcome = tuple[Any, BaseException | None, bool, int | None]
    """``(value, error, timed_out, ended)``: what :class:`ProviderCallOutcome` records."""

_VALUE, _ERROR, _INTERRUPT, _ENTERING = b"V", b"E", b"I", b"P"
_SILENT = b"T"
"""Not sent by a child: what :func:`_messages` gives when one stays silent too long."""
_HEADER = 9  # a tag byte, then the payload's length in 8 bytes
_READ_SIZE = 1 << 16
_SIGKILL = 9
_GRACE = 1.0
"""Seconds a child may take beyond a call's deadline before it is killed."""

_report_to: list[int] = []
"""In a child of :func:`run_in_children`: the pipe to Karni."""


class ProviderCallError(Exception):
    """What a provider's call raised in its child, as ``TypeName: message``."""


class _Discard(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)

    def writable(self) -> bool:
        return True


def entering(index: int) -> None:
    """Tell Karni that the work is about to run the code of item ``index`` (in a child only)."""
    if _report_to:
        _send(_report_to[0], _ENTERING + str(index).encode())


def run_in_children(
    work: Callable[..., Any], items: Sequence[Any], args: tuple[Any, ...], timeout: float
) -> Any:
    """``work(items, *args)`` in a forked child, until a child gives its result.

    A child that ends without one is followed by another without the item it
    was in (:func:`entering`). ``timeout`` is the longest a call of the work
    may take; a child silent for longer (and :data:`_GRACE`) is killed as if
    it had ended. Returns the result (``None``, a ``str`` or a ``bool``), or
    None when every item was left out or the work itself failed.

    Raises:
        OSError: No child could be started; nothing has run.
        KeyboardInterrupt: Ctrl-C while the work ran; the child is ended first.
    """
    remaining = list(items)
    while True:
        pid, read_fd = _start(work, (remaining, *args), report=True)
        culprit: int | None = None
        try:
            for tag, payload in _messages(read_fd, timeout + _GRACE):
                if tag == _ENTERING:
                    culprit = int(payload)
                elif tag == _INTERRUPT:
                    raise KeyboardInterrupt
                elif tag in (_VALUE, _ERROR):
                    return _plain(payload) if tag == _VALUE else None
        finally:
            os.close(read_fd)
            _end(pid, kill=True)  # done, or ended, or silent too long, or Ctrl-C
        if culprit is None or not 0 <= culprit < len(remaining):
            return None
        del remaining[culprit]


def call_in_child(function: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Outcome:
    """``function(*args)`` in a forked child, under ``timeout`` seconds.

    Returns:
        ``(value, error, timed_out, ended)``, the fields of
        :class:`~karni.agent.history.isolation.ProviderCallOutcome`.

    Raises:
        OSError: The child could not be started (the caller runs the call on a
            thread instead); nothing has run.
        KeyboardInterrupt: Ctrl-C while the call ran; the child is ended first.
    """
    pid, read_fd = _start(function, args, report=False)
    try:
        message = next(_messages(read_fd, timeout), None)
    except BaseException:
        _end(pid, kill=True)
        raise
    finally:
        os.close(read_fd)
    status = _end(pid, kill=message is None or message[0] == _SILENT)
    return _outcome(message, status)


def _start(function: Callable[..., Any], args: tuple[Any, ...], *, report: bool) -> tuple[int, int]:
    """Fork a child that runs ``function(*args)`` and sends what came of it; ``(pid, read end)``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # nothing of Karni's is left in a buffer the child copies
        except Exception:
            pass
    read_fd, write_fd = os.pipe()
    # What exists now stays out of the child's garbage collections: a collection
    # there would touch every object, and so copy every page the child shares.
    gc.freeze()
    try:
        pid = _fork()
    except BaseException as error:
        gc.unfreeze()
        os.close(read_fd)
        os.close(write_fd)
        if isinstance(error, Exception) and not isinstance(error, OSError):
            raise OSError(f"cannot fork: {error}") from error  # the caller uses a thread
        raise
    if pid == 0:  # pragma: no cover - the child's side ends in os._exit
        _child(function, args, read_fd, write_fd, report)
    gc.unfreeze()
    os.close(write_fd)
    return pid, read_fd


def _fork() -> int:
    """``os.fork()``, without the warning Python 3.12+ gives while another thread is alive.

    Such a thread is a provider call Karni gave up on; the child never waits
    for anything it may hold, and ends by the deadline at the latest.
    """
    if not _thread._count():
        return os.fork()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def _child(
    function: Callable[..., Any],
    args: tuple[Any, ...],
    read_fd: int,
    write_fd: int,
    report: bool,
) -> None:
    """The child's whole life: run the work, send what came of it, end."""
    status = 0
    try:
        os.close(read_fd)
        # A process the provider forks must not hold the pipe open: Karni reads until its end.
        os.register_at_fork(after_in_child=lambda: _close(write_fd))
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.close(null)
        sys.stdout = sys.stderr = _Discard()
        if report:
            _report_to.append(write_fd)
        try:
            payload = _VALUE + marshal.dumps(function(*args))
        except KeyboardInterrupt:
            payload = _INTERRUPT
        except BaseException as error:  # a provider's failure is "no result"
            payload = _ERROR + _describe(error).encode("utf-8", "replace")
        _send(write_fd, payload)
    except BaseException:
        status = 70
    finally:
        os._exit(status)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _describe(error: BaseException) -> str:
    try:
        return f"{type(error).__name__}: {error}"
    except Exception:  # a message that cannot be made into text
        return type(error).__name__


def _send(fd: int, payload: bytes) -> None:
    message = payload[:1] + len(payload[1:]).to_bytes(8, "big") + payload[1:]
    view = memoryview(message)
    while view:
        view = view[os.write(fd, view) :]


def _messages(fd: int, window: float) -> Iterator[tuple[bytes, bytes]]:
    """The child's messages as they come, each within ``window`` seconds of the one before.

    Ends at the pipe's end (the child ended), or with a last ``(_SILENT, b"")``
    after ``window`` seconds without one.
    """
    import select  # loaded already wherever a provider ran a program

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    received = bytearray()
    deadline = time.monotonic() + window
    while True:
        while len(received) >= _HEADER and len(received) >= _HEADER + _length(received):
            end = _HEADER + _length(received)
            tag, payload = bytes(received[:1]), bytes(received[_HEADER:end])
            del received[:end]
            yield tag, payload
            deadline = time.monotonic() + window
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            yield _SILENT, b""
            return
        chunk = os.read(fd, _READ_SIZE)
        if not chunk:
            return  # the child ended
        received += chunk


def _length(received: bytearray) -> int:
    return int.from_bytes(received[1:_HEADER], "big")


def _end(pid: int, *, kill: bool) -> int:
    """Wait for the child (killed first when ``kill``); its status as ``returncode`` gives it."""
    if kill:
        try:
            os.kill(pid, _SIGKILL)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # already reaped
            return 0
        except InterruptedError:
            continue
        return os.waitstatus_to_exitcode(status)


def _plain(payload: bytes) -> Any:
    """The value ``payload`` holds, if a call may return it (None, ``str``, ``bool``)."""
    try:
        value = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return value if value is None or type(value) in (str, bool) else None


def _outcome(message: tuple[bytes, bytes] | None, status: int) -> Outcome:
    if message is not None and message[0] == _SILENT:
        return None, None, True, None
    if message is None:
        from karni.agent.history.errors import ProviderExitError

        return None, ProviderExitError(status), False, status
    tag, payload = message
    if tag == _INTERRUPT:
        raise KeyboardInterrupt
    if tag != _VALUE:
        return None, ProviderCallError(payload.decode("utf-8", "replace")), False, None
    try:
        value = marshal.loads(payload)
    except (ValueError, EOFError, TypeError) as error:
        return None, error, False, None
    if value is not None and type(value) not in (str, bool):
        return None, ProviderCallError(f"a {type(value).__name__} came back"), False, None
    return value, None, False, None
