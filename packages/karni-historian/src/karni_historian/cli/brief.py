"""``karni-historian brief``: the history brief of a file or of the project."""

from __future__ import annotations

import sys

from karni.agent.common.paths import project_relative

from karni_historian.brief.briefs import file_brief, project_brief
from karni_historian.budget import CHARS_PER_TOKEN_FALLBACK
from karni_historian.cli.common import PROG, CliError, open_store, settings_of
from karni_historian.ingest.shared import refresh_if_changed
from karni_historian.shared_folder import fingerprint

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["BRIEF_REQUESTS", "BRIEF_TITLES", "run"]

BRIEF_REQUESTS = 100
"""The most requests ``brief FILE`` lists without ``--all``."""
BRIEF_TITLES = 200
"""The most episode titles ``brief`` (of the project) lists without ``--all``."""


def run(args: argparse.Namespace, root: str) -> int:
    """Print the brief, in the history budget's room unless ``--all``."""
    room = None if args.all else _brief_room(root)
    relative = None if args.path is None else _project_path(root, args.path)
    with open_store(root, create=bool(fingerprint(root))) as store:
        refresh_if_changed(store, root)  # the team's shared history, as the provider reads it
        if relative is None:
            titles = None if room is None else BRIEF_TITLES
            text = project_brief(store, max_titles=titles, room_chars=room)
            what = "the project"
        else:
            text = file_brief(store, relative, room_chars=room, max_requests=BRIEF_REQUESTS)
            what = relative
    if not text:
        print(f"{PROG}: no history recorded for {what}", file=sys.stderr)
        return 0
    print(text)
    return 0


def _brief_room(root: str) -> int:
    """The characters ``brief`` may print without ``--all``: the history budget's."""
    return int(settings_of(root).history_budget * CHARS_PER_TOKEN_FALLBACK)


def _project_path(root: str, path: str) -> str:
    relative = project_relative(root, path)
    if relative is None:
        raise CliError(f"{path} lies outside the project {root}; pass a path inside it", 2)
    return relative
