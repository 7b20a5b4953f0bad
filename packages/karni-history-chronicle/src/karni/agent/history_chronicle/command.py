"""Running ``chronicle`` once: no shell, stdin closed, stderr discarded, a deadline.

"stdin closed" means ``/dev/null``: the child reads end-of-file at once, so it
can never wait for input or read the user's terminal. A truly closed fd 0
would be taken by the first file the child opens, which programs (and Node,
which reopens it) do not expect.

The run itself is karni-core's :func:`karni.agent.common.processes.run_program`:
``chronicle`` is looked up only in absolute ``PATH`` entries, and nothing it
starts (``git``, or a process that moved to a session of its own) outlives
the call. It is imported here, inside the function, because the provider
module is imported before every edit.
See docs/chronicle-contract.md, "Exit status and the deadline".
"""

from __future__ import annotations

__all__ = ["run_chronicle"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


def run_chronicle(
    executable: str,
    arguments: Sequence[str],
    cwd: str,
    timeout: float,
    *,
    meanwhile: Callable[[], object] | None = None,
) -> bytes | None:
    """Run ``chronicle`` once; see :func:`karni.agent.common.processes.run_program`.

    Returns:
        Its stdout when it exits with status 0, else None.
    """
    from karni.agent.common.processes import run_program

    return run_program(executable, arguments, cwd, timeout, meanwhile=meanwhile)
