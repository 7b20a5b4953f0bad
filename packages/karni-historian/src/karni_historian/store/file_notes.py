"""Each file's notes and shaping requests, and how far each session was read for them.

``ingest`` works out, from a session's raw messages, what each file it edited
went through (:mod:`karni_historian.condense.file_notes`) and writes it here.
A session is read incrementally: ``noted_sessions`` remembers the request the
next reading starts from (the last two requests are read again, since they
may still grow or be answered), the messages the session had, and the
version of the extraction. A reading's rows are staged in the connection's
temporary tables as it goes (:class:`NoteStaging`), then replace the rows
from that request on in one short transaction: the notes, the shaping
requests, the edit digests, and what ``blame`` reads (``written_ranges`` and
``session_commits``, ``docs/historian/blame.md``). ``file_edits`` keeps a
digest of every landed edit, so an edit that writes back an earlier one is
recognised without holding the earlier one, in the same reading or a later
one (``docs/historian/file-notes.md``).
"""

from __future__ import annotations

from karni_historian.store.database import Database

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["FileNoteTables", "NoteStaging", "NotedState"]

NotedState = tuple[int, int, int]
"""``(message_count, version, resume_from)`` of a noted session."""


class FileNoteTables(Database):
    """The ``file_notes``, ``file_requests``, ``file_edits`` and ``noted_sessions`` tables.

    With ``blame``'s ``written_ranges`` and ``session_commits``, written with them.
    """

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

    def stage_file_notes(self, session_id: str, start: int) -> NoteStaging:
        """Begin a reading of the session from request ``start``: rows go to a staging area.

        The connection's own temporary tables hold them (so the store is not
        locked while the session is read); :meth:`NoteStaging.publish`
        replaces the session's rows from ``start`` on with them in one
        transaction.
        """
        return NoteStaging(self, session_id, start)


_STAGED = (
    ("file_notes", "path, request, ordinal, kind, text, weight", "INSERT OR IGNORE", "request"),
    (
        "file_requests",
        "path, request, timestamp, text, added, removed",
        "INSERT OR REPLACE",
        "request",
    ),
    ("file_edits", "ordinal, path, forward, inverse", "INSERT OR IGNORE", "ordinal"),
    (
        "written_ranges",
        "path, request, ordinal, position, timestamp, hash, lines, loose",
        "INSERT OR REPLACE",
        "ordinal",
    ),
    (
        "session_commits",
        "ordinal, request, hash, subject, timestamp, request_text, request_time",
        "INSERT OR IGNORE",
        "ordinal",
    ),
)
"""Each table a reading writes: its columns (besides the session), how a row joins it, and
the column whose value from the reading's start on marks the rows the reading replaces."""


class NoteStaging:
    """One reading's rows, staged in the connection's temporary tables until published.

    Rows are kept in the order they were added, and join the store's tables
    in that order (a repeated note keeps its first row, a repeated request
    its last), as if written there directly.
    """

    def __init__(self, tables: FileNoteTables, session_id: str, start: int) -> None:
        self.connection = tables.connection
        self.tables = tables
        self.session_id = session_id
        self.start = start
        execute = self.connection.execute
        for table, columns, _insert, _key in _STAGED:
            execute(f"CREATE TEMP TABLE IF NOT EXISTS staged_{table} ({columns})")
            execute(f"DELETE FROM temp.staged_{table}")
        execute("DROP INDEX IF EXISTS temp.staged_edit_content")
        self._indexed = False  # made at the first look-up: after the rows, in one sort

    def add_notes(self, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(path, request, ordinal, kind, text, weight)`` notes."""
        self.connection.executemany(
            "INSERT INTO temp.staged_file_notes VALUES (?, ?, ?, ?, ?, ?)", rows
        )

    def add_requests(self, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(path, request, timestamp, text, added, removed)`` shaping requests."""
        self.connection.executemany(
            "INSERT INTO temp.staged_file_requests VALUES (?, ?, ?, ?, ?, ?)", rows
        )

    def add_edits(self, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(ordinal, path, forward, inverse)`` digests of landed edits."""
        self.connection.executemany("INSERT INTO temp.staged_file_edits VALUES (?, ?, ?, ?)", rows)

    def add_written(self, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(path, request, ordinal, position, timestamp, hash, lines, loose)`` ranges.

        What ``blame`` reads (``docs/historian/blame.md``): the line ranges
        each landed edit wrote.
        """
        self.connection.executemany(
            "INSERT INTO temp.staged_written_ranges VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows
        )

    def add_commits(self, rows: Iterable[Sequence[object]]) -> None:
        """Add ``(ordinal, request, hash, subject, timestamp, request_text, request_time)`` commits.

        The commits the session's git commands printed they made, for ``blame``.
        """
        self.connection.executemany(
            "INSERT INTO temp.staged_session_commits VALUES (?, ?, ?, ?, ?, ?, ?)", rows
        )

    def latest_edit(self, path: str, forward: str, before: int) -> int | None:
        """The message of the latest landed edit of ``path`` before ``before``, digest ``forward``.

        Among the session's edits read before this reading and those staged;
        what an edit writing it back undid, None when there is none.
        """
        if not self._indexed:
            self.connection.execute(
                "CREATE INDEX temp.staged_edit_content ON staged_file_edits (path, forward)"
            )
            self._indexed = True
        row = self.connection.execute(
            "SELECT max(ordinal) FROM (SELECT ordinal FROM file_edits"
            " WHERE session_id = ? AND path = ? AND forward = ? AND ordinal < ? AND ordinal < ?"
            " UNION ALL SELECT ordinal FROM temp.staged_file_edits"
            " WHERE path = ? AND forward = ? AND ordinal < ?)",
            (self.session_id, path, forward, before, self.start, path, forward, before),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def publish(self, state: NotedState) -> None:
        """Replace the session's rows from ``start`` on with the staged ones, record ``state``.

        ``state`` is ``(message_count, version, resume_from)`` after this reading.
        """
        session_id, start = self.session_id, self.start
        execute = self.connection.execute
        with self.tables.transaction():
            for table, columns, insert, key in _STAGED:
                execute(
                    f"DELETE FROM {table} WHERE session_id = ? AND {key} >= ?", (session_id, start)
                )
                execute(
                    f"{insert} INTO {table} (session_id, {columns})"
                    f" SELECT ?, {columns} FROM temp.staged_{table} ORDER BY rowid",
                    (session_id,),
                )
            execute(
                "INSERT OR REPLACE INTO noted_sessions (session_id, message_count, version,"
                " resume_from) VALUES (?, ?, ?, ?)",
                (session_id, *state),
            )
        for table, _columns, _insert, _key in _STAGED:
            execute(f"DELETE FROM temp.staged_{table}")
