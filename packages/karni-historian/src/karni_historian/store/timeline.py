"""What the timeline page reads from the store: each session's episodes with their times and files.

The page (``karni-historian timeline``, ``docs/historian/timeline.md``) draws
every session and its compartments on a time axis, so it reads whole tables
rather than a brief's few rows; each read here is one query per session, along
the ``(session_id, …)`` keys, never one per message.
"""

from __future__ import annotations

from karni_historian.store.database import Database

__all__ = ["EpisodeRow", "TimelineTables"]

EpisodeRow = tuple[int, int, int, str, str, int, str | None, str | None, str | None]
"""``(id, start, end, title, body, importance, episode_type, first_ts, last_ts)``."""


class TimelineTables(Database):
    """The reads of the timeline page; no writes."""

    def timeline_episodes(self, session_id: str) -> list[EpisodeRow]:
        """The session's compartments, oldest first, with their first and last message times.

        The times are the earliest and latest timestamps of the messages the
        compartment covers (None when none of them has one).
        """
        rows = self.connection.execute(
            "SELECT c.id, c.start_message, c.end_message, c.title, COALESCE(c.p1, ''),"
            " c.importance, c.episode_type, MIN(m.timestamp), MAX(m.timestamp)"
            " FROM compartments c LEFT JOIN raw_messages m ON m.session_id = c.session_id"
            " AND m.ordinal BETWEEN c.start_message AND c.end_message"
            " WHERE c.session_id = ? GROUP BY c.id ORDER BY c.sequence",
            (session_id,),
        ).fetchall()
        return [tuple(row) for row in rows]

    def message_span_times(
        self, session_id: str, start: int, end: int
    ) -> tuple[str | None, str | None]:
        """The earliest and latest timestamps of the session's messages ``start``-``end``."""
        row = self.connection.execute(
            "SELECT MIN(timestamp), MAX(timestamp) FROM raw_messages"
            " WHERE session_id = ? AND ordinal BETWEEN ? AND ?",
            (session_id, start, end),
        ).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def session_file_rows(self, session_id: str) -> list[tuple[int, str, str]]:
        """``(ordinal, path, action)`` of every file the session's messages touched, by ordinal."""
        return self.connection.execute(
            "SELECT ordinal, path, action FROM message_files WHERE session_id = ?"
            " ORDER BY ordinal, path, action",
            (session_id,),
        ).fetchall()

    def edited_paths_newest_first(self, limit: int) -> list[str]:
        """At most ``limit`` paths some session edited, the most recently edited first."""
        return [
            row[0]
            for row in self.connection.execute(
                "SELECT f.path FROM message_files f JOIN sessions s ON s.id = f.session_id"
                " WHERE f.action != 'read' GROUP BY f.path"
                " ORDER BY MAX(COALESCE(s.last_ts, '')) DESC, f.path LIMIT ?",
                (limit,),
            )
        ]
