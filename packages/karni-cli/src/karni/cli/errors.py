"""The errors the ``karni`` command reports: one hierarchy, each with its exit code.

Commands raise these; :func:`karni.cli.main.main` prints the message as one
line on stderr (``karni: <message>``) and exits with the error's code.
Messages name the offending thing and say what to do.
"""

from __future__ import annotations

__all__ = ["KarniError", "ProjectNotFoundError", "UsageError"]


class KarniError(Exception):
    """A failure the user can fix; printed as one line, exit status 1."""

    exit_code = 1


class UsageError(KarniError):
    """The command line itself is wrong (unknown option, missing argument); exit status 2."""

    exit_code = 2


class ProjectNotFoundError(KarniError):
    """No Karni project (``manage.py`` or ``karni.rules.py``) at or above the directory."""
