"""The errors the ``karni`` command reports: one hierarchy, each with its exit code.

Commands raise these; :func:`karni.cli.main.main` prints the message as one
line on stderr (``karni: <message>``) and exits with the error's code.
Messages name the offending thing and say what to do.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["KarniError", "ProjectNotFoundError", "UsageError", "unknown_option"]


class KarniError(Exception):
    """A failure the user can fix; printed as one line, exit status 1."""

    exit_code = 1


class UsageError(KarniError):
    """The command line itself is wrong (unknown option, missing argument); exit status 2."""

    exit_code = 2


class ProjectNotFoundError(KarniError):
    """No Karni project (``manage.py`` or ``karni.rules.py``) at or above the directory."""


def unknown_option(option: str, command: str, known: Iterable[str], usage: str) -> UsageError:
    """The error for an unknown ``option`` of ``command``, naming the closest known one."""
    # bench row "karni context" runs without it
    from karni.agent.common.terminal import did_you_mean

    name = option.partition("=")[0]
    return UsageError(
        f"unknown option `{option}` for `{command}`{did_you_mean(name, known)}; {usage}"
    )
