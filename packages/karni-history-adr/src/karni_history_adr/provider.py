"""The ``adr`` history provider: Architecture Decision Records as a history brief.

Registered as ``adr`` under ``karni.history_providers``. ``detect`` is a
directory check; the records are read only when a brief is asked for, and
this module imports nothing else until then, since Karni loads it before every
``karni context``.
"""

from __future__ import annotations

import os

from karni_history_adr.discovery import ADR_DIRECTORIES, has_adr_directory

__all__ = ["COMMAND", "AdrProvider"]

COMMAND = "karni-history-adr"
"""The console script that prints the full, uncapped brief."""


class AdrProvider:
    """Briefs an agent with the decision records that concern a file."""

    name = "adr"
    """Shown in Karni's ``HISTORY:`` heading."""

    store_markers = ADR_DIRECTORIES
    """Karni's speed hint: without one of these folders there is no store."""

    accepts_str_root = True
    """Every method takes the root as a ``str`` too, so Karni need not import ``pathlib``."""

    calls_in_process = True
    """Its calls never end the process, so Karni makes them in its own, without a child."""

    def detect(self, project_root: str | os.PathLike[str]) -> bool:
        """Whether ``doc/adr/``, ``docs/decisions/`` or ``docs/adr/`` exists; reads nothing."""
        try:
            return has_adr_directory(project_root)
        except (OSError, TypeError, ValueError):
            return False

    def context(self, project_root: str | os.PathLike[str], path: str) -> str | None:
        """The records mentioning ``path``, its module or its directory; None if none do.

        Records that were superseded, deprecated or rejected come first, as
        approaches not to repeat, each naming what replaced it; then the
        standing decisions, newest first. One line per record.
        """
        try:
            from karni_history_adr.brief import format_context
            from karni_history_adr.matching import records_mentioning
            from karni_history_adr.records import load_records

            if not isinstance(path, str):
                return None
            records = load_records(project_root)
            return format_context(records_mentioning(records, path), records)
        except (OSError, UnicodeError, ValueError, RecursionError):
            return None

    def project_context(self, project_root: str | os.PathLike[str]) -> str | None:
        """The accepted decisions, newest first; None when there are none."""
        try:
            from karni_history_adr.brief import format_project
            from karni_history_adr.records import load_records

            return format_project(load_records(project_root))
        except (OSError, UnicodeError, ValueError, RecursionError):
            return None

    def full_command(self, project_root: str | os.PathLike[str], path: str | None) -> str | None:
        """The command, run from the project root, that prints the whole brief."""
        if path is None:
            return f"{COMMAND} list --accepted"
        import shlex

        return f"{COMMAND} show {shlex.quote(path)}"
