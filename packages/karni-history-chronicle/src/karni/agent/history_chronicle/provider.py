"""``ChronicleProvider``: Karni's history provider for Gigai Chronicle.

It satisfies Karni's duck-typed provider protocol without importing Karni:
``detect`` is a directory walk, ``context`` and ``project_context`` run the
``chronicle`` command and brief its JSON reply, ``full_command`` names the
command that prints the whole brief. Any failure is silence (None), never an
exception or output of its own. What the provider relies on of ``chronicle``
(commands, arguments, exit codes, the JSON envelope, "no brief") is
docs/chronicle-contract.md.
"""

from __future__ import annotations

import os

from karni.agent.history_chronicle.store import command_path, find_store_root

__all__ = ["ChronicleProvider"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_EXECUTABLE = "chronicle"
DEFAULT_TIMEOUT = 5.0
DEFAULT_LIMIT = 5


def _check_timeout(timeout: object) -> float:
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        seconds = float(timeout)
        if 0 < seconds < float("inf"):
            return seconds
    raise ValueError(
        f"ChronicleProvider: `timeout` must be a positive number of seconds, got {timeout!r}"
    )


def _check_limit(limit: object) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"ChronicleProvider: `limit` must be a whole number >= 1, got {limit!r}")
    return limit


def _check_executable(executable: object) -> str:
    if not isinstance(executable, str) or not executable.strip():
        raise ValueError(
            f"ChronicleProvider: `executable` must name the chronicle command, got {executable!r}"
        )
    return executable


class ChronicleProvider:
    """Briefs a file, or the project, from a Gigai Chronicle store.

    Args:
        executable: The ``chronicle`` command: a name looked up on ``PATH``,
            or a path.
        timeout: Seconds one ``chronicle`` run may take; a longer run is
            killed and gives no brief.
        limit: How many of the most recent prompts that shaped a file to ask
            for (``--limit``).

    Raises:
        ValueError: For a timeout that is not a positive number, a limit below
            1 or an empty executable.
    """

    name = "gigai-chronicle"
    """The provider's name in Karni's ``HISTORY:`` heading and entry-point group."""

    store_markers = (".chronicle",)
    """Karni's speed hint: no ``.chronicle`` here or above means no store."""

    store_markers_walk_up = True

    accepts_str_root = True
    """Every method takes the root as a ``str`` too, so Karni need not import ``pathlib``."""

    calls_in_process = True
    """Its calls never end the process, so Karni makes them in its own, without a child."""

    def __init__(
        self,
        executable: str = DEFAULT_EXECUTABLE,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        limit: int = DEFAULT_LIMIT,
    ) -> None:
        """Configure the provider; see the class docstring."""
        self.executable = _check_executable(executable)
        self.timeout = _check_timeout(timeout)
        self.limit = _check_limit(limit)

    def __repr__(self) -> str:
        """Show the configuration, as ``karni doctor`` may print it."""
        return (
            f"ChronicleProvider(executable={self.executable!r}, "
            f"timeout={self.timeout!r}, limit={self.limit!r})"
        )

    def detect(self, project_root: str | os.PathLike[str]) -> bool:
        """Whether a ``.chronicle/`` directory sits at or above ``project_root``.

        A few ``stat`` calls: no process is started and the store is not read.
        """
        return find_store_root(project_root) is not None

    def context(self, project_root: str | os.PathLike[str], path: str) -> str | None:
        """The compacted ``chronicle context`` brief for ``path``, or None.

        Args:
            project_root: The Karni project's root.
            path: The file, relative to ``project_root`` (POSIX). The command
                runs from the directory holding ``.chronicle/`` and is given
                the path relative to that directory.
        """
        store_root = find_store_root(project_root)
        if store_root is None or not isinstance(path, str):
            return None
        argument = command_path(store_root, project_root, path)
        if argument is None:
            return None
        arguments = ["context", argument, "--json", "--limit", str(self.limit)]
        payload = self._ask(store_root, arguments, "context")
        if payload is None:
            return None
        from karni.agent.history_chronicle.brief import file_brief

        return file_brief(payload)

    def project_context(self, project_root: str | os.PathLike[str]) -> str | None:
        """The project's decisions, newest first, from ``chronicle knowledge``; or None."""
        store_root = find_store_root(project_root)
        if store_root is None:
            return None
        arguments = ["knowledge", "--type", "decision", "--json"]
        payload = self._ask(store_root, arguments, "knowledge")
        if payload is None:
            return None
        from karni.agent.history_chronicle.brief import project_brief

        return project_brief(payload)

    def full_command(self, project_root: str | os.PathLike[str], path: str | None) -> str:
        """The shell command that prints the full brief, quoted for copy and paste.

        The path stays project-relative: Chronicle resolves it against the
        directory it is run from, so the command works from the project root
        wherever the store sits.
        """
        import shlex

        program = shlex.quote(self.executable)
        if path is None:
            return f"{program} knowledge --type decision"
        argument = f"./{path}" if path.startswith("-") else path
        return f"{program} context {shlex.quote(argument)}"

    def _ask(self, store_root: str, arguments: list[str], command: str) -> dict[str, Any] | None:
        from karni.agent.history_chronicle.command import run_chronicle

        stdout = run_chronicle(
            self.executable, arguments, store_root, self.timeout, meanwhile=_load_reply_modules
        )
        if stdout is None:
            return None
        from karni.agent.history_chronicle.envelope import parse_envelope

        return parse_envelope(stdout, command)


def _load_reply_modules() -> None:
    """Import what reads and briefs the reply, while ``chronicle`` starts up.

    The provider waits for ``chronicle`` anyway (a Node program takes tens of
    milliseconds to start); loading these modules then, rather than after the
    reply, takes their cost off the run (docs/performance.md).
    """
    import karni.agent.history_chronicle.brief
    import karni.agent.history_chronicle.envelope  # noqa: F401
    from karni.agent.common.jsontext import load_scanner

    load_scanner()
