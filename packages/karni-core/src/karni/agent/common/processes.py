"""Finding and running a helper program: nothing from the working folder, nothing left running.

:func:`find_program` looks a command up in the absolute ``PATH`` entries
only: an empty or relative entry (which means the working folder, a
repository an agent was pointed at) is skipped, on Windows too, where the
standard lookup tries the working folder first.

:func:`run_program` runs it with no shell, stdin at ``/dev/null``, stderr
discarded and a deadline. The child gets its own process group, killed as a
whole; on Linux Karni is also made the "subreaper" of its descendants for
the call, so a process that moved to a session of its own (which leaves
the group) is handed back to Karni when its parent dies, and killed when the
call ends. See ``docs/security.md``.
"""

from __future__ import annotations

import os
import sys
import time

from karni.agent.common.spawn import SIGKILL, SpawnUnavailable, run_spawned

__all__ = ["find_program", "run_program"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from subprocess import Popen

_PR_SET_CHILD_SUBREAPER = 36


def _candidates(folder: str, name: str) -> Iterator[str]:
    yield os.path.join(folder, name)
    if sys.platform == "win32" and not os.path.splitext(name)[1]:
        for extension in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(os.pathsep):
            if extension:
                yield os.path.join(folder, name + extension)


def find_program(name: str) -> str | None:
    """The absolute path of the program ``name``, or None.

    A name holding a path separator must be absolute (a relative one would
    name a file in the working folder). A bare name is looked up in the
    absolute ``PATH`` entries, in order.
    """
    if os.sep in name or (os.altsep and os.altsep in name):
        return name if os.path.isabs(name) and _is_program(name) else None
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not folder or not os.path.isabs(folder):
            continue
        for candidate in _candidates(folder, name):
            if _is_program(candidate):
                return candidate
    return None


def _is_program(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


_PRCTL: list[Callable[..., int]] = []
"""The C library's ``prctl`` once looked up (a run switches the subreaper on, then off)."""


def _set_subreaper(on: bool) -> bool:
    """Make this process the subreaper of its descendants (Linux only); whether it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        if not _PRCTL:
            _PRCTL.append(_prctl())
        return bool(_PRCTL[0](_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError, TypeError):
        return False


def _prctl() -> Callable[..., int]:
    """The C library's ``prctl``, called through ``_ctypes`` (what :mod:`ctypes` is built on).

    Importing :mod:`ctypes` costs a quarter of a bare interpreter start, on
    every run of a provider's program; its C module alone costs a tenth of
    that. Anything missing from it falls back to :mod:`ctypes`.
    """
    try:
        import _ctypes

        class _Int(_ctypes._SimpleCData):  # type: ignore[type-arg]
            _type_ = "i"

        class _Function(_ctypes.CFuncPtr):
            _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
            _restype_ = _Int

        class _Library:
            _handle = _ctypes.dlopen(None)  # type: ignore[arg-type]  # None: the program itself

        function: Callable[..., int] = _Function(("prctl", _Library()))  # type: ignore[arg-type]
    except (ImportError, AttributeError, TypeError):
        # bench row "karni context --with-history FILE (Chronicle double store)" runs without it
        import ctypes

        function = ctypes.CDLL(None, use_errno=True).prctl
    return function


def _has_children() -> bool:
    """Whether this process has any child at all, asked without reaping one (POSIX)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    except (AttributeError, OSError):  # no waitid: let the scan answer
        return True
    return True


def _children() -> set[int]:
    """The pids whose parent is this process (from ``/proc``; empty elsewhere).

    Reading ``/proc`` means one file per process on the machine, so a process
    without any child (the usual case) is answered without it.
    """
    if not _has_children():
        return set()
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.add(int(entry))
    return found


def _other_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) != os.getpgrp()
    except OSError:
        return False


def _reap_orphans(before: set[int]) -> None:
    """Kill and reap every child handed to this process during the call, until none is left.

    Children in Karni's own process group are left alone: they are not the
    program's (a child the program started is in the program's group, or in
    a session of its own).
    """
    for _ in range(100):  # each round reaps one generation of a daemon's descendants
        orphans = {pid for pid in _children() - before if _other_group(pid)}
        if not orphans:
            return
        for pid in orphans:
            try:
                os.kill(pid, SIGKILL)
            except OSError:
                pass
        for pid in orphans:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass


def _kill(process: Popen[bytes]) -> None:
    """Kill the child's whole process group, reap it and close its pipe."""
    try:
        os.killpg(process.pid, SIGKILL)
    except (AttributeError, OSError):  # no process groups (Windows), or already gone
        try:
            process.kill()
        except OSError:
            pass
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _communicate(process: Popen[bytes], timeout: float) -> bytes | None:
    # bench row "karni context --with-history FILE (Chronicle double store)" runs without it
    import subprocess

    try:
        stdout, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        return None
    except BaseException:
        _kill(process)
        raise
    try:  # the group may hold a child still running after the program itself exited
        os.killpg(process.pid, SIGKILL)
    except (AttributeError, OSError):
        pass
    return stdout if process.returncode == 0 else None


def run_program(
    executable: str,
    arguments: Sequence[str],
    cwd: str,
    timeout: float,
    *,
    meanwhile: Callable[[], object] | None = None,
) -> bytes | None:
    """Run ``executable`` with ``arguments`` in ``cwd`` and return its stdout.

    Args:
        executable: The command's name (see :func:`find_program`) or absolute path.
        arguments: The arguments, each passed as one argument whatever it holds.
        cwd: The working directory for the run.
        timeout: Seconds the run may take; after that it is killed.
        meanwhile: Called once the program has started, in this thread,
            before its output is read: work the caller needs afterwards (the
            imports that handle the output, say) is then done while the
            program starts up instead of after it. Its time counts against
            ``timeout``; if it raises, the program is killed and the error
            propagates.

    Returns:
        The bytes written to stdout when the command exits with status 0, or
        None: not found, not startable, a non-zero exit, or past the deadline.
        Either way nothing it started is left running.
    """
    program = find_program(executable)
    if program is None:
        return None
    reaping = _set_subreaper(True)
    before = _children() if reaping else set()
    try:
        if _SPAWN:
            try:
                return run_spawned(program, arguments, cwd, timeout, meanwhile)
            except SpawnUnavailable:
                pass
        return _run_popen(program, arguments, cwd, timeout, meanwhile)
    finally:
        if reaping:
            _reap_orphans(before)
            _set_subreaper(False)


# posix_spawn, not subprocess: bench row `karni context --with-history FILE (Chronicle double
# store)` is 38.2 ms this way and 46.7 ms through subprocess (Karni's share 1.68x against 2.82x).
_SPAWN = hasattr(os, "posix_spawn") and hasattr(os, "fchdir") and hasattr(os, "killpg")
"""Whether :mod:`karni.agent.common.spawn` can run programs here (POSIX)."""


def _run_popen(
    program: str,
    arguments: Sequence[str],
    cwd: str,
    timeout: float,
    meanwhile: Callable[[], object] | None,
) -> bytes | None:
    """The run through :mod:`subprocess`, where ``os.posix_spawn`` cannot do it (Windows)."""
    # bench row "karni context --with-history FILE (Chronicle double store)" runs without it
    import subprocess

    deadline = time.monotonic() + timeout

    try:
        process = subprocess.Popen(
            [program, *arguments],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    if meanwhile is not None:
        try:
            meanwhile()
        except BaseException:
            _kill(process)
            raise
    return _communicate(process, max(deadline - time.monotonic(), 0.0))
