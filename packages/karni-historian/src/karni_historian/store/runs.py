"""The ``historian_runs`` table: one record per historian run, successful or not."""

from __future__ import annotations

from karni_historian.store.database import Database, utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.store.records import RunRecord

__all__ = ["RunTables"]


class RunTables(Database):
    """Recording runs and listing them."""

    def record_run(self, run: RunRecord) -> None:
        """Store one run record."""
        importances = run.importances
        self.connection.execute(
            "INSERT INTO historian_runs (session_id, run_kind, historian, status,"
            " failure_reason, chunk_start, chunk_end, unprocessed_from, compartments_produced,"
            " facts_emitted, importance_min, importance_max, importance_avg, discarded_last,"
            " duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.session_id,
                run.run_kind,
                run.historian,
                run.status,
                run.failure_reason,
                run.chunk_start,
                run.chunk_end,
                run.unprocessed_from,
                run.compartments_produced,
                run.facts_emitted,
                min(importances) if importances else None,
                max(importances) if importances else None,
                sum(importances) / len(importances) if importances else None,
                int(run.discarded_last),
                run.duration_ms,
                utc_now(),
            ),
        )

    def runs(self, session_id: str | None = None) -> list[tuple[Any, ...]]:
        """The runs, oldest first, as tuples.

        Each is ``(session_id, run_kind, status, failure_reason, chunk_start,
        chunk_end, compartments_produced, facts_emitted)``.
        """
        query = (
            "SELECT session_id, run_kind, status, failure_reason, chunk_start, chunk_end,"
            " compartments_produced, facts_emitted FROM historian_runs"
        )
        if session_id is None:
            return self.connection.execute(query + " ORDER BY id").fetchall()
        return self.connection.execute(
            query + " WHERE session_id = ? ORDER BY id", (session_id,)
        ).fetchall()

    def last_run(self, session_id: str) -> dict[str, Any] | None:
        """The session's newest run: historian, kind, status, failure, duration and time."""
        row = self.connection.execute(
            "SELECT historian, run_kind, status, failure_reason, duration_ms, created_at"
            " FROM historian_runs WHERE session_id = ? ORDER BY id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        if row is None:
            return None
        keys = ("model", "kind", "outcome", "error", "duration_ms", "at")
        return dict(zip(keys, row, strict=True))
