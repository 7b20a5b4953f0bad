"""The hooks' per-session records in ``.karni/local/``: read, updated under a lock, kept short.

A record file is one JSON object ``{"<agent> <session>": [time, value]}``,
kept to the newest :data:`KEEP_SESSIONS` sessions. Updates happen under a
lock, so hooks running at once never lose each other's change; a file that
is not a regular file, not JSON or too large reads as empty. The JSON is read
and written with :mod:`karni.agent.common.jsontext`: ``json`` would bring in
``re`` on a path that runs before every edit. Used by
:mod:`karni.cli.hooks.seen` (files briefed) and :mod:`karni.cli.hooks.handed`
(the brief a session was handed).
"""

from __future__ import annotations

import os
import time

from karni.agent.common.jsontext import dumps, loads

__all__ = ["KEEP_SESSIONS", "read_records", "session_key", "update_record", "value_of"]

KEEP_SESSIONS = 100
"""Sessions a record file keeps; older ones are dropped."""

_MAX_BYTES = 8 << 20

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def session_key(agent: str, session: str) -> str:
    """The key of ``agent``'s ``session`` in a record file."""
    return f"{agent} {session}"


def read_records(folder: str, name: str) -> dict[str, Any]:
    """The records of ``folder/name``; empty when missing or unreadable."""
    # bench row "karni hook PreToolUse (brief printed)" runs without it
    from karni.agent.common.files import read_regular_file

    try:
        path = os.path.join(folder, name)
        data = loads(read_regular_file(path, _MAX_BYTES, follow_symlinks=False).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def value_of(record: object) -> object:
    """The value of a ``[time, value]`` record; None when it is not one."""
    return record[1] if isinstance(record, list) and len(record) == 2 else None


def update_record(
    root: str, name: str, key: str, change: Callable[[object], tuple[object, Any]]
) -> Any:
    """Replace the value under ``key`` by ``change(old value)[0]``; return its ``[1]``.

    Raises:
        OSError: The record cannot be written.
    """
    # bench row "karni hook PreToolUse (brief printed)" runs without it
    from karni.agent.common.files import write_atomic
    from karni.cli.config.state import ExclusiveLock, ensure_local_dir

    folder = ensure_local_dir(root)
    lock = os.path.join(folder, name.rsplit(".", 1)[0] + ".lock")
    with ExclusiveLock(lock):
        records = read_records(folder, name)
        value, answer = change(value_of(records.pop(key, None)))
        records[key] = [time.time(), value]
        newest = sorted(records.items(), key=lambda item: _stamp(item[1]))[-KEEP_SESSIONS:]
        text = dumps(dict(newest), compact=True) + "\n"
        write_atomic(os.path.join(folder, name), text, within=root)
    return answer


def _stamp(record: object) -> float:
    if isinstance(record, list) and record and isinstance(record[0], (int, float)):
        return float(record[0])
    return 0.0
