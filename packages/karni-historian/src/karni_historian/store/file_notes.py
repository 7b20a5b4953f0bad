"""Each file's notes and shaping requests, and how far each session was read for them.

``ingest`` works out, from a session's raw messages, what each file it edited
went through (:mod:`karni_historian.condense.file_notes`) and writes it here.
A session is read incrementally: ``noted_sessions`` remembers the request the
next reading starts from (the last two requests are read again, since they
may still grow or be answered), the messages the session had, and the
version of the extraction; rows from that request on are replaced in one
transaction. ``file_edits`` keeps a digest of every landed edit, so an edit
that writes back an earlier one is recognised across readings
(``docs/historian/file-notes.md``).
"""

from __future__ import annotations

from karni_historian.store.database import Database

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["FileNoteTables", "NotedState"]

NotedState = tuple[int, int, int]
"""``(message_count, version, resume_from)`` of a noted session."""


class FileNoteTables(Database):
    """The ``file_notes``, ``file_requests``, ``file_edits`` and ``noted_sessions`` tables."""

    def sessions_to_note(self, version: int) -> list[str]:
        """The sessions whose notes are missing, older than ``version`` or behind their messages.

        A session imported from shared history has no raw messages here: its
        notes are the ones its file brought, never worked out again.
        """
        rows = self.connection.execute(
            "SELECT s.id FROM sessions s LEFT JOIN noted_sessions n ON n.session_id = s.id"
            " WHERE (n.session_id IS NULL OR n.version != ? OR n.message_count != s.message_count)"
            " AND NOT EXISTS (SELECT 1 FROM shared_files f WHERE f.session_id = s.id"
            " AND f.state = 'imported') ORDER BY s.id",
            (version,),
        )
        return [row[0] for row in rows]

    def noted_state(self, session_id: str) -> NotedState | None:
        """How far the session was noted, or None when it never was."""
        row = self.connection.execute(
            "SELECT message_count, version, resume_from FROM noted_sessions WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def edited_paths(self, session_id: str) -> set[str]:
        """Every file the session's edits named (successful or not), from ``message_files``."""
        rows = self.connection.execute(
            "SELECT DISTINCT path FROM message_files WHERE session_id = ? AND action != 'read'",
            (session_id,),
        )
        return {row[0] for row in rows}

    def edit_digests(self, session_id: str, before: int) -> list[tuple[int, str, str, str]]:
        """``(ordinal, path, forward, inverse)`` of the session's landed edits before ``before``."""
        return self.connection.execute(
            "SELECT ordinal, path, forward, inverse FROM file_edits"
            " WHERE session_id = ? AND ordinal < ? ORDER BY ordinal",
            (session_id, before),
        ).fetchall()

    def replace_file_notes(
        self,
        session_id: str,
        start: int,
        rows: tuple[
            Iterable[Sequence[object]], Iterable[Sequence[object]], Iterable[Sequence[object]]
        ],
        state: NotedState,
        attribution: tuple[Iterable[Sequence[object]], Iterable[Sequence[object]]] = ((), ()),
    ) -> None:
        """Replace the session's rows from request ``start`` on, and record how far it was read.

        Args:
            session_id: The session.
            start: The first request (or edit) read this time; rows before it stay.
            rows: ``(path, request, ordinal, kind, text, weight)`` notes,
                ``(path, request, timestamp, text, added, removed)`` requests and
                ``(ordinal, path, forward, inverse)`` edit digests.
            state: ``(message_count, version, resume_from)`` after this reading.
            attribution: What ``blame`` reads (``docs/historian/blame.md``):
                ``(path, request, ordinal, position, timestamp, hash, lines, loose)``
                written ranges and ``(ordinal, request, hash, subject, timestamp,
                request_text, request_time)`` commits, of the messages from ``start`` on.
        """
        notes, requests, edits = rows
        with self.transaction():
            execute = self.connection.execute
            execute(
                "DELETE FROM file_notes WHERE session_id = ? AND request >= ?", (session_id, start)
            )
            execute(
                "DELETE FROM file_requests WHERE session_id = ? AND request >= ?",
                (session_id, start),
            )
            execute(
                "DELETE FROM file_edits WHERE session_id = ? AND ordinal >= ?", (session_id, start)
            )
            self.connection.executemany(
                "INSERT OR IGNORE INTO file_notes (path, session_id, request, ordinal, kind, text,"
                " weight) VALUES (?, ?, ?, ?, ?, ?, ?)",
                ((row[0], session_id, *row[1:]) for row in notes),
            )
            self.connection.executemany(
                "INSERT OR REPLACE INTO file_requests (path, session_id, request, timestamp, text,"
                " added, removed) VALUES (?, ?, ?, ?, ?, ?, ?)",
                ((row[0], session_id, *row[1:]) for row in requests),
            )
            self.connection.executemany(
                "INSERT OR IGNORE INTO file_edits (session_id, ordinal, path, forward, inverse)"
                " VALUES (?, ?, ?, ?, ?)",
                ((session_id, *row) for row in edits),
            )
            self._replace_attribution(session_id, start, attribution)
            execute(
                "INSERT OR REPLACE INTO noted_sessions (session_id, message_count, version,"
                " resume_from) VALUES (?, ?, ?, ?)",
                (session_id, *state),
            )

    def _replace_attribution(
        self,
        session_id: str,
        start: int,
        rows: tuple[Iterable[Sequence[object]], Iterable[Sequence[object]]],
    ) -> None:
        """Replace the session's written ranges and commits from message ``start`` on."""
        written, commits = rows
        execute = self.connection.execute
        execute(
            "DELETE FROM written_ranges WHERE session_id = ? AND ordinal >= ?", (session_id, start)
        )
        execute(
            "DELETE FROM session_commits WHERE session_id = ? AND ordinal >= ?", (session_id, start)
        )
        self.connection.executemany(
            "INSERT OR REPLACE INTO written_ranges (path, session_id, request, ordinal, position,"
            " timestamp, hash, lines, loose) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((row[0], session_id, *row[1:]) for row in written),
        )
        self.connection.executemany(
            "INSERT OR IGNORE INTO session_commits (session_id, ordinal, request, hash, subject,"
            " timestamp, request_text, request_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ((session_id, *row) for row in commits),
        )
