"""The double's call log, ``$FAKE_CHRONICLE_HOME/calls.jsonl``, and the processes it names.

Every run appends one JSON line before doing anything else, so a test can
assert exactly what ran (arguments, working directory, what stdin was) even
when the run is then killed; :class:`ChronicleCall` reads a line back.
:func:`pid_alive` tells whether a recorded process is still running.
"""

from __future__ import annotations

import os

from karni_provider_testkit.fake_chronicle.formats import dumps

__all__ = ["CALLS_FILE", "ChronicleCall", "pid_alive", "read_calls", "record_call", "stdin_state"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CALLS_FILE = "calls.jsonl"
"""The log's file name in the double's home."""


class ChronicleCall:
    """One recorded run of the double."""

    __slots__ = ("argv", "cwd", "grandchild", "pid", "stdin")

    def __init__(
        self, argv: list[str], cwd: str, pid: int, stdin: str, grandchild: int | None = None
    ) -> None:
        """Hold one line of the call log.

        Args:
            argv: The arguments, without the program name.
            cwd: The working directory of the run.
            pid: The double's process id.
            stdin: ``closed``, ``eof``, ``data`` or ``open`` (see :func:`stdin_state`).
            grandchild: The pid of the sleeping child it started, if configured.
        """
        self.argv = argv
        self.cwd = cwd
        self.pid = pid
        self.stdin = stdin
        self.grandchild = grandchild

    def __repr__(self) -> str:
        """Show the call like a constructor."""
        return f"ChronicleCall(argv={self.argv!r}, cwd={self.cwd!r}, pid={self.pid})"

    def __eq__(self, other: object) -> bool:
        """Calls are equal when every recorded field is."""
        if not isinstance(other, ChronicleCall):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    # Equal by value, so unhashable (as a dataclass with eq=True); typeshed types
    # __hash__ as a method, hence the ignore.
    __hash__ = None  # type: ignore[assignment]


def stdin_state() -> str:
    """What this process was given as stdin.

    Returns:
        ``closed`` (fd 0 not open), ``eof`` (end of file straight away, e.g.
        ``/dev/null``), ``data`` (something to read; one byte is consumed) or
        ``open`` (a terminal or pipe with nothing to read yet).
    """
    try:
        os.fstat(0)
    except OSError:
        return "closed"
    try:
        import select

        readable, _, _ = select.select([0], [], [], 0)
    except (OSError, ValueError):
        return "open"
    if not readable:
        return "open"
    try:
        return "data" if os.read(0, 1) else "eof"
    except OSError:
        return "open"


def record_call(home: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` to the log in ``home`` with one ``write`` (runs may overlap)."""
    os.makedirs(home, exist_ok=True)
    line = (dumps(entry) + "\n").encode("utf-8")
    descriptor = os.open(
        os.path.join(home, CALLS_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
    )
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def read_calls(home: str | os.PathLike[str]) -> list[ChronicleCall]:
    """Every call logged in ``home``, oldest first."""
    import json

    path = os.path.join(home, CALLS_FILE)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        entries = [json.loads(line) for line in handle if line.strip()]
    return [
        ChronicleCall(
            entry["argv"], entry["cwd"], entry["pid"], entry["stdin"], entry["grandchild"]
        )
        for entry in entries
    ]


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` is still running (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")
