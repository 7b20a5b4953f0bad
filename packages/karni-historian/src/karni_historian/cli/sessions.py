"""``karni-historian sessions``: the stored sessions, newest first."""

from __future__ import annotations

import json
import sys

from karni_historian.cli.common import PROG, open_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print one line per session (or ``--json``)."""
    with open_store(root) as store:
        rows = [
            {
                "id": session.id,
                "source": session.source,
                "messages": session.message_count,
                "compartments": len(store.compartments(session.id)),
                "last_message_at": session.last_ts,
                "title": session.title,
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
            f"{row['id']}  {row['source']}  {row['messages']} messages  "
            f"{row['compartments']} compartments  {row['last_message_at'] or '-'}  "
            f"{row['title'] or 'untitled'}"
        )
    return 0
