"""The ``sessions`` table: one row per transcript session, with its title and failures."""

from __future__ import annotations

from karni_historian.store.database import Database, utc_now
from karni_historian.store.records import SessionInfo

__all__ = ["SessionTables"]


class SessionTables(Database):
    """Sessions: creation, titles, listing and the historian failure counter."""

    def ensure_session(
        self, session_id: str, source: str, *, cwd: str | None = None, timestamp: str | None = None
    ) -> None:
        """Create the session when new; widen its time span with ``timestamp``."""
        now = utc_now()
        self.connection.execute(
            "INSERT INTO sessions (id, source, cwd, first_ts, last_ts, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
            (session_id, source, cwd, timestamp, timestamp, now, now),
        )

    def set_title(self, session_id: str, title: str, rank: int) -> None:
        """Set the title unless one of a higher ``rank`` is already stored.

        At an equal rank the later title wins, except at rank 1 (the first
        prompt), which is only ever set once.
        """
        title = " ".join(title.split())
        if not title:
            return
        self.connection.execute(
            "UPDATE sessions SET title = ?, title_rank = ? WHERE id = ?"
            " AND (title_rank < ? OR (title_rank = ? AND ? > 1))",
            (title[:200], rank, session_id, rank, rank, rank),
        )

    def set_model(self, session_id: str, model: str) -> None:
        """Record the model the session runs on (the newest one its transcript names)."""
        self.connection.execute(
            "UPDATE sessions SET model = ? WHERE id = ? AND model IS NOT ?",
            (model[:200], session_id, model[:200]),
        )

    def sessions(self) -> list[SessionInfo]:
        """Every session, newest (by last message time, then id) first."""
        rows = self.connection.execute(
            "SELECT id, source, title, message_count, first_ts, last_ts, model FROM sessions"
            " ORDER BY COALESCE(last_ts, '') DESC, id DESC"
        ).fetchall()
        return [SessionInfo(*row) for row in rows]

    def session(self, session_id: str) -> SessionInfo | None:
        """The session with this id, or None."""
        row = self.connection.execute(
            "SELECT id, source, title, message_count, first_ts, last_ts, model FROM sessions"
            " WHERE id = ?",
            (session_id,),
        ).fetchone()
        return SessionInfo(*row) if row else None

    def failure(self, session_id: str) -> tuple[int, str | None]:
        """``(consecutive failures, last error)`` of the session."""
        row = self.connection.execute(
            "SELECT failure_count, last_error FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return (int(row[0]), row[1]) if row else (0, None)
