"""The staging of ``recomp``: compartments rebuilt so far, kept apart from the published ones.

A recomp writes each rebuilt chunk's compartments here in its own
transaction, so an interrupted recomp resumes after the last staged one.
:meth:`karni_historian.store.Store.publish_recomp` replaces the published
compartments of the range in one transaction at the end (``docs/historian/recomp.md``).
"""

from __future__ import annotations

import dataclasses

from karni_historian.model import Compartment
from karni_historian.store.database import Database, utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["StagingTables"]


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

    def stage(self, session_id: str, compartments: Sequence[Compartment]) -> None:
        """Stage rebuilt compartments, in one transaction."""
        from karni_historian.fastjson import dumps

        fields = [field.name for field in dataclasses.fields(Compartment)]
        with self.transaction():
            # The fields as asdict() gives them (every one is a plain value), without its deep copy.
            self.connection.executemany(
                "INSERT OR REPLACE INTO recomp_staging"
                " (session_id, start_message, compartment_json) VALUES (?, ?, ?)",
                [
                    (
                        session_id,
                        compartment.start,
                        dumps({name: getattr(compartment, name) for name in fields}),
                    )
                    for compartment in compartments
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
        return (Compartment(**decode(row[0])) for row in rows)

    def clear_staging(self, session_id: str) -> None:
        """Remove the session's pending recomp and its staged compartments."""
        self.connection.execute("DELETE FROM recomp_staging WHERE session_id = ?", (session_id,))
        self.connection.execute("DELETE FROM recomp_jobs WHERE session_id = ?", (session_id,))
