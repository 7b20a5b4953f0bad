"""The ``compartments`` table: condensed episodes, read back for briefs and runs."""

from __future__ import annotations

from karni_historian.store.database import Database, ScratchTable, utc_now
from karni_historian.store.records import StoredCompartment
from karni_historian.store.search_sql import KIND_COMPARTMENT, index_rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from karni_historian.model import Compartment

__all__ = ["COMPARTMENT_COLUMNS", "CompartmentTables", "compartment_row", "message_id_at"]


class CompartmentTables(Database):
    """Reading compartments; :meth:`karni_historian.store.Store.publish` writes them."""

    def compartments(self, session_id: str) -> list[StoredCompartment]:
        """The session's compartments, oldest first."""
        rows = self.connection.execute(
            _COMPARTMENT_SELECT + " WHERE session_id = ? ORDER BY sequence", (session_id,)
        ).fetchall()
        return [compartment_row(row) for row in rows]

    def iter_compartments(self, session_id: str, batch: int = 500) -> Iterator[StoredCompartment]:
        """The session's compartments, oldest first, fetched ``batch`` rows at a time."""
        cursor = self.connection.execute(
            _COMPARTMENT_SELECT + " WHERE session_id = ? ORDER BY sequence", (session_id,)
        )
        while rows := cursor.fetchmany(batch):
            yield from (compartment_row(row) for row in rows)

    def compartment_count(self, session_id: str | None = None) -> int:
        """The number of compartments in the store, or in one session."""
        if session_id is None:
            row = self.connection.execute("SELECT COUNT(*) FROM compartments").fetchone()
        else:
            row = self.connection.execute(
                "SELECT COUNT(*) FROM compartments WHERE session_id = ?", (session_id,)
            ).fetchone()
        return int(row[0])

    def last_compartment_end(self, session_id: str) -> int:
        """The last ordinal covered by the session's compartments, 0 when none."""
        row = self.connection.execute(
            "SELECT COALESCE(MAX(end_message), 0) FROM compartments WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0])

    def snapped_range(self, session_id: str, start: int, end: int) -> tuple[int, int]:
        """``start``-``end`` widened to the compartments that hold them.

        The start moves back to the start of the last compartment starting at
        or before it (1 when none), the end forward to the end of the first
        ending at or after it (the last compartment's end when none).
        """
        row = self.connection.execute(
            "SELECT (SELECT MAX(start_message) FROM compartments WHERE session_id = ?1"
            " AND start_message <= ?2), (SELECT MIN(end_message) FROM compartments"
            " WHERE session_id = ?1 AND end_message >= ?3)",
            (session_id, start, end),
        ).fetchone()
        snapped_end = row[1] if row[1] is not None else self.last_compartment_end(session_id)
        return (row[0] if row[0] is not None else 1), int(snapped_end)

    def insert_compartments(
        self,
        session_id: str,
        first_sequence: int,
        compartments: Sequence[Compartment],
        message_ids: Sequence[tuple[str, str]] | None = None,
    ) -> None:
        """Store compartments at consecutive sequences from ``first_sequence``, in one statement.

        Each row records the provider ids of its first and last messages:
        ``message_ids`` when the caller has them (one pair per compartment),
        else looked up in ``raw_messages``.
        """
        now = utc_now()
        rows = [
            (
                session_id,
                first_sequence + offset,
                compartment.start,
                compartment.end,
                compartment.title,
                compartment.p1,
                compartment.p2,
                compartment.p3,
                compartment.p4,
                max(1, min(100, int(compartment.importance))),
                compartment.episode_type,
                compartment.start_date,
                compartment.end_date,
                now,
            )
            for offset, compartment in enumerate(compartments)
        ]
        last = self.connection.execute("SELECT coalesce(max(id), 0) FROM compartments").fetchone()
        if message_ids is not None and len(message_ids) == len(rows):
            self.connection.executemany(
                _COMPARTMENT_INSERT.format(start_id="?15", end_id="?16"),
                [(*row, *ids) for row, ids in zip(rows, message_ids, strict=True)],
            )
        else:
            self.connection.executemany(
                _COMPARTMENT_INSERT.format(
                    start_id=message_id_at("?1", "?3"), end_id=message_id_at("?1", "?4")
                ),
                rows,
            )
        index_rows(self.connection, KIND_COMPARTMENT, "c.id > ?", last)

    def make_room(self, session_id: str, start: int, end: int, count: int) -> int | None:
        """Renumber the compartments around a removed range so ``count`` new ones fit in it.

        The compartments before ``start`` are numbered 0, 1, … in order of
        their start (ties: their present order), those after ``end`` follow
        ``count`` numbers later; only the rows whose number changes are
        written. Returns the first number left free for the new ones, or
        None (nothing changed) when a compartment still starts inside the
        range, whose place among the new ones only a renumbering of all
        can give.
        """
        connection = self.connection
        inside = connection.execute(
            "SELECT 1 FROM compartments WHERE session_id = ? AND start_message BETWEEN ? AND ?"
            " LIMIT 1",
            (session_id, start, end),
        ).fetchone()
        if inside is not None:
            return None
        moves = ScratchTable(
            connection,
            "recomp_moves",
            "id INTEGER PRIMARY KEY, sequence INTEGER NOT NULL",
            "SELECT id, renumbered FROM"
            " (SELECT id, sequence, row_number() OVER (ORDER BY start_message, sequence) - 1"
            " + (CASE WHEN start_message > ?2 THEN ?3 ELSE 0 END) AS renumbered"
            " FROM compartments WHERE session_id = ?1) WHERE renumbered != sequence",
            (session_id, end, count),
        )
        with moves as moved:
            if moved > 0:
                self._move(session_id)
        row = connection.execute(
            "SELECT COUNT(*) FROM compartments WHERE session_id = ? AND start_message < ?",
            (session_id, start),
        ).fetchone()
        return int(row[0])

    def _move(self, session_id: str) -> None:
        """Give the rows of ``temp.recomp_moves`` their new numbers.

        Each first goes below the session's lowest number, where no row is,
        so that no two rows ever hold one number (the uniqueness is checked
        row by row).
        """
        connection = self.connection
        (lowest,) = connection.execute(
            "SELECT MIN(sequence) FROM compartments WHERE session_id = ?", (session_id,)
        ).fetchone()
        new_number = "(SELECT m.sequence FROM temp.recomp_moves m WHERE m.id = compartments.id)"
        moving = "id IN (SELECT id FROM temp.recomp_moves)"
        connection.execute(
            f"UPDATE compartments SET sequence = ? - {new_number} WHERE {moving}", (lowest - 1,)
        )
        connection.execute(f"UPDATE compartments SET sequence = {new_number} WHERE {moving}")

    def next_sequence(self, session_id: str) -> int:
        """The sequence number the session's next compartment gets."""
        row = self.connection.execute(
            "SELECT COALESCE(MAX(sequence) + 1, 0) FROM compartments WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0])


COMPARTMENT_COLUMNS = (
    "session_id, sequence, start_message, end_message, start_message_id, end_message_id,"
    " title, p1, p2, p3, p4, importance, episode_type, legacy, start_date, end_date, created_at"
)
"""The columns a new compartment row is written with, in the order of the inserts here."""

_COMPARTMENT_INSERT = (
    f"INSERT INTO compartments ({COMPARTMENT_COLUMNS})"
    " VALUES (?1, ?2, ?3, ?4, {start_id}, {end_id},"
    " ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0, ?12, ?13, ?14)"
)


def message_id_at(session_id: str, ordinal: str) -> str:
    """SQL for the provider id of the message at ``ordinal`` of ``session_id`` ('' when none).

    Both arguments are SQL expressions (a parameter, a column).
    """
    return (
        f"COALESCE((SELECT message_id FROM raw_messages WHERE session_id = {session_id}"
        f" AND ordinal = {ordinal}), '')"
    )


_COMPARTMENT_SELECT = (
    "SELECT id, session_id, sequence, start_message, end_message, title, p1, p2, p3, p4,"
    " importance, start_date, end_date, episode_type, legacy FROM compartments"
)


def compartment_row(row: Sequence[Any]) -> StoredCompartment:
    """Decode a row of :data:`_COMPARTMENT_SELECT` into a :class:`StoredCompartment`."""
    # bench row "karni-historian brief FILE" runs without it
    from karni_historian.model import Compartment

    (
        row_id,
        session_id,
        sequence,
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
        episode_type,
        legacy,
    ) = row
    body = p1 or ""
    compartment = Compartment(
        start=start,
        end=end,
        title=title,
        p1=body,
        p2=p2 if p2 is not None else "",
        p3=p3 if p3 is not None else "",
        p4=p4 if p4 is not None else "",
        importance=importance,
        start_date=start_date,
        end_date=end_date,
        episode_type=episode_type,
        legacy=bool(legacy),
        content=body,  # a compartment's body is its p1 (schema 8 keeps no copy)
    )
    return StoredCompartment(row_id, session_id, sequence, compartment)
