"""Running a helper program with ``os.posix_spawn``, for :mod:`karni.agent.common.processes`.

This is the lower of the two modules: :mod:`~karni.agent.common.processes`
(the lookup, the subreaper, the :mod:`subprocess` fallback) imports it,
never the reverse, and takes :data:`SIGKILL` from here.

A provider that asks a program for its brief (Chronicle's) runs before every
edit, and importing :mod:`subprocess` pulls in ``locale``, ``re``, ``enum``,
``signal``, ``threading`` and ``selectors``: more than the rest of Karni's
own work. ``os.posix_spawn`` starts the program with what is already loaded,
and one ``select.poll`` waits for its output under the deadline.

The run is the one :func:`karni.agent.common.processes.run_program`
documents: no shell, stdin at ``/dev/null``, stderr discarded, a session of
its own (killed as a whole), nothing left running. ``posix_spawn`` has no
working-folder argument, so the process's working folder moves to ``cwd``
for the instant of the spawn and is put back through a descriptor of the
old one (which works even if that folder was renamed meanwhile). One lock
holds each spawn's move and return, so two spawns never interleave, not even
when a provider call that outlived its deadline is still running on a thread
Karni gave up on; Karni's own thread waits while a provider runs and uses
absolute paths. See docs/performance.md.
"""

from __future__ import annotations

import _thread
import os
import select
import time

__all__ = ["SIGKILL", "SpawnUnavailable", "run_spawned"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

SIGKILL = 9
"""The kill signal's number, the same on every POSIX system (``signal`` imports ``enum``)."""

_READ_SIZE = 1 << 16
_WORKING_FOLDER = _thread.allocate_lock()
"""Held while a spawn has moved the process's working folder."""


class SpawnUnavailable(Exception):
    """``os.posix_spawn`` cannot run the program here; use :mod:`subprocess` instead."""


def run_spawned(
    program: str,
    arguments: Sequence[str],
    cwd: str,
    timeout: float,
    meanwhile: Callable[[], object] | None = None,
) -> bytes | None:
    """Run ``program`` (an absolute path) in ``cwd``; its stdout if it exits 0 in time, else None.

    ``meanwhile``, if given, is called once the program has started, before
    its output is read (see :func:`karni.agent.common.processes.run_program`).

    Raises:
        SpawnUnavailable: This system's ``posix_spawn`` cannot start a new
            session, or the current working folder cannot be reopened.
    """
    deadline = time.monotonic() + timeout
    read_fd, write_fd = os.pipe()
    try:
        pid = _spawn(program, [program, *arguments], cwd, write_fd)
    except BaseException as error:
        os.close(read_fd)
        if isinstance(error, OSError):  # not startable, or no such working folder
            return None
        raise
    finally:
        os.close(write_fd)
    try:
        if meanwhile is not None:
            meanwhile()
        stdout = _read_until(read_fd, deadline)
        status = None if stdout is None else _exit_status(pid, deadline)
    except BaseException:
        _kill_and_reap(pid)
        raise
    finally:
        os.close(read_fd)
    if status is None:  # past the deadline
        _kill_and_reap(pid)
        return None
    _kill_group(pid)  # the session may hold a child still running after the program exited
    return stdout if status == 0 else None


def _spawn(program: str, argv: list[str], cwd: str, stdout_fd: int) -> int:
    """Start ``argv`` in ``cwd`` in a new session, stdout to ``stdout_fd``; its pid."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, stdout_fd, 1),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    # posix_spawn takes no working folder, so the move is its price; the bench row it earns its
    # place on is named beside `_SPAWN` in karni.agent.common.processes.
    with _WORKING_FOLDER:  # taken before "." is read: another spawn may have moved it
        try:
            here = os.open(".", os.O_RDONLY)
        except OSError:
            raise SpawnUnavailable("the working folder cannot be reopened") from None
        try:
            os.chdir(cwd)
            try:
                return os.posix_spawn(program, argv, os.environ, file_actions=actions, setsid=True)
            except NotImplementedError:
                raise SpawnUnavailable("posix_spawn cannot start a new session here") from None
            finally:
                os.fchdir(here)
        finally:
            os.close(here)


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything written to ``fd`` until end of file; None when the deadline comes first."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            return None
        chunk = os.read(fd, _READ_SIZE)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _exit_status(pid: int, deadline: float) -> int | None:
    """The exit status of ``pid`` once it has ended; None if it still runs at the deadline.

    The program's output ends as it exits, a moment before its status is
    there to collect: a pidfd (Linux) wakes the wait at that moment;
    elsewhere the wait polls with a growing pause.
    """
    ended = _await_exit(pid, deadline)
    if ended is False:
        return None
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)


def _await_exit(pid: int, deadline: float) -> bool | None:
    """Whether ``pid`` ended before the deadline, waited for on a pidfd; None without one."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or the process is already reaped
        return None
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        left = deadline - time.monotonic()
        return left > 0 and bool(poller.poll(left * 1000))
    finally:
        os.close(fd)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, SIGKILL)
    except OSError:  # the group is already empty
        pass


def _kill_and_reap(pid: int) -> None:
    """Kill the program's whole session group and wait for the program itself."""
    _kill_group(pid)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:  # already reaped
        pass
