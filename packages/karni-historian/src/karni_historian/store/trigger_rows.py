"""The stored rows ``run``'s triggers measure, read as they are.

The triggers (``docs/historian/triggers.md``) count the true-raw tokens of
every message after the last compartment. Those are measured from each row's
parts JSON (:mod:`karni_historian.condense.trigger_facts`) rather than from
messages built for the purpose, so the rows are handed out undecoded.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

__all__ = ["parts_json_at", "stored_rows"]


def stored_rows(
    connection: sqlite3.Connection, session_id: str, start: int
) -> Iterator[tuple[int, str, str]]:
    """``(ordinal, role, parts_json)`` of the session's messages from ``start`` on, in order.

    A cursor over the rows: nothing is held but the row being read.
    """
    rows: Iterator[tuple[int, str, str]] = connection.execute(
        "SELECT ordinal, role, parts_json FROM raw_messages"
        " WHERE session_id = ? AND ordinal >= ? ORDER BY ordinal",
        (session_id, start),
    )
    return rows


def parts_json_at(connection: sqlite3.Connection, session_id: str, ordinal: int) -> str | None:
    """The stored parts JSON of the session's message at ``ordinal``, or None."""
    row = connection.execute(
        "SELECT parts_json FROM raw_messages WHERE session_id = ? AND ordinal = ?",
        (session_id, ordinal),
    ).fetchone()
    return row[0] if row else None
