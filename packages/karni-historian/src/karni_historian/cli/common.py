"""What the ``karni-historian`` commands share: the error they report and what they open.

Each command finds the project, opens its store, loads its settings and
picks its sessions the same way, and says why it cannot in one line
(:class:`CliError`): usage errors exit 2, other failures 1.
"""

from __future__ import annotations

import os
import sys

from karni.agent.common.root import MARKERS_TEXT, find_project_root
from karni.agent.common.sanitize import CleanStream

from karni_historian.errors import ConfigurationError
from karni_historian.store import Store, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from karni_historian.condense.models.settings import ConfigFiles
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = [
    "PROG",
    "CliError",
    "condensable",
    "config_files",
    "open_store",
    "positive",
    "progress_stream",
    "project_root",
    "session_of",
    "sessions_to_run",
    "settings_of",
]

PROG = "karni-historian"


class CliError(Exception):
    """A failure reported as one line; ``exit_code`` 1 (failure) or 2 (usage)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        """Create the error."""
        super().__init__(message)
        self.exit_code = exit_code


def project_root(args: argparse.Namespace) -> str:
    """The project: ``--project DIR``, else found from the working directory."""
    project: str | None = args.project
    if project:
        if not os.path.isdir(project):
            raise CliError(f"--project {project} is not a directory; pass a project folder", 2)
        return os.path.abspath(project)

    root = find_project_root()
    if root is None:
        raise CliError(
            f"no Karni project at or above {os.path.abspath(os.getcwd())}: looked for "
            f"{MARKERS_TEXT}; run inside a project or pass --project DIR"
        )
    return root


def open_store(root: str, *, create: bool = False) -> Store:
    """The project's store, opened for writing (created first with ``create``)."""
    try:
        store = Store.open(root, create=create)
    except StoreError as error:
        raise CliError(str(error)) from None
    if store.note:
        print(f"{PROG}: {store.note}", file=sys.stderr)
    return store


def settings_of(root: str) -> Settings:
    """The project's ``[historian]`` settings, checked."""
    # bench row "karni-historian ingest" runs without it
    from karni_historian.condense.settings import load_settings

    try:
        return load_settings(root)
    except ConfigurationError as error:
        raise CliError(f"configuration error: {error}") from None


def session_of(store: Store, wanted: str | None) -> str:
    """The session ``--session`` names (a unique prefix will do), else the newest."""
    sessions = store.sessions()
    if wanted is not None:
        if store.session(wanted) is not None:
            return wanted
        matches = [s.id for s in sessions if s.id.startswith(wanted)]
        if len(matches) == 1:
            return matches[0]
        raise CliError(
            f"no session {wanted!r} in the store; run `{PROG} sessions` to list them"
            if not matches
            else f"session prefix {wanted!r} is ambiguous; give more of the id"
        )
    if not sessions:
        raise CliError(f"the store has no session yet; run `{PROG} ingest` first")
    return sessions[0].id


def sessions_to_run(store: Store, wanted: str | None) -> list[str]:
    """The session ``--session`` names, else every stored session, in id order.

    A session imported from the team's shared history has no raw messages
    here: it is never condensed (:func:`condensable`).
    """
    if wanted is not None:
        return [condensable(store, session_of(store, wanted))]
    shared = store.imported_sessions()
    ids = [s.id for s in store.sessions() if s.id not in shared]
    if not ids:
        mine = "of your own (only shared ones) " if shared else ""
        raise CliError(f"the store has no session {mine}yet; run `{PROG} ingest` first")
    return sorted(ids)


def condensable(store: Store, session_id: str) -> str:
    """``session_id``, unless it came from shared history (then a one-line error)."""
    if session_id in store.imported_sessions():
        raise CliError(
            f"session {session_id} came from the team's shared history (.karni/history/): "
            f"its raw messages are not here; condense it where it was recorded"
        )
    return session_id


def positive(value: str, what: str) -> int:
    """``value`` as a positive integer; a usage error naming ``what`` otherwise."""
    text = value.strip()
    if not text.isascii() or not text.isdigit() or int(text) <= 0:
        raise CliError(f"{what} must be a positive integer (got {value!r})", 2)
    return int(text)


def progress_stream(args: argparse.Namespace) -> Any:
    """Where progress bars go: stderr (drawn only on a terminal), or nowhere with ``-q``.

    The bar is Karni's own text and needs its carriage returns, so it goes to
    the stream under the sanitiser :func:`karni_historian.cli.main` puts on stderr.
    """
    if args.quiet:
        return None
    return sys.stderr.stream if isinstance(sys.stderr, CleanStream) else sys.stderr


def config_files(root: str) -> ConfigFiles:
    """The configuration files, with every historian model setting checked."""
    # bench row "karni-historian brief FILE" runs without it
    from karni_historian.condense.models.settings import ConfigFiles, validate_config

    try:
        files = ConfigFiles.load(root)
        validate_config(files)
    except ConfigurationError as error:
        raise CliError(f"configuration error: {error}") from None
    return files
