"""The staging of ``recomp``: compartments rebuilt so far, kept apart from the published ones.

A recomp writes each rebuilt chunk's compartments here in its own
transaction, so an interrupted recomp resumes after the last staged one.
:meth:`karni_historian.store.Store.publish_recomp` replaces the published
compartments of the range in one transaction at the end (``docs/historian/recomp.md``).
"""

from __future__ import annotations

from karni_historian.model import Compartment
from karni_historian.store.database import Database, utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

__all__ = ["StagingTables"]

_ESCAPED_NUL = "\\u0000"
"""How a staged row's JSON spells the NUL character, where SQLite's JSON functions stop."""

_MESSAGE_IDS = ("start_message_id", "end_message_id")
"""The keys of a staged row besides the compartment's fields: its end messages' ids.

A row has them (null when unknown) when this version wrote it and SQL can read
it exactly, which is how publishing tells which rows it may copy in SQL."""


def _staged_json(compartment: Compartment, message_ids: tuple[str, str] | None) -> str:
    """A staged row: the compartment's fields as ``asdict()`` gives them, then the ids.

    Built directly: every field is a plain value, so ``asdict()``'s deep copy
    has nothing to do. A row whose JSON holds an escaped NUL goes without the
    ids, for publishing to read it in Python.
    """
    from karni_historian.fastjson import dumps

    row = {
        "start": compartment.start,
        "end": compartment.end,
        "title": compartment.title,
        "p1": compartment.p1,
        "p2": compartment.p2,
        "p3": compartment.p3,
        "p4": compartment.p4,
        "importance": compartment.importance,
        "start_date": compartment.start_date,
        "end_date": compartment.end_date,
        "episode_type": compartment.episode_type,
        "legacy": compartment.legacy,
        "content": compartment.content,
    }
    row[_MESSAGE_IDS[0]], row[_MESSAGE_IDS[1]] = message_ids or (None, None)
    text = dumps(row)
    if _ESCAPED_NUL in text:
        del row[_MESSAGE_IDS[0]], row[_MESSAGE_IDS[1]]
        return dumps(row)
    return text


def _compartment(row: dict[str, Any]) -> Compartment:
    """The compartment a decoded staged row holds."""
    for key in _MESSAGE_IDS:
        row.pop(key, None)
    return Compartment(**row)


def _field(name: str) -> str:
    """SQL reading the field ``name`` of the JSON of a staged row ``s``."""
    return f"json_extract(s.compartment_json, '$.{name}')"


_RANKED = (
    "(SELECT start_message AS start, row_number() OVER (ORDER BY start_message) - 1 AS rank"
    " FROM recomp_staging WHERE session_id = ?1) r"
    " JOIN recomp_staging s ON s.session_id = ?1 AND s.start_message = r.start"
)
"""The session's staged rows ``s`` with their rank ``r.rank`` by start (0 first)."""

_HAS_IDS = f"json_type(s.compartment_json, '$.{_MESSAGE_IDS[0]}')"


class StagingTables(Database):
    """The pending recomp of each session and its staged compartments."""

    def recomp_job(self, session_id: str) -> tuple[int, int] | None:
        """The range ``(start, end)`` of the session's pending recomp, None when none."""
        row = self.connection.execute(
            "SELECT range_start, range_end FROM recomp_jobs WHERE session_id = ?", (session_id,)
        ).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def start_recomp(self, session_id: str, start: int, end: int) -> None:
        """Record a new pending recomp of ``start``-``end`` with nothing staged."""
        with self.transaction():
            self.clear_staging(session_id)
            self.connection.execute(
                "INSERT INTO recomp_jobs (session_id, range_start, range_end, created_at)"
                " VALUES (?, ?, ?, ?)",
                (session_id, start, end, utc_now()),
            )

    def stage(
        self,
        session_id: str,
        compartments: Sequence[Compartment],
        message_ids: Sequence[tuple[str, str]] | None = None,
    ) -> None:
        """Stage rebuilt compartments, in one transaction.

        ``message_ids``, when the caller has them, are the provider ids of
        each compartment's first and last messages; publishing looks up
        those it is not given.
        """
        ids: Sequence[tuple[str, str] | None] = (
            message_ids
            if message_ids is not None and len(message_ids) == len(compartments)
            else [None] * len(compartments)
        )
        with self.transaction():
            self.connection.executemany(
                "INSERT OR REPLACE INTO recomp_staging"
                " (session_id, start_message, compartment_json) VALUES (?, ?, ?)",
                [
                    (session_id, compartment.start, _staged_json(compartment, known))
                    for compartment, known in zip(compartments, ids, strict=True)
                ],
            )

    def staged(self, session_id: str) -> list[Compartment]:
        """The session's staged compartments, oldest first."""
        return list(self.iter_staged(session_id))

    def last_staged_end(self, session_id: str) -> int | None:
        """The last ordinal the session's staged compartments cover, None when none is staged."""
        from karni_historian.store.codec import json_reader

        row = self.connection.execute(
            "SELECT compartment_json FROM recomp_staging WHERE session_id = ?"
            " ORDER BY start_message DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return int(json_reader()(row[0])["end"]) if row else None

    def iter_staged(self, session_id: str) -> Iterator[Compartment]:
        """:meth:`staged`, one at a time.

        Rows are compact JSON (earlier versions wrote the standard library's
        spaced form; both read the same), decoded by orjson with the
        ``speedups`` extra: every field is a string, a small integer, a
        boolean or null, which it reads as ``json.loads`` does.
        """
        from karni_historian.store.codec import json_reader

        decode = json_reader()
        rows = self.connection.execute(
            "SELECT compartment_json FROM recomp_staging WHERE session_id = ?"
            " ORDER BY start_message",
            (session_id,),
        )
        return (_compartment(decode(row[0])) for row in rows)

    def staged_span(self, session_id: str) -> tuple[int, int, int]:
        """How many compartments the session has staged, and the first and last one's start.

        The starts are 0 when nothing is staged.
        """
        row = self.connection.execute(
            "SELECT COUNT(*), COALESCE(MIN(start_message), 0), COALESCE(MAX(start_message), 0)"
            " FROM recomp_staging WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def insert_staged(
        self, session_id: str, first_sequence: int, count: int
    ) -> list[tuple[int, Compartment]]:
        """Copy the ``count`` staged compartments into ``compartments``, from ``first_sequence`` on.

        In order of their start, by one ``INSERT … SELECT`` that reads each
        row's fields with SQLite's JSON functions: the columns get what
        :meth:`~karni_historian.store.compartments.CompartmentTables.insert_compartments`
        writes for the compartment the row decodes to, and the message ids
        staged with it (looked up when unknown). Rows without the ids (an
        earlier version's, or holding a NUL, which SQLite's JSON functions
        read as the end of the text) are left out and returned, each with
        its number, for the caller to insert from Python.
        """
        from karni_historian.store.compartments import COMPARTMENT_COLUMNS, message_id_at

        end = _field("end")
        start_id = f"COALESCE({_field(_MESSAGE_IDS[0])}, {message_id_at('?1', 's.start_message')})"
        end_id = f"COALESCE({_field(_MESSAGE_IDS[1])}, {message_id_at('?1', end)})"
        copied = self.connection.execute(
            f"INSERT INTO compartments ({COMPARTMENT_COLUMNS})"
            f" SELECT ?1, ?2 + r.rank, s.start_message, {end}, {start_id}, {end_id},"
            f" {_field('title')}, {_field('p1')}, {_field('p1')}, {_field('p2')}, {_field('p3')},"
            f" {_field('p4')}, MAX(1, MIN(100, CAST({_field('importance')} AS INTEGER))),"
            f" {_field('episode_type')}, 0, {_field('start_date')}, {_field('end_date')}, ?3"
            f" FROM {_RANKED} WHERE {_HAS_IDS} IS NOT NULL ORDER BY r.start",
            (session_id, first_sequence, utc_now()),
        ).rowcount
        if copied == count:
            return []
        from karni_historian.store.codec import json_reader

        decode = json_reader()
        rows = self.connection.execute(
            f"SELECT r.rank, s.compartment_json FROM {_RANKED} WHERE {_HAS_IDS} IS NULL",
            (session_id,),
        )
        return [(first_sequence + rank, _compartment(decode(text))) for rank, text in rows]

    def clear_staging(self, session_id: str) -> None:
        """Remove the session's pending recomp and its staged compartments."""
        self.connection.execute("DELETE FROM recomp_staging WHERE session_id = ?", (session_id,))
        self.connection.execute("DELETE FROM recomp_jobs WHERE session_id = ?", (session_id,))
