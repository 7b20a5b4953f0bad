"""``karni-historian status``: a session's history compression facts, as text or JSON."""

from __future__ import annotations

import json

from karni_historian.brief.status import status_data, status_text
from karni_historian.cli.common import PROG, config_files, open_store, session_of, settings_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["STATUS_SESSIONS", "run"]

STATUS_SESSIONS = 10
"""The newest sessions ``status`` reports, without ``--session``."""


def run(args: argparse.Namespace, root: str) -> int:
    """Print the facts of the newest sessions, or of ``--session`` (with ``--json``: one object).

    Every fact with ``-v``; ``--json`` keeps one session's stable shape.
    """
    settings = settings_of(root)
    files = config_files(root)
    with open_store(root) as store:
        if args.json or args.session is not None:
            chosen = [session_of(store, args.session)]
        else:
            chosen = [session.id for session in store.sessions()]
            session_of(store, None)  # an empty store gets its one line
        shown = chosen[:STATUS_SESSIONS]
        found = [status_data(store, session_id, settings, files) for session_id in shown]
    if args.json:
        print(json.dumps(found[0], ensure_ascii=False, indent=2, sort_keys=True))
        return 0
    print("\n\n".join(status_text(data, verbose=args.verbose) for data in found))
    if len(chosen) > len(shown):
        older = len(chosen) - len(shown)
        print(f"\n{older} older session(s): `{PROG} sessions` lists them, `--session ID` shows one")
    return 0
