"""Running the real ``karni`` command in an isolated environment.

End-to-end checks must see what a user sees, so they run the installed
``karni`` in a subprocess. The environment is cleaned first: configuration and
caches point at temporary folders, the CI variables Karni reacts to are
removed, colour is off and Karni's own variables are dropped unless the test
sets them, so results do not depend on the machine running the tests.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from karni.agent.common.ci import CI_VARIABLES

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["CI_VARIABLES", "KarniRun", "find_karni_command", "isolated_environment", "run_karni"]


@dataclass(frozen=True)
class KarniRun:
    """What one ``karni`` run produced."""

    exit_code: int
    """The exit status."""

    stdout: str
    """Everything printed on stdout, decoded as UTF-8."""

    stderr: str
    """Everything printed on stderr, decoded as UTF-8."""

    args: list[str] = field(default_factory=list)
    """The full command line that was run."""

    def history_block(self) -> str | None:
        """The part of stdout from the first ``HISTORY:`` heading on, or None.

        The trailing newline is removed, so the length can be compared with
        the cap (``HISTORY_TOKEN_CAP * 4`` characters).
        """
        lines = self.stdout.splitlines()
        for index, line in enumerate(lines):
            if line.startswith("HISTORY: "):
                return "\n".join(lines[index:])
        return None


def find_karni_command() -> list[str]:
    """The command that starts ``karni``.

    The script next to ``sys.executable`` (the virtual environment under
    test) wins, then ``karni`` on ``PATH``, then ``python -P -m karni.cli`` (``-P``:
    the working folder, a project under test, is not put on ``sys.path``).
    """
    import shutil

    folder = Path(sys.executable).parent
    for candidate in ("karni", "karni.exe"):
        script = folder / candidate
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    found = shutil.which("karni")
    if found:
        return [found]
    return [sys.executable, "-P", "-m", "karni.cli"]


def isolated_environment(home: Path, env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """A copy of ``os.environ`` made safe for a reproducible ``karni`` run.

    Removed: the CI variables (:data:`CI_VARIABLES`) and every ``KARNI_*``
    variable. Set: ``XDG_CONFIG_HOME``, ``XDG_CACHE_HOME`` and
    ``KARNI_CACHE_DIR`` inside ``home``, ``NO_COLOR=1``, ``COLUMNS=80``,
    ``LINES=24`` and ``PYTHONUTF8=1``. ``PYTHONPATH`` is kept, so providers
    registered with ``install_provider`` are visible.

    Args:
        home: A folder for the run's configuration and caches.
        env: Variables to set last; a value of None removes the variable.
    """
    result = {
        key: value
        for key, value in os.environ.items()
        if key not in CI_VARIABLES and not key.startswith("KARNI_")
    }
    result.update(
        {
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "KARNI_CACHE_DIR": str(home / "cache" / "karni"),
            "NO_COLOR": "1",
            "COLUMNS": "80",
            "LINES": "24",
            "PYTHONUTF8": "1",
        }
    )
    for key, value in (env or {}).items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def run_karni(
    args: Sequence[str],
    *,
    home: Path,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout: float = 60.0,
    input: str | None = None,
) -> KarniRun:
    """Run ``karni ARGS`` in a subprocess with an isolated environment.

    Args:
        args: The arguments after ``karni``, e.g. ``["context", "--with-history"]``.
        home: A folder for configuration and caches (see :func:`isolated_environment`).
        cwd: The working directory; the current one by default.
        env: Extra variables; a value of None removes the variable.
        timeout: Seconds before the run is killed and ``subprocess.TimeoutExpired``
            is raised.
        input: Text for stdin; stdin is empty by default.

    Returns:
        The exit status and the decoded output.
    """
    import subprocess

    command = [*find_karni_command(), *args]
    completed = subprocess.run(
        command,
        cwd=cwd,
        env=isolated_environment(Path(home), env),
        input=input or "",
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
    )
    return KarniRun(completed.returncode, completed.stdout, completed.stderr, command)
