"""What ``run``, ``wrapup`` and ``recomp`` share: each session's historian, told and reported.

A session's configured historian may be disabled (said on stdout, and the
session skipped); with ``-v`` each chunk and model call is told on stderr;
a run's outcome is printed, a failure always and on stderr.
"""

from __future__ import annotations

import sys

from karni_historian.cli.common import (
    PROG,
    config_files,
    open_store,
    sessions_to_run,
    settings_of,
)
from karni_historian.condense.models.session import prepare_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from karni_historian.condense.models.session import PreparedSession
    from karni_historian.condense.models.settings import ConfigFiles
    from karni_historian.condense.runner import RunOutcome
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = ["each_session", "prepared", "tell_notes", "traced"]


def traced(args: argparse.Namespace, session_id: str, historian: Any) -> Any:
    """The historian hook to run with: with ``-v``, one that tells each chunk and call."""
    if not args.verbose:
        return historian
    # bench row "karni-historian wrapup" runs without it
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.trace import TracedHistorian

    def write(line: str) -> None:
        print(f"{PROG}: session {session_id}: {line}", file=sys.stderr, flush=True)

    return TracedHistorian(historian, write)


def _report(outcome: RunOutcome, args: argparse.Namespace) -> bool:
    """Print a run's outcome (a failure on stderr, always); True when it failed."""
    if outcome.failed:
        print(f"{PROG}: {outcome.message()}", file=sys.stderr)
    elif not args.quiet:
        print(outcome.message())
    return outcome.failed


def prepared(
    store: Store, session_id: str, settings: Settings, files: ConfigFiles
) -> PreparedSession | None:
    """The session's configured historian; prints why when it is disabled (then None)."""
    session = prepare_session(store, session_id, settings, files)
    if session.disabled:
        print(f"session {session_id}: {session.disabled_message()}")
        return None
    return session


def tell_notes(session_id: str, session: PreparedSession) -> None:
    """Print, on stderr, what preparing the session's historian noted."""
    for note in session.notes:
        print(f"{PROG}: session {session_id}: note: {note}", file=sys.stderr)


def each_session(
    args: argparse.Namespace,
    root: str,
    condense: Callable[[Store, str, PreparedSession], RunOutcome | None],
) -> int:
    """Condense every session asked for with its configured historian; the exit code."""
    settings = settings_of(root)
    files = config_files(root)
    failed = False
    with open_store(root) as store:
        for session_id in sessions_to_run(store, args.session):
            session = prepared(store, session_id, settings, files)
            if session is None:
                continue
            outcome = condense(store, session_id, session)
            tell_notes(session_id, session)
            failed |= outcome is not None and _report(outcome, args)
    return 1 if failed else 0
