"""The historian's store: the table groups put together, and the writes that span them.

One SQLite database per project at ``.karni/local/historian.db`` (see
``docs/historian/store.md``). Each table group lives in its own module; this
one adds the two transactions that touch several groups at once: publishing a
historian run and recording its failure.
"""

from __future__ import annotations

from karni_historian.store.attribution import AttributionTables
from karni_historian.store.briefing import BriefTables
from karni_historian.store.compartments import CompartmentTables
from karni_historian.store.database import ScratchTable, utc_now
from karni_historian.store.file_notes import FileNoteTables
from karni_historian.store.ingest_state import IngestStateTables
from karni_historian.store.memory import MemoryTables
from karni_historian.store.messages import MessageTables
from karni_historian.store.rebuilds import RebuildTables
from karni_historian.store.runs import RunTables
from karni_historian.store.search import SearchTables, SearchTimelineTables
from karni_historian.store.search_sql import KIND_COMPARTMENT, unindex_rows
from karni_historian.store.sessions import SessionTables
from karni_historian.store.shared import SharedTables
from karni_historian.store.staging import StagingTables
from karni_historian.store.timeline import TimelineTables

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from karni_historian.model import Compartment, Fact
    from karni_historian.store.records import RunRecord

__all__ = ["Store"]


class Store(
    SessionTables,
    MessageTables,
    IngestStateTables,
    CompartmentTables,
    SharedTables,
    MemoryTables,
    RunTables,
    StagingTables,
    RebuildTables,
    FileNoteTables,
    AttributionTables,
    BriefTables,
    TimelineTables,
    SearchTables,
    SearchTimelineTables,
):
    """An open historian database.

    Use :meth:`open`; close it with :meth:`close` or a ``with`` block.
    """

    def publish(
        self,
        session_id: str,
        compartments: Sequence[Compartment],
        facts: Sequence[Fact],
        run: RunRecord,
        *,
        fact_spans: Sequence[tuple[int, int] | None] | None = None,
        fact_sources: Sequence[tuple[int | None, str]] | None = None,
        message_ids: Sequence[tuple[str, str]] | None = None,
    ) -> bool:
        """Publish a historian run in one transaction (``docs/historian/store.md``).

        The compartments are appended after the session's existing ones, the
        facts are promoted to project memory (deduplicated), the run is
        recorded and the session's failure counter is reset. When another
        process published compartments reaching the first one's start
        meanwhile (two runs of one session at once), nothing is written and
        the result is False: the messages are condensed once.

        Args:
            session_id: The session.
            compartments: The new compartments, oldest first; validated, so
                each has its tiered paraphrases.
            facts: Facts to promote.
            run: The run record.
            fact_spans: Per fact, the message range it came from (None: the
                whole run); it links the fact to the files of those messages.
            fact_sources: Per fact, the message that states it (or None) and
                who did: ``user``, ``agent`` or ``historian``.
            message_ids: Per compartment, the provider ids of its first and
                last messages, when the caller has them (else they are looked up).
        """
        with self.transaction():
            if compartments and compartments[0].start <= self.last_compartment_end(session_id):
                return False
            sequence = self.next_sequence(session_id)
            self.insert_compartments(session_id, sequence, compartments, message_ids)
            if compartments:
                whole = (compartments[0].start, compartments[-1].end)
                spans = list(fact_spans or [])
                sources = list(fact_sources or [])
                for index, fact in enumerate(facts):
                    span = spans[index] if index < len(spans) and spans[index] else whole
                    source = sources[index] if index < len(sources) else None
                    self.add_fact(fact, session_id=session_id, span=span, source=source)
            self.record_run(run)
            self.connection.execute(
                "UPDATE sessions SET failure_count = 0 WHERE id = ?", (session_id,)
            )
        return True

    def record_failure(self, run: RunRecord) -> int:
        """Record a failed run and return the session's consecutive failure count."""
        with self.transaction():
            self.record_run(run)
            self.connection.execute(
                "UPDATE sessions SET failure_count = failure_count + 1, last_error = ?,"
                " last_failure_at = ? WHERE id = ?",
                (run.failure_reason, utc_now(), run.session_id),
            )
            row = self.connection.execute(
                "SELECT failure_count FROM sessions WHERE id = ?", (run.session_id,)
            ).fetchone()
        return int(row[0]) if row else 0

    def publish_recomp(self, session_id: str, run: RunRecord) -> int:
        """Replace the published compartments of the pending recomp's range by the staged ones.

        One transaction, in SQL without reading the compartments here:
        compartments outside the range keep their rows and their place, the
        sequence is renumbered oldest first (only the rows after the range
        move, when the count changes), the staged rows are copied in by one
        statement, the staging and the job are removed and ``run`` is
        recorded. Returns how many were staged.

        The transaction runs with ``secure_delete`` at ``FAST`` when the
        connection has it on (Debian's SQLite turns it on by default):
        deleted rows are still zeroed within the pages the transaction
        writes, but the pages it frees (the replaced compartments', the
        whole staging's) are not zeroed and written again, which halved
        the log this transaction writes (measured). What such a free page
        may keep is a compartment replaced here or a copy of one published,
        both read from messages the same file holds.
        """
        job = self.recomp_job(session_id)
        assert job is not None
        start, end = job
        connection = self.connection
        with _FastSecureDelete(connection), self.transaction():
            replaced = "session_id = ? AND end_message >= ? AND start_message <= ?"
            unindex_rows(connection, KIND_COMPARTMENT, replaced, (session_id, start, end))
            connection.execute(
                f"DELETE FROM compartments WHERE {replaced}", (session_id, start, end)
            )
            staged, first_start, last_start = self.staged_span(session_id)
            first = None
            if staged == 0 or (start <= first_start and last_start <= end):
                first = self.make_room(session_id, start, end, staged)
            if first is None:
                # Out of the way of the final numbers: kept rows negated, staged ones below them.
                connection.execute(
                    "UPDATE compartments SET sequence = -1 - sequence WHERE session_id = ?",
                    (session_id,),
                )
            numbered_from = _STAGED_SEQUENCE if first is None else first
            self.insert_staged(session_id, numbered_from)
            if first is None:
                self._renumber(session_id)
            self.clear_staging(session_id)
            self.record_run(run)
            connection.execute("UPDATE sessions SET failure_count = 0 WHERE id = ?", (session_id,))
        return staged

    def _renumber(self, session_id: str) -> None:
        """Number the session's compartments 0, 1, … by start (ties: higher sequence first).

        The new numbers are worked out once into a temporary table keyed by
        row id, then each row looks its own up there; a subquery ranking the
        rows anew for each one would take time growing with their square.
        Neither needs ``UPDATE … FROM`` (SQLite 3.33).
        """
        numbers = ScratchTable(
            self.connection,
            "recomp_numbers",
            "id INTEGER PRIMARY KEY, sequence INTEGER NOT NULL",
            "SELECT id, row_number() OVER (ORDER BY start_message, sequence DESC) - 1"
            " FROM compartments WHERE session_id = ?",
            (session_id,),
        )
        with numbers:
            self.connection.execute(
                "UPDATE compartments SET sequence = (SELECT n.sequence FROM temp.recomp_numbers n"
                " WHERE n.id = compartments.id) WHERE session_id = ?",
                (session_id,),
            )


class _FastSecureDelete:
    """A ``with`` block during which ``secure_delete`` is at most ``FAST`` (see publish_recomp)."""

    __slots__ = ("_connection", "_previous")

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._previous = 0

    def __enter__(self) -> None:
        self._previous = int(self._connection.execute("PRAGMA secure_delete").fetchone()[0])
        if self._previous == 1:
            self._connection.execute("PRAGMA secure_delete = FAST")

    def __exit__(self, *exc: object) -> None:
        if self._previous == 1:
            self._connection.execute("PRAGMA secure_delete = 1")


_STAGED_SEQUENCE = -(1 << 40)
"""Where :meth:`Store.publish_recomp` numbers the staged compartments before renumbering all.

Below every kept row's negated number. Only a compartment kept although it
starts inside the range (a row whose start lies after its end), or a staged
one starting outside it, takes that way: then a kept row and a staged one
may start at the same message, and the kept one comes first."""
