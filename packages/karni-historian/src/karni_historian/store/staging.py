"""The staging of ``recomp``: compartments rebuilt so far, kept apart from the published ones.

A recomp writes each rebuilt chunk's compartments here in its own
transaction, so an interrupted recomp resumes after the last staged one.
:meth:`karni_historian.store.Store.publish_recomp` replaces the published
compartments of the range in one transaction at the end (``docs/historian/recomp.md``).
Staged rows hold the compartments' fields in columns (schema version 5), so
publishing copies them in one statement.
"""

from __future__ import annotations

from karni_historian.store.compartments import COMPARTMENT_COLUMNS, message_id_at
from karni_historian.store.database import Database, ScratchTable, utc_now
from karni_historian.store.search_sql import KIND_COMPARTMENT, index_rows
from karni_historian.store.staged_rows import STAGE, staged_row

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from karni_historian.model import Compartment

__all__ = ["StagingTables"]

_READ_STAGED = (
    "SELECT start_message, end_message, title, p1, p2, p3, p4, importance, start_date, end_date,"
    " episode_type, legacy, content FROM recomp_staged WHERE session_id = ?"
    " ORDER BY start_message"
)


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
        ids: Sequence[tuple[str | None, str | None] | None] = (
            message_ids
            if message_ids is not None and len(message_ids) == len(compartments)
            else [None] * len(compartments)
        )
        with self.transaction():
            self.connection.executemany(
                STAGE,
                [
                    staged_row(session_id, compartment, known)
                    for compartment, known in zip(compartments, ids, strict=True)
                ],
            )

    def staged(self, session_id: str) -> list[Compartment]:
        """The session's staged compartments, oldest first."""
        return list(self.iter_staged(session_id))

    def last_staged_end(self, session_id: str) -> int | None:
        """The last ordinal the session's staged compartments cover, None when none is staged."""
        row = self.connection.execute(
            "SELECT end_message FROM recomp_staged WHERE session_id = ?"
            " ORDER BY start_message DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return int(row[0]) if row else None

    def iter_staged(self, session_id: str) -> Iterator[Compartment]:
        """:meth:`staged`, one at a time."""
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.model import Compartment

        for row in self.connection.execute(_READ_STAGED, (session_id,)):
            start, end, title, p1, p2, p3, p4, importance, start_date, end_date = row[:10]
            yield Compartment(
                start,
                end,
                title,
                p1,
                p2,
                p3,
                p4,
                importance,
                start_date,
                end_date,
                episode_type=row[10],
                legacy=bool(row[11]),
                content=row[12],
            )

    def staged_span(self, session_id: str) -> tuple[int, int, int]:
        """How many compartments the session has staged, and the first and last one's start.

        The starts are 0 when nothing is staged.
        """
        row = self.connection.execute(
            "SELECT COUNT(*), COALESCE(MIN(start_message), 0), COALESCE(MAX(start_message), 0)"
            " FROM recomp_staged WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def insert_staged(self, session_id: str, first_sequence: int) -> None:
        """Copy the staged compartments into ``compartments``, numbered from ``first_sequence`` on.

        In order of their start, by one ``INSERT … SELECT`` of the columns:
        each row gets what
        :meth:`~karni_historian.store.compartments.CompartmentTables.insert_compartments`
        writes for the staged compartment (importance clamped to 1-100,
        not legacy) and the message ids staged
        with it, looked up when unknown.

        Each row's place among the staged ones is numbered first, in a
        temporary table of starts only: a window function over the copy
        itself would hold every staged row's text in a scratch table on
        the way (about a third of the copy's time, measured).
        """
        places = ScratchTable(
            self.connection,
            "recomp_places",
            "place INTEGER PRIMARY KEY, start_message INTEGER NOT NULL",
            "SELECT row_number() OVER (ORDER BY start_message), start_message"
            " FROM recomp_staged WHERE session_id = ?",
            (session_id,),
        )
        start_id = f"COALESCE(s.start_message_id, {message_id_at('?1', 's.start_message')})"
        end_id = f"COALESCE(s.end_message_id, {message_id_at('?1', 's.end_message')})"
        last = self.connection.execute("SELECT coalesce(max(id), 0) FROM compartments").fetchone()
        with places:
            self.connection.execute(
                f"INSERT INTO compartments ({COMPARTMENT_COLUMNS})"
                f" SELECT ?1, ?2 - 1 + n.place, s.start_message, s.end_message, {start_id},"
                f" {end_id}, s.title, s.p1, s.p2, s.p3, s.p4,"
                f" MAX(1, MIN(100, CAST(s.importance AS INTEGER))), s.episode_type, 0,"
                f" s.start_date, s.end_date, ?3 FROM temp.recomp_places n JOIN recomp_staged s"
                f" ON s.session_id = ?1 AND s.start_message = n.start_message ORDER BY n.place",
                (session_id, first_sequence, utc_now()),
            )
        index_rows(self.connection, KIND_COMPARTMENT, "c.id > ?", last)

    def clear_staging(self, session_id: str) -> None:
        """Remove the session's pending recomp and its staged compartments.

        When no other session has any staged, the whole table is emptied,
        which SQLite does without visiting (and rewriting) each row's page.
        """
        connection = self.connection
        others = connection.execute(
            "SELECT EXISTS (SELECT 1 FROM recomp_staged WHERE session_id < ?1)"
            " OR EXISTS (SELECT 1 FROM recomp_staged WHERE session_id > ?1)",
            (session_id,),
        ).fetchone()[0]
        if others:
            connection.execute("DELETE FROM recomp_staged WHERE session_id = ?", (session_id,))
        else:
            connection.execute("DELETE FROM recomp_staged")
        connection.execute("DELETE FROM recomp_jobs WHERE session_id = ?", (session_id,))
