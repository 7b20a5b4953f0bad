"""Running ``chronicle`` once: no shell, stdin closed, stderr discarded, a deadline.

"stdin closed" means ``/dev/null``: the child reads end-of-file at once, so it
can never wait for input or read the user's terminal. A truly closed fd 0
would be taken by the first file the child opens, which programs (and Node,
which reopens it) do not expect.

The child gets its own process group so that a run past the deadline is
killed together with anything it started (Chronicle runs ``git``); nothing is
left running and no pipe is left open. Heavy modules are imported here, inside
the function, because the provider module is imported before every edit.
See docs/chronicle-contract.md, "Exit status and the deadline".
"""

from __future__ import annotations

import os

__all__ = ["run_chronicle"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from subprocess import Popen


def run_chronicle(
    executable: str, arguments: Sequence[str], cwd: str, timeout: float
) -> bytes | None:
    """Run ``executable`` with ``arguments`` in ``cwd`` and return its stdout.

    Args:
        executable: The command's name (looked up on ``PATH``) or path.
        arguments: The arguments, each passed as one argument whatever it holds.
        cwd: The working directory for the run.
        timeout: Seconds the run may take; after that it is killed.

    Returns:
        The bytes written to stdout when the command exits with status 0, or
        None: not found, not startable, a non-zero exit, or past the deadline.
    """
    import shutil
    import subprocess

    program = shutil.which(executable)
    if program is None:
        return None
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
    try:
        stdout, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        return None
    except BaseException:
        _kill(process)
        raise
    if process.returncode != 0:
        return None
    return stdout


def _kill(process: Popen[bytes]) -> None:
    """Kill the child's whole process group, reap it and close its pipe."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (AttributeError, OSError):  # no process groups (Windows), or already gone
        try:
            process.kill()
        except OSError:
            pass
    process.wait()
    if process.stdout is not None:
        process.stdout.close()
