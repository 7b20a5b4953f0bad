"""Which files an agent was already briefed on, per session: a brief is given once.

An agent that edits one file twenty times reads its brief once. The record
is ``.karni/local/hooks-briefed.json``: ``{"<agent> <session>": [time, [paths]]}``,
kept to the newest :data:`KEEP_SESSIONS` sessions. Reads and updates happen
under a lock, so two hooks running at once never both claim a file. An
event without a session id is never deduplicated.
"""

from __future__ import annotations

import os

__all__ = ["BRIEFED_FILE", "KEEP_SESSIONS", "already_briefed", "claim"]

BRIEFED_FILE = "hooks-briefed.json"
KEEP_SESSIONS = 100

_LOCK_FILE = "hooks-briefed.lock"
_MAX_BYTES = 4 << 20

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _key(agent: str, session: str) -> str:
    return f"{agent} {session}"


def _read(folder: str) -> dict[str, Any]:
    import json

    from karni.agent.common.files import read_regular_file

    try:
        data = json.loads(read_regular_file(os.path.join(folder, BRIEFED_FILE), _MAX_BYTES))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _paths(record: object) -> list[str]:
    if isinstance(record, list) and len(record) == 2 and isinstance(record[1], list):
        return [path for path in record[1] if isinstance(path, str)]
    return []


def already_briefed(root: str, agent: str, session: str | None, path: str) -> bool:
    """Whether ``path`` was briefed in this session (a cheap read, no lock, no write)."""
    if session is None:
        return False
    folder = os.path.join(root, ".karni", "local")
    return path in _paths(_read(folder).get(_key(agent, session)))


def claim(root: str, agent: str, session: str | None, path: str) -> bool:
    """Record ``path`` as briefed in the session; True only for the first claim.

    Raises:
        OSError: The record cannot be written (the caller then gives no brief).
    """
    if session is None:
        return True
    import json
    import time

    from karni.agent.common.files import write_atomic
    from karni.cli.config.state import ExclusiveLock, ensure_local_dir

    folder = ensure_local_dir(root)
    with ExclusiveLock(os.path.join(folder, _LOCK_FILE)):
        records = _read(folder)
        key = _key(agent, session)
        paths = _paths(records.pop(key, None))
        if path in paths:
            records[key] = [time.time(), paths]
            return False
        records[key] = [time.time(), [*paths, path]]
        newest = sorted(records.items(), key=lambda item: _stamp(item[1]))[-KEEP_SESSIONS:]
        text = json.dumps(dict(newest), separators=(",", ":")) + "\n"
        write_atomic(os.path.join(folder, BRIEFED_FILE), text, within=root)
    return True


def _stamp(record: object) -> float:
    if isinstance(record, list) and record and isinstance(record[0], (int, float)):
        return float(record[0])
    return 0.0
