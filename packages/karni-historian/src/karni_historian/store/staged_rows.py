"""The rows of ``recomp_staged``: how a staged compartment is written.

Shared by the staging of ``recomp`` (:mod:`karni_historian.store.staging`)
and by the end of the migration to schema version 5 (:func:`restage_json_rows`,
run by :meth:`karni_historian.store.database.Database.migrate`), which moves
the JSON rows of the older staging table into these columns. It imports no
table group, so the database can run that migration without them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

    from karni_historian.model import Compartment

__all__ = ["STAGE", "restage_json_rows", "staged_row"]

_STAGED_COLUMNS = (
    "session_id, start_message, end_message, start_message_id, end_message_id, title, content,"
    " p1, p2, p3, p4, importance, episode_type, legacy, start_date, end_date"
)
"""The columns of ``recomp_staged``, in the order of :func:`staged_row`."""

STAGE = (
    f"INSERT OR REPLACE INTO recomp_staged ({_STAGED_COLUMNS})"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""Writes one row of ``recomp_staged`` (replacing the row of the same start)."""


def staged_row(
    session_id: str, compartment: Compartment, message_ids: tuple[str | None, str | None] | None
) -> tuple[object, ...]:
    """The values of a ``recomp_staged`` row: the compartment as it is, its end messages' ids.

    The ids are null when unknown; publishing looks them up.
    """
    start_id, end_id = message_ids or (None, None)
    return (
        session_id,
        compartment.start,
        compartment.end,
        start_id,
        end_id,
        compartment.title,
        compartment.content,
        compartment.p1,
        compartment.p2,
        compartment.p3,
        compartment.p4,
        compartment.importance,
        compartment.episode_type,
        compartment.legacy,
        compartment.start_date,
        compartment.end_date,
    )


def restage_json_rows(connection: sqlite3.Connection) -> None:
    """Move the rows of ``recomp_staging`` (JSON, before version 5) to ``recomp_staged``.

    The end of the migration to version 5, in Python: SQLite's JSON
    functions read an escaped NUL character as the end of a string, and
    ``json.loads`` reads every row exactly as the earlier versions did.
    Rows from before the message ids were staged get them looked up when
    published. The old table is dropped.
    """
    # bench row "karni-historian brief FILE" runs without it
    import json

    from karni_historian.model import Compartment

    rows = []
    for session_id, text in connection.execute(
        "SELECT session_id, compartment_json FROM recomp_staging"
    ):
        fields = json.loads(text)
        ids = (fields.pop("start_message_id", None), fields.pop("end_message_id", None))
        rows.append(staged_row(session_id, Compartment(**fields), ids))
    connection.executemany(STAGE, rows)
    connection.execute("DROP TABLE recomp_staging")
