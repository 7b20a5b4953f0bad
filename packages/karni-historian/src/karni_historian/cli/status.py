"""``karni-historian status``: a session's history compression facts, as text or JSON."""

from __future__ import annotations

import json

from karni_historian.brief.status import status_data, status_text
from karni_historian.cli.common import (
    PROG,
    CliError,
    config_files,
    open_store,
    session_of,
    settings_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["STATUS_SESSIONS", "run"]

STATUS_SESSIONS = 10
"""The newest sessions ``status`` reports, without ``--session``."""


def run(args: argparse.Namespace, root: str) -> int:
    """Print the facts of the newest sessions, or of ``--session`` (with ``--json``: one object).

    Without ``--session`` only the user's own sessions are reported (a line
    counts the teammates' shared ones). Every fact with ``-v``; ``--json``
    keeps one session's stable shape.
    """
    settings = settings_of(root)
    files = config_files(root)
    with open_store(root) as store:
        shared = store.imported_sessions()
        if args.session is not None:
            chosen = [session_of(store, args.session)]
        else:
            session_of(store, None)  # an empty store gets its one line
            chosen = [session.id for session in store.sessions() if session.id not in shared]
            if args.json:
                chosen = [_newest_own(chosen, len(shared))]
        shown = chosen[:STATUS_SESSIONS]
        found = [status_data(store, session_id, settings, files) for session_id in shown]
    if args.json:
        print(json.dumps(found[0], ensure_ascii=False, indent=2, sort_keys=True))
        return 0
    if found:
        print("\n\n".join(status_text(data, verbose=args.verbose) for data in found))
    if len(chosen) > len(shown):
        older = len(chosen) - len(shown)
        print(f"\n{older} older session(s): `{PROG} sessions` lists them, `--session ID` shows one")
    if shared and args.session is None:
        line = (
            f"{len(shared)} shared session(s) are read from .karni/history/, the team's "
            f"history: `{PROG} sessions` lists them, `--session ID` shows one"
        )
        print(f"\n{line}" if found else f"no session of your own yet; {line}")
    return 0


def _newest_own(own: list[str], shared: int) -> str:
    """The newest of the user's own sessions (``status --json`` without ``--session``)."""
    if not own:
        raise CliError(
            f"the store has no session of your own yet, only {shared} from the team's history; "
            f"pass `--session ID` (`{PROG} sessions` lists them)"
        )
    return own[0]
