"""The shared history's index: which files under ``.karni/history/`` were read, and their rows.

A shared session (``docs/how-to/team-history.md``) lands in the same tables
as a session ingested here (``sessions``, ``compartments``, ``memories`` and
``memory_sources``, ``message_files``, ``file_requests``, ``file_notes``,
``noted_sessions``, and ``blame``'s ``written_ranges`` and ``session_commits``),
so briefs, ``search`` and ``blame`` read it without knowing where it came
from; its compartments and facts enter the search index as they are written,
and its ``sessions.author`` is the git author of its file. ``shared_files``
remembers each file's size and time, the session it holds, what became of
it (``imported``; ``local``, a session this store ingested itself, counted
once; ``skipped`` with the reason) and who committed it; ``shared_state``
keeps the folder's fingerprint of the last refresh. A file that changed or
went away takes its session's rows with it.
"""

from __future__ import annotations

from karni_historian.store.database import utc_now
from karni_historian.store.memory import MemoryTables
from karni_historian.store.search_sql import KIND_COMPARTMENT, KIND_FACT, index_rows, unindex_rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["IndexedFile", "SharedTables"]

IndexedFile = tuple[str | None, int, int, str]
"""``(session_id, size, mtime_ns, state)`` of an indexed shared file."""

_SESSION_TABLES = (
    "compartments",
    "message_files",
    "file_requests",
    "file_notes",
    "noted_sessions",
    "written_ranges",
    "session_commits",
    "memory_sources",
)


class SharedTables(MemoryTables):
    """``shared_files`` and ``shared_state``, and the rows of the sessions they imported."""

    def shared_index(self) -> dict[str, IndexedFile]:
        """Every indexed file by name."""
        rows = self.connection.execute(
            "SELECT name, session_id, size, mtime_ns, state FROM shared_files"
        )
        return {name: (session, size, mtime, state) for name, session, size, mtime, state in rows}

    def set_shared_fingerprint(self, fingerprint: str, stamp: str | None = None) -> None:
        """Remember what the folder looked like when this refresh read it.

        ``stamp`` is the folder's own (:func:`~karni_historian.shared_folder.settled_stamp`),
        or None when it changed too recently to be trusted.
        """
        self.connection.execute(
            "INSERT OR REPLACE INTO shared_state (key, value) VALUES ('fingerprint', ?)",
            (fingerprint,),
        )
        self.set_shared_stamp(stamp)

    def set_shared_stamp(self, stamp: str | None) -> None:
        """Remember the folder's own settled stamp (None: forget it)."""
        if stamp is None:
            self.connection.execute("DELETE FROM shared_state WHERE key = 'stamp'")
        else:
            self.connection.execute(
                "INSERT OR REPLACE INTO shared_state (key, value) VALUES ('stamp', ?)", (stamp,)
            )

    def imported_sessions(self) -> set[str]:
        """The sessions imported from shared files (no raw messages here: never condensed)."""
        rows = self.connection.execute(
            "SELECT session_id FROM shared_files"
            " WHERE state = 'imported' AND session_id IS NOT NULL"
        )
        return {row[0] for row in rows}

    def is_local_session(self, session_id: str) -> bool:
        """Whether the session is one this store holds and did not import from a shared file."""
        row = self.connection.execute(
            "SELECT 1 FROM sessions s WHERE s.id = ? AND NOT EXISTS (SELECT 1 FROM shared_files f"
            " WHERE f.session_id = s.id AND f.state = 'imported')",
            (session_id,),
        ).fetchone()
        return row is not None

    def forget_shared_file(self, name: str) -> None:
        """Drop the file from the index, with the rows of the session it imported."""
        row = self.connection.execute(
            "SELECT session_id, state FROM shared_files WHERE name = ?", (name,)
        ).fetchone()
        if row is not None and row[1] == "imported" and row[0]:
            self._drop_session(row[0])
        self.connection.execute("DELETE FROM shared_files WHERE name = ?", (name,))

    def reclaim_ingested(self) -> int:
        """Give back to the local side every imported session this store has now ingested.

        The user's own session, shared from another machine and imported
        here, then ingested here from its transcript: the local messages
        win. Its imported rows go (its notes and compartments are worked out
        again from the messages) and its file counts as ``local``. Returns
        how many sessions were given back.
        """
        rows = self.connection.execute(
            "SELECT f.name, f.session_id FROM shared_files f WHERE f.state = 'imported'"
            " AND EXISTS (SELECT 1 FROM raw_messages m WHERE m.session_id = f.session_id)"
        ).fetchall()
        with self.transaction():
            for name, session_id in rows:
                self._drop_session(session_id, keep_session=True)
                self.connection.execute(
                    "UPDATE shared_files SET state = 'local', author = NULL, author_email = NULL"
                    " WHERE name = ?",
                    (name,),
                )
        return len(rows)

    def _drop_session(self, session_id: str, *, keep_session: bool = False) -> None:
        execute = self.connection.execute
        unindex_rows(self.connection, KIND_COMPARTMENT, "c.session_id = ?", (session_id,))
        orphaned = (
            "f.source_session_id = ? AND NOT EXISTS (SELECT 1 FROM memory_sources s"
            " WHERE s.memory_id = f.id AND s.session_id != f.source_session_id)"
        )
        unindex_rows(self.connection, KIND_FACT, orphaned, (session_id,))
        for table in _SESSION_TABLES:
            if not (keep_session and table == "message_files"):  # ingest wrote the same rows
                execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        execute(
            "DELETE FROM memories WHERE source_session_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM memory_sources s WHERE s.memory_id = memories.id)",
            (session_id,),
        )
        if keep_session:
            execute("UPDATE sessions SET title_rank = 0 WHERE id = ?", (session_id,))
        else:
            execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def index_shared_file(
        self,
        name: str,
        stat: tuple[int, int],
        state: str,
        *,
        session_id: str | None = None,
        problem: str | None = None,
    ) -> None:
        """Record a file that was not imported: ``local`` (counted once) or ``skipped``."""
        self.connection.execute(
            "INSERT OR REPLACE INTO shared_files (name, session_id, size, mtime_ns, state, problem)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (name, session_id, *stat, state, problem),
        )

    def attribute_shared_files(
        self, authors: Iterable[tuple[str, str | None, str | None, str | None]]
    ) -> None:
        """Set ``(name, author, email, date)`` of each file; None: the local user's.

        The session a file imported takes the same author (``sessions.author``,
        which ``search --author`` and the timeline read).
        """
        authors = list(authors)
        self.connection.executemany(
            "UPDATE shared_files SET author = ?2, author_email = ?3, committed_at = ?4"
            " WHERE name = ?1",
            authors,
        )
        self.connection.executemany(
            "UPDATE sessions SET author = ?2 WHERE id = (SELECT session_id FROM shared_files"
            " WHERE name = ?1 AND state = 'imported')",
            [(name, author) for name, author, _email, _date in authors],
        )

    def import_shared_session(
        self, name: str, stat: tuple[int, int], document: dict[str, Any]
    ) -> None:
        """Store a parsed shared session (:func:`~karni_historian.ingest.shared_format.parse`)."""
        session = document["session"]
        session_id = session["id"]
        self.forget_shared_file(name)
        now = utc_now()
        self.connection.execute(
            "INSERT INTO sessions (id, source, title, title_rank, first_ts, last_ts, message_count,"
            " created_at, updated_at) VALUES (?, ?, ?, 9, ?, ?, 0, ?, ?)",
            (
                session_id,
                session["harness"],
                session["title"],
                session["started"],
                session["ended"],
                now,
                now,
            ),
        )
        self._insert_compartments(session_id, document["compartments"], now)
        index_rows(self.connection, KIND_COMPARTMENT, "c.session_id = ?", (session_id,))
        self._insert_facts(session_id, document["facts"])
        for path, entry in sorted(document["files"].items()):
            self._insert_file(session_id, path, entry)
        self._insert_commits(session_id, document.get("commits", []))
        self.connection.execute(
            "INSERT OR REPLACE INTO noted_sessions (session_id, message_count, version,"
            " resume_from) VALUES (?, 0, -1, 0)",
            (session_id,),
        )
        self.connection.execute(
            "INSERT OR REPLACE INTO shared_files (name, session_id, size, mtime_ns, state)"
            " VALUES (?, ?, ?, ?, 'imported')",
            (name, session_id, *stat),
        )

    def _insert_compartments(self, session_id: str, rows: list[dict[str, Any]], now: str) -> None:
        self.connection.executemany(
            "INSERT OR IGNORE INTO compartments (session_id, sequence, start_message, end_message,"
            " title, p1, p2, p3, p4, importance, episode_type, start_date, end_date, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    session_id,
                    c["sequence"],
                    c["start"],
                    c["end"],
                    c["title"],
                    c["p1"] or "",
                    c["p2"],
                    c["p3"],
                    c["p4"],
                    c["importance"],
                    c["type"],
                    c["start_date"],
                    c["end_date"],
                    now,
                )
                for c in rows
            ],
        )

    def _insert_facts(self, session_id: str, facts: list[dict[str, Any]]) -> None:
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.model import Fact

        for fact in facts:
            self.add_fact(
                Fact(fact["category"], fact["content"]),
                session_id=session_id,
                span=(fact["start"], fact["end"]),
                source=(fact["message"], fact["origin"]),
            )

    def _insert_file(self, session_id: str, path: str, entry: dict[str, Any]) -> None:
        execute = self.connection.executemany
        requests = entry.get("requests", [])
        execute(
            "INSERT OR REPLACE INTO file_requests (path, session_id, request, timestamp, text,"
            " added, removed) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (path, session_id, r["request"], r["time"], r["text"], r["added"], r["removed"])
                for r in requests
            ],
        )
        execute(
            "INSERT OR IGNORE INTO message_files (session_id, ordinal, path, action)"
            " VALUES (?, ?, ?, 'edit')",
            [(session_id, ordinal, path) for r in requests for ordinal in r.get("edits", [])],
        )
        execute(
            "INSERT OR IGNORE INTO written_ranges (path, session_id, request, ordinal, position,"
            " timestamp, hash, lines, loose) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    path,
                    session_id,
                    r["request"],
                    g["ordinal"],
                    g["position"],
                    g["time"],
                    g["hash"],
                    g["lines"],
                    g["loose"],
                )
                for r in requests
                for g in r.get("ranges", [])
            ],
        )
        execute(
            "INSERT OR IGNORE INTO file_notes (path, session_id, request, ordinal, kind, text,"
            " weight) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (path, session_id, n["request"], n["message"], n["kind"], n["text"], n["weight"])
                for n in entry.get("notes", [])
            ],
        )

    def _insert_commits(self, session_id: str, commits: list[dict[str, Any]]) -> None:
        self.connection.executemany(
            "INSERT OR IGNORE INTO session_commits (session_id, ordinal, request, hash, subject,"
            " timestamp, request_text, request_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    session_id,
                    c["ordinal"],
                    c["request"],
                    c["hash"],
                    c["subject"],
                    c["time"],
                    c["request_text"],
                    c["request_time"],
                )
                for c in commits
            ],
        )

    def session_written_rows(self, session_id: str) -> list[tuple[Any, ...]]:
        """``(path, request, ordinal, position, timestamp, hash, lines, loose)`` it wrote."""
        return self.connection.execute(
            "SELECT path, request, ordinal, position, timestamp, hash, lines, loose"
            " FROM written_ranges WHERE session_id = ? ORDER BY path, request, ordinal, position",
            (session_id,),
        ).fetchall()

    def session_commit_rows(self, session_id: str) -> list[tuple[Any, ...]]:
        """``(ordinal, request, hash, subject, timestamp, request_text, request_time)``."""
        return self.connection.execute(
            "SELECT ordinal, request, hash, subject, timestamp, request_text, request_time"
            " FROM session_commits WHERE session_id = ? ORDER BY ordinal, hash",
            (session_id,),
        ).fetchall()

    def session_edit_rows(self, session_id: str) -> list[tuple[str, int]]:
        """``(path, ordinal)`` of every message of the session that edited a file."""
        return self.connection.execute(
            "SELECT path, ordinal FROM message_files WHERE session_id = ?"
            " AND action IN ('edit', 'create')"
            " ORDER BY path, ordinal",
            (session_id,),
        ).fetchall()

    def session_fact_rows(self, session_id: str) -> list[tuple[Any, ...]]:
        """``(category, content, origin, start, end, message)`` of the session's promoted facts."""
        return self.connection.execute(
            "SELECT m.category, m.content, s.origin, s.start_message, s.end_message,"
            " s.source_message FROM memory_sources s JOIN memories m ON m.id = s.memory_id"
            " WHERE s.session_id = ? ORDER BY s.start_message, m.category, m.content",
            (session_id,),
        ).fetchall()

    def session_request_rows(self, session_id: str) -> list[tuple[Any, ...]]:
        """``(path, request, timestamp, text, added, removed)`` of the session's file requests."""
        return self.connection.execute(
            "SELECT path, request, timestamp, text, added, removed FROM file_requests"
            " WHERE session_id = ? ORDER BY path, request",
            (session_id,),
        ).fetchall()

    def session_note_rows(self, session_id: str) -> list[tuple[Any, ...]]:
        """``(path, kind, request, ordinal, text, weight)`` of the session's file notes."""
        return self.connection.execute(
            "SELECT path, kind, request, ordinal, text, weight FROM file_notes"
            " WHERE session_id = ? ORDER BY path, request, ordinal, kind, text",
            (session_id,),
        ).fetchall()

    def shared_problems(self) -> list[tuple[str, str]]:
        """``(name, reason)`` of every skipped shared file, by name."""
        return self.connection.execute(
            "SELECT name, problem FROM shared_files WHERE state = 'skipped' ORDER BY name"
        ).fetchall()
