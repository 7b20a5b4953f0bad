"""Which files an agent was already briefed on, per session: a brief is given once.

An agent that edits one file twenty times reads its brief once. The record
is ``.karni/local/hooks-briefed.json``: ``{"<agent> <session>": [time, [paths]]}``,
kept to the newest sessions (:mod:`karni.cli.hooks.records`). Reads and
updates happen under a lock, so two hooks running at once never both claim a
file. An event without a session id is never deduplicated.
"""

from __future__ import annotations

import os

from karni.cli.hooks.records import (
    KEEP_SESSIONS,
    read_records,
    session_key,
    update_record,
    value_of,
)

__all__ = ["BRIEFED_FILE", "KEEP_SESSIONS", "already_briefed", "claim"]

BRIEFED_FILE = "hooks-briefed.json"


def _paths(value: object) -> list[str]:
    if isinstance(value, list):
        return [path for path in value if isinstance(path, str)]
    return []


def already_briefed(root: str, agent: str, session: str | None, path: str) -> bool:
    """Whether ``path`` was briefed in this session (a cheap read, no lock, no write)."""
    if session is None:
        return False

    folder = os.path.join(root, ".karni", "local")
    record = read_records(folder, BRIEFED_FILE).get(session_key(agent, session))
    return path in _paths(value_of(record))


def claim(root: str, agent: str, session: str | None, path: str) -> bool:
    """Record ``path`` as briefed in the session; True only for the first claim.

    Raises:
        OSError: The record cannot be written (the caller then gives no brief).
    """
    if session is None:
        return True

    def add(value: object) -> tuple[list[str], bool]:
        paths = _paths(value)
        return (paths, False) if path in paths else ([*paths, path], True)

    first: bool = update_record(root, BRIEFED_FILE, session_key(agent, session), add)
    return first
