"""Calling provider code so that it can never break Karni's output.

A provider runs inside Karni's process. While it runs, anything it writes to
``sys.stdout``/``sys.stderr`` is discarded, and so are bytes written straight
to file descriptors 1 and 2 (by C code or a child process it starts), so
Karni's stdout stays machine-readable. An exception means "no result", and a
call that outlives its deadline is abandoned: its thread is left to finish on
its own with its output still discarded, and Karni carries on.

In a program that claimed its output (:mod:`karni.agent.common.output`, as
the ``karni`` command does), descriptors 1 and 2 already lead to
``/dev/null`` and Karni's own streams accept only Karni's thread, so a call
only swaps the Python-level streams; otherwise the descriptors are pointed
at ``/dev/null`` for the duration of the call.
"""

from __future__ import annotations

import _thread
import io
import os
import sys

from karni.agent.common.output import claimed, restore_standard_fds

__all__ = [
    "DEFAULT_PROVIDER_TIMEOUT",
    "ProviderCallOutcome",
    "call_isolated",
    "forks",
    "provider_timeout",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

DEFAULT_PROVIDER_TIMEOUT = 10.0
"""Seconds a provider call may take before it is abandoned as "no result"."""

TIMEOUT_VARIABLE = "KARNI_PROVIDER_TIMEOUT"

_abandoned_threads: set[int] = set()


def provider_timeout(provider: Any = None) -> float:
    """The deadline for one call of ``provider``, read at every call.

    ``KARNI_PROVIDER_TIMEOUT`` wins when it is set to a positive number.
    Otherwise the deadline is 10 seconds, or one second more than the
    provider's own ``timeout`` attribute when that is longer, so that a
    provider configured to wait longer (``ChronicleProvider(timeout=15.0)``)
    is not cut short by Karni.
    """
    configured = _positive(os.environ.get(TIMEOUT_VARIABLE, ""))
    if configured is not None:
        return configured
    try:
        own = _positive(getattr(provider, "timeout", None))
    except Exception:  # a provider's broken attribute is its own default
        own = None
    return max(DEFAULT_PROVIDER_TIMEOUT, own + 1.0) if own is not None else DEFAULT_PROVIDER_TIMEOUT


def _positive(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return value if 0 < value < float("inf") else None


class ProviderCallOutcome:
    """What came of one isolated call: a value, an exception, or a timeout.

    ``ended`` is set when the call ended the process it ran in (a child of
    Karni's, see :mod:`karni.agent.history.child`): its exit status, or minus
    the signal's number.
    """

    __slots__ = ("ended", "error", "timed_out", "value")

    def __init__(
        self,
        value: Any = None,
        error: BaseException | None = None,
        timed_out: bool = False,
        ended: int | None = None,
    ) -> None:
        """Record the outcome of a call."""
        self.value = value
        self.error = error
        self.timed_out = timed_out
        self.ended = ended

    @property
    def ok(self) -> bool:
        """Whether the call returned normally within its deadline."""
        return self.error is None and not self.timed_out


class _Discard(io.TextIOBase):
    """A text stream that swallows everything written to it."""

    def write(self, text: str) -> int:
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False


class _ThreadFilter(io.TextIOBase):
    """Forwards writes to ``target`` unless they come from an abandoned provider thread."""

    def __init__(self, target: io.TextIOBase) -> None:
        self._target = target

    def write(self, text: str) -> int:
        if _thread.get_ident() in _abandoned_threads:
            return len(text)
        return self._target.write(text)

    def flush(self) -> None:
        self._target.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._target.encoding

    @property
    def buffer(self) -> Any:
        return self._target.buffer  # type: ignore[attr-defined]


def _flush(stream: Any) -> None:
    try:
        stream.flush()
    except Exception:  # a closed or broken stream has nothing left to flush
        pass


def _redirect_fd(fd: int, null_fd: int) -> int | None:
    """Point ``fd`` at /dev/null; return a duplicate of what it was, or None if closed."""
    try:
        saved = os.dup(fd)
    except OSError:
        return None
    os.dup2(null_fd, fd)
    return saved


def _keep_writing_to(saved_fd: int | None, current: Any) -> Any:
    """Karni's stream after an abandoned call: the real output, filtered by thread.

    After an earlier abandonment ``current`` already writes to the real
    output, and ``saved_fd`` is only a copy of /dev/null: keep ``current``.
    """
    if saved_fd is None:
        return current
    if isinstance(current, _ThreadFilter):
        os.close(saved_fd)
        return current
    encoding = getattr(current, "encoding", None) or "utf-8"
    errors = getattr(current, "errors", None) or "strict"
    return _ThreadFilter(open(saved_fd, "w", encoding=encoding, errors=errors))


def call_isolated(
    function: Callable[..., Any],
    *args: Any,
    timeout: float | None = None,
    provider: Any = None,
    in_child: bool = False,
) -> ProviderCallOutcome:
    """Call ``function(*args)`` with its output discarded and a deadline.

    Args:
        function: The provider method (or any callable) to run.
        *args: Its arguments.
        timeout: Seconds to wait; defaults to :func:`provider_timeout`.
        provider: The provider the call belongs to, for its own ``timeout``.
        in_child: In a program that claimed its output (the ``karni``
            command), run the call in a forked child, so that not even
            ``os._exit`` in it can end Karni (:mod:`karni.agent.history.child`).
            The call must return ``None``, a ``str`` or a ``bool``. Elsewhere,
            or where there is no ``os.fork``, it runs on a thread.

    Returns:
        The outcome. Never raises for anything the call does, except that a
        ``KeyboardInterrupt`` in Karni's own thread still propagates.
    """
    deadline = provider_timeout(provider) if timeout is None else timeout
    if in_child and forks():
        from karni.agent.history.child import call_in_child

        try:
            return ProviderCallOutcome(*call_in_child(function, args, deadline))
        except OSError:  # no child could be started: the thread below still isolates the call
            pass
    outcome = ProviderCallOutcome()
    finished = _thread.allocate_lock()
    finished.acquire()
    worker_ident: list[int] = []

    def run() -> None:
        worker_ident.append(_thread.get_ident())
        try:
            outcome.value = function(*args)
        except BaseException as error:  # a provider's failure is "no result"
            outcome.error = error
        finally:
            finished.release()

    if claimed():
        abandoned = _run_with_owned_output(run, finished, deadline)
    else:
        abandoned = _run_redirected(run, finished, deadline, worker_ident)
    if abandoned:
        outcome.timed_out = True
        outcome.value = None
    return outcome


def forks() -> bool:
    """Whether provider calls go to a forked child: in a program that claimed its output.

    The ``karni`` command does (:mod:`karni.agent.common.output`), so that a
    provider's ``os._exit`` ends only that child (:mod:`karni.agent.history.child`).
    Elsewhere, and where there is no ``os.fork``, calls run on a thread.
    """
    return claimed() and hasattr(os, "fork")


def _start(run: Callable[[], None], finished: Any, deadline: float) -> bool:
    """Start ``run`` on its own thread; True when it outlives ``deadline`` (abandoned)."""
    # `_thread` rather than `threading`: it is already loaded at start-up,
    # and an abandoned worker must not be joined at exit.
    _thread.start_new_thread(run, ())
    return not finished.acquire(timeout=deadline)


def _run_with_owned_output(run: Callable[[], None], finished: Any, deadline: float) -> bool:
    """The call when Karni owns its output (:mod:`karni.agent.common.output`).

    Descriptors 1 and 2 already lead to /dev/null and Karni's streams accept
    only its own thread, so only the Python-level streams are swapped, and
    the descriptors are put back in case the provider moved or closed them.
    """
    real_stdout, real_stderr = sys.stdout, sys.stderr
    cwd = _getcwd()
    sys.stdout = sys.stderr = _Discard()
    try:
        return _start(run, finished, deadline)
    finally:
        sys.stdout, sys.stderr = real_stdout, real_stderr
        restore_standard_fds()
        if cwd is not None and _getcwd() != cwd:
            os.chdir(cwd)


def _run_redirected(
    run: Callable[[], None], finished: Any, deadline: float, worker_ident: list[int]
) -> bool:
    """The call in a process whose output Karni does not own: redirect 1 and 2 meanwhile."""
    real_stdout, real_stderr = sys.stdout, sys.stderr
    for stream in (real_stdout, real_stderr):
        if stream is not None:
            _flush(stream)
    cwd = _getcwd()
    null_fd = os.open(os.devnull, os.O_WRONLY)
    saved = {fd: _redirect_fd(fd, null_fd) for fd in (1, 2)}
    os.close(null_fd)
    sys.stdout = sys.stderr = _Discard()
    abandoned = False
    try:
        abandoned = _start(run, finished, deadline)
    finally:
        if abandoned:
            _abandoned_threads.update(worker_ident)
            # fds 1 and 2 stay on /dev/null for good (the worker may still write
            # to them); Karni's own streams move to the saved descriptors, once.
            sys.stdout = _keep_writing_to(saved[1], real_stdout)
            sys.stderr = _keep_writing_to(saved[2], real_stderr)
        else:
            for fd, saved_fd in saved.items():
                if saved_fd is not None:
                    os.dup2(saved_fd, fd)
                    os.close(saved_fd)
            sys.stdout, sys.stderr = real_stdout, real_stderr
            if cwd is not None and _getcwd() != cwd:
                os.chdir(cwd)
    return abandoned


def _getcwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None
