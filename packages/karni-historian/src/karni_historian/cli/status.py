"""``karni-historian status``: a session's history compression facts, as text or JSON."""

from __future__ import annotations

import json

from karni_historian.brief.status import status_data, status_text
from karni_historian.cli.common import config_files, open_store, session_of, settings_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print the facts (every one with ``-v``, all as one object with ``--json``)."""
    settings = settings_of(root)
    files = config_files(root)
    with open_store(root) as store:
        data = status_data(store, session_of(store, args.session), settings, files)
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True))
    else:
        print(status_text(data, verbose=args.verbose))
    return 0
