"""``karni-historian sessions``: the stored sessions, newest first."""

from __future__ import annotations

import json
import sys

from karni_historian.cli.common import PROG, open_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print one line per session (or ``--json``); a teammate's shared one says who shared it."""
    with open_store(root) as store:
        shared, authors = store.imported_sessions(), store.shared_authors()
        rows = [
            {
                "id": session.id,
                "source": session.source,
                "messages": session.message_count,
                "compartments": len(store.compartments(session.id)),
                "last_message_at": session.last_ts,
                "title": session.title,
                "shared": session.id in shared,
                "author": authors.get(session.id),
            }
            for session in store.sessions()
        ]
    if args.json:
        print(json.dumps({"sessions": rows}, indent=2))
        return 0
    if not rows:
        print(f"no sessions yet; run `{PROG} ingest`", file=sys.stderr)
        return 0
    for row in rows:
        print(
            f"{row['id']}  {row['source']}  {_held(row)}  "
            f"{row['compartments']} compartments  {row['last_message_at'] or '-'}  "
            f"{row['title'] or 'untitled'}"
        )
    return 0


def _held(row: Mapping[str, object]) -> str:
    """``N messages``, or who shared it: a shared session has no raw messages here."""
    if not row["shared"]:
        return f"{row['messages']} messages"
    return f"shared by {row['author']}" if row["author"] else "shared"
