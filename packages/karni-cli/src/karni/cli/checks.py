"""The checks ``karni check`` runs, each returning a :class:`CheckResult`.

Built in: agent adapters fresh (what ``karni rules sync --check`` checks),
``karni.rules.py`` valid, settings valid, and Django's system checks through
the project's own interpreter, which run only for a project the user trusts
(``karni trust``; see ``docs/security.md``): the rest never run the
project's code. Anything registered under the ``karni.checks`` entry-point
group runs too::

    [project.entry-points."karni.checks"]
    migrations-applied = "my_pkg.checks:migrations_applied"

The entry point names a callable taking the project root (a
:class:`pathlib.Path`). It returns None or an empty list when the check
passes, and a message (or a list of messages) naming each failure otherwise;
an exception counts as a failure.
"""

from __future__ import annotations

import os

from karni.agent.common.entry_points import entry_points, load_value
from karni.cli.errors import KarniError
from karni.cli.rules.adapters import missing_and_stale
from karni.cli.rules.file import load_rules_file
from karni.cli.rules.model import RulesFileError

__all__ = [
    "CHECKS_GROUP",
    "FAILED",
    "NOT_TRUSTED",
    "OK",
    "SKIPPED",
    "CheckResult",
    "builtin_checks",
    "django_system_checks",
    "registered_checks",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable

    CheckOutcome = str | Iterable[object] | None
    """What a registered check returns: nothing, or a message, or a list of messages."""

CHECKS_GROUP = "karni.checks"
"""The entry-point group other packages register checks under."""

OK = "ok"
FAILED = "failed"
SKIPPED = "skipped"

NOT_TRUSTED = "not run: the project is not trusted (`karni trust`)"
"""The detail of Django's checks when the project's interpreter may not run."""

DJANGO_TIMEOUT = 300.0
"""Seconds Django's system checks may take before they count as failed."""


class CheckResult:
    """The outcome of one check: its name, ``ok``/``failed``/``skipped``, and why."""

    __slots__ = ("detail", "name", "status")

    def __init__(self, name: str, status: str, detail: str = "") -> None:
        """Record an outcome."""
        self.name = name
        self.status = status
        self.detail = detail

    def __repr__(self) -> str:
        return f"CheckResult({self.name!r}, {self.status!r}, {self.detail!r})"


def check_adapters(root: str) -> CheckResult:
    """The agent adapters are what ``karni rules sync`` would write."""
    name = "agent adapters"

    try:
        missing, stale = missing_and_stale(root)
    except KarniError as error:
        return CheckResult(name, FAILED, str(error))
    parts = [f"missing: {', '.join(missing)}"] if missing else []
    parts += [f"out of date: {', '.join(stale)}"] if stale else []
    if parts:
        return CheckResult(name, FAILED, f"{'; '.join(parts)}; run `karni rules sync`")
    return CheckResult(name, OK, "fresh")


def check_rules_file(root: str) -> CheckResult:
    """``karni.rules.py`` (when present) is valid."""
    name = "karni.rules.py"
    if not os.path.isfile(os.path.join(root, "karni.rules.py")):
        return CheckResult(name, OK, "none (the defaults apply)")

    try:
        load_rules_file(root)
    except RulesFileError as error:
        return CheckResult(name, FAILED, str(error))
    return CheckResult(name, OK, "valid")


def _project_python(root: str) -> str | None:
    for relative in (".venv/bin/python", ".venv/Scripts/python.exe"):
        path = os.path.join(root, *relative.split("/"))
        if os.path.isfile(path):
            return path
    return None


def _last_line(*texts: str) -> str:
    for text in texts:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return "no output"


def _run_python(
    python: str, arguments: list[str], root: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run the project's interpreter in ``root`` with no input, capturing its output as text."""
    # bench row "karni check" runs without it
    import subprocess

    return subprocess.run(
        [python, *arguments],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
    )


def django_system_checks(
    root: str, timeout: float = DJANGO_TIMEOUT, *, trusted: bool | None = None
) -> CheckResult:
    """``manage.py check`` through the project's ``.venv`` interpreter, when it has Django.

    The interpreter is the repository's own program: it runs only when the
    project is trusted; otherwise the result is skipped with
    :data:`NOT_TRUSTED`. By default (``trusted=None``) that is the user's trust
    record's answer (:func:`karni.agent.common.trust.is_trusted`), asked only
    once the project has an interpreter, so a project without one never reads
    the record; ``True`` or ``False`` decides in its place.
    """
    name = "django system checks"
    if not os.path.isfile(os.path.join(root, "manage.py")):
        return CheckResult(name, SKIPPED, "no manage.py")
    python = _project_python(root)
    if python is None:
        return CheckResult(name, SKIPPED, "no .venv/bin/python in the project")
    if trusted is None:
        # bench row "karni check" runs without it
        from karni.agent.common.trust import is_trusted

        trusted = is_trusted(root)
    if not trusted:
        return CheckResult(name, SKIPPED, NOT_TRUSTED)
    # bench row "karni check" runs without it
    import subprocess  # only when a check runs: it costs more than the rest of `karni check`

    relative = os.path.relpath(python, root).replace(os.sep, "/")
    try:
        probe = _run_python(python, ["-c", "import django"], root, 60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return CheckResult(name, SKIPPED, f"cannot run {relative}: {error}")
    if probe.returncode != 0:
        return CheckResult(name, SKIPPED, f"Django is not installed for {relative}")
    command = f"{relative} manage.py check"
    try:
        result = _run_python(python, ["manage.py", "check"], root, timeout)
    except subprocess.TimeoutExpired:
        return CheckResult(name, FAILED, f"`{command}` took over {timeout:g} s")
    except OSError as error:
        return CheckResult(name, FAILED, f"cannot run `{command}`: {error}")
    if result.returncode != 0:
        why = _last_line(result.stderr, result.stdout)
        return CheckResult(name, FAILED, f"{why} (run `{command}` for details)")
    return CheckResult(name, OK, _last_line(result.stdout, result.stderr))


def _registered(point_name: str, value: str, root: str) -> CheckResult:
    # bench row "karni check" runs without it
    from pathlib import Path  # a registered check is handed a Path

    name = f"{point_name} ({CHECKS_GROUP})"
    try:
        check: Callable[[Path], CheckOutcome] = load_value(value)
    except Exception as error:  # importing third-party code can raise anything
        return CheckResult(
            name, FAILED, f"cannot load `{value}`: {type(error).__name__}: {error}; reinstall it"
        )
    try:
        outcome = check(Path(root))
    except Exception as error:  # a broken check is a failed check, not a broken CLI
        return CheckResult(name, FAILED, f"raised {type(error).__name__}: {error}")
    if not outcome:
        return CheckResult(name, OK)
    if isinstance(outcome, str):
        messages = [outcome]
    else:
        try:
            messages = [str(item) for item in outcome]
        except TypeError:
            return CheckResult(
                name,
                FAILED,
                f"returned {type(outcome).__name__}, not None, a message or a list of messages; "
                f"fix `{value}`",
            )
    return CheckResult(name, FAILED, "; ".join(messages))


def registered_checks(root: str) -> list[CheckResult]:
    """Run every check registered under ``karni.checks``, in name order."""
    points = sorted(entry_points(CHECKS_GROUP), key=lambda point: point.name)
    return [_registered(point.name, point.value, root) for point in points]


def builtin_checks() -> list[Callable[[str], CheckResult]]:
    """Karni's own one-result checks, in the order they run.

    ``karni check`` runs the settings check
    (:func:`karni.cli.config.checking.settings_results`) after them.
    """
    return [check_adapters, check_rules_file]
