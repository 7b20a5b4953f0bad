"""``karni-historian share [--session ID | --all] [--dry-run] [--auto]``: history for the team.

Writes each named session's condensed history to ``.karni/history/ID.json``
(:mod:`karni_historian.share`), one line per session on stdout; a session
refused for a secret is one line on stderr and the command exits 1 after
sharing the others. ``--dry-run`` prints each file's text instead of
writing it. ``--auto`` (what the end-of-session hook runs) shares the newest
session only when the user's own settings opt this project in.
"""

from __future__ import annotations

import sys

from karni_historian.cli.common import PROG, CliError, open_store, session_of
from karni_historian.consent import consented
from karni_historian.errors import ShareError
from karni_historian.ingest.shared import refresh_if_changed
from karni_historian.share.write import share_session, shareable_sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from karni_historian.share.write import Shared

__all__ = ["run"]


def _line(shared: Shared, dry_run: bool) -> str:
    size = len(shared.text.encode("utf-8"))
    if shared.state == "empty":
        return f"session {shared.session_id}: nothing condensed yet to share"
    if shared.state == "unchanged":
        return f"session {shared.session_id}: {shared.path} unchanged ({size:,} bytes)"
    verb = "would write" if dry_run else "shared to"
    return f"session {shared.session_id}: {verb} {shared.path} ({size:,} bytes)"


def run(args: argparse.Namespace, root: str) -> int:
    """Share the sessions asked for; exit 1 when one was refused."""
    if args.auto and not consented(root):
        print(
            f"{PROG}: sharing is off for this project: set `historian.share = true` (or list "
            f"this project's folder) in your user configuration, or run `{PROG} share`",
            file=sys.stderr,
        )
        return 0
    refused = 0
    with open_store(root, create=True) as store:
        refresh_if_changed(store, root)  # a teammate's session is theirs to share, never ours
        sessions = shareable_sessions(store)
        if args.share_session is not None:
            wanted = [session_of(store, args.share_session)]
            if wanted[0] not in sessions:
                raise CliError(
                    f"session {wanted[0]} came from shared history; only its author shares it"
                )
        elif args.all:
            wanted = sessions
        elif sessions:
            wanted = sessions[:1]
        else:
            raise CliError(f"the store has no session of yours yet; run `{PROG} ingest` first")
        for session_id in wanted:
            try:
                shared = share_session(store, root, session_id, dry_run=args.dry_run)
            except ShareError as error:
                print(f"{PROG}: {error}", file=sys.stderr)
                refused += 1
                continue
            if args.dry_run and shared.text:
                print(f"# {shared.path}")
                sys.stdout.write(shared.text)
            elif not args.quiet:
                print(_line(shared, args.dry_run))
    return 1 if refused else 0
