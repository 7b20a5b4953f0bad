"""Each file's notes and shaping requests, and how far each session was read for them.

``ingest`` works out, from a session's raw messages, what each file it edited
went through (:mod:`karni_historian.condense.file_notes`) and writes it here.
A session is read incrementally: ``noted_sessions`` remembers the request the
next reading starts from (the last two requests are read again, since they
may still grow or be answered), the messages the session had, and the
version of the extraction; rows from that request on are cleared and written
again in one transaction (the reader's, which writes them as it goes).
``file_edits`` keeps a digest of every landed edit, so an edit that writes
back an earlier one is recognised without holding the earlier one, in the
same reading or a later one (``docs/historian/file-notes.md``).
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
        """The sessions whose notes are missing, older than ``version`` or behind their messages."""
        rows = self.connection.execute(
            "SELECT s.id FROM sessions s LEFT JOIN noted_sessions n ON n.session_id = s.id"
            " WHERE n.session_id IS NULL OR n.version != ? OR n.message_count != s.message_count"
            " ORDER BY s.id",
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

    def latest_edit(self, session_id: str, path: str, forward: str, before: int) -> int | None:
        """The message of the latest landed edit of ``path`` before ``before``, digest ``forward``.

        What an edit writing it back undid; None when there is none.
        """
        row = self.connection.execute(
            "SELECT max(ordinal) FROM file_edits"
            " WHERE session_id = ? AND path = ? AND forward = ? AND ordinal < ?",
            (session_id, path, forward, before),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def clear_file_notes(self, session_id: str, start: int) -> None:
        """Remove the session's notes, requests and edit digests from request ``start`` on."""
        execute = self.connection.execute
        execute("DELETE FROM file_notes WHERE session_id = ? AND request >= ?", (session_id, start))
        execute(
            "DELETE FROM file_requests WHERE session_id = ? AND request >= ?", (session_id, start)
        )
        execute("DELETE FROM file_edits WHERE session_id = ? AND ordinal >= ?", (session_id, start))

    def add_file_notes(self, session_id: str, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(path, request, ordinal, kind, text, weight)`` notes (a repeat is ignored)."""
        self.connection.executemany(
            "INSERT OR IGNORE INTO file_notes (path, session_id, request, ordinal, kind, text,"
            " weight) VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((row[0], session_id, *row[1:]) for row in rows),
        )

    def add_file_requests(self, session_id: str, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(path, request, timestamp, text, added, removed)`` shaping requests."""
        self.connection.executemany(
            "INSERT OR REPLACE INTO file_requests (path, session_id, request, timestamp, text,"
            " added, removed) VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((row[0], session_id, *row[1:]) for row in rows),
        )

    def add_file_edits(self, session_id: str, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(ordinal, path, forward, inverse)`` digests of landed edits."""
        self.connection.executemany(
            "INSERT OR IGNORE INTO file_edits (session_id, ordinal, path, forward, inverse)"
            " VALUES (?, ?, ?, ?, ?)",
            ((session_id, *row) for row in rows),
        )

    def set_noted_state(self, session_id: str, state: NotedState) -> None:
        """Record ``(message_count, version, resume_from)`` after a reading of the session."""
        self.connection.execute(
            "INSERT OR REPLACE INTO noted_sessions (session_id, message_count, version,"
            " resume_from) VALUES (?, ?, ?, ?)",
            (session_id, *state),
        )
