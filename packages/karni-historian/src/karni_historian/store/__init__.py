"""The historian's SQLite store: one database per project, never committed.

The database lives at ``.karni/local/historian.db``. The folder is created
owner-only (0700) with a ``.gitignore`` holding ``*``; the database file is
created 0600 before SQLite opens it, and SQLite gives its journal files the
same mode. The schema is versioned with ``PRAGMA user_version`` and upgraded
by the ordered :data:`MIGRATIONS`. Every write happens inside
:meth:`Store.transaction`, so an exception or Ctrl-C leaves the previous state.

Raw messages are copied from the transcripts and never deleted: compartments
are a view on them, and ``expand`` recovers any message in full. Parts are
stored as JSON (see :func:`parts_to_json`).
"""

from __future__ import annotations

import os
import sqlite3

from karni_historian.errors import StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Any

    from karni_historian.model import Compartment, Fact, Message

__all__ = [
    "DB_RELATIVE_PATH",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "CursorState",
    "RunRecord",
    "SessionInfo",
    "Store",
    "StoreError",
    "StoredCompartment",
    "db_path",
    "normalize_fact",
    "parts_from_json",
    "parts_to_json",
]

DB_RELATIVE_PATH = (".karni", "local", "historian.db")
"""Where the database lives, relative to the project root."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # Version 1: the first schema.
    (
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            title TEXT,
            title_rank INTEGER NOT NULL DEFAULT 0,
            cwd TEXT,
            first_ts TEXT,
            last_ts TEXT,
            message_count INTEGER NOT NULL DEFAULT 0,
            failure_count INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            last_failure_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE raw_messages (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            ordinal INTEGER NOT NULL CHECK (ordinal >= 1),
            message_id TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL,
            parts_json TEXT NOT NULL,
            timestamp TEXT,
            UNIQUE (session_id, ordinal)
        )""",
        "CREATE INDEX idx_raw_messages_message_id ON raw_messages(session_id, message_id)"
        " WHERE message_id != ''",
        """CREATE TABLE tool_calls (
            session_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            PRIMARY KEY (session_id, call_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE message_files (
            session_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            path TEXT NOT NULL,
            action TEXT NOT NULL,
            PRIMARY KEY (session_id, ordinal, path, action)
        ) WITHOUT ROWID""",
        "CREATE INDEX idx_message_files_path ON message_files(path)",
        """CREATE TABLE compartments (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            sequence INTEGER NOT NULL,
            start_message INTEGER NOT NULL,
            end_message INTEGER NOT NULL,
            start_message_id TEXT NOT NULL DEFAULT '',
            end_message_id TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            p1 TEXT, p2 TEXT, p3 TEXT, p4 TEXT,
            importance INTEGER NOT NULL DEFAULT 50,
            episode_type TEXT,
            legacy INTEGER NOT NULL DEFAULT 0,
            start_date TEXT,
            end_date TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (session_id, sequence)
        )""",
        """CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            category TEXT NOT NULL,
            content TEXT NOT NULL,
            normalized_hash TEXT NOT NULL,
            source_session_id TEXT,
            seen_count INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (category, normalized_hash)
        )""",
        """CREATE TABLE memory_sources (
            memory_id INTEGER NOT NULL REFERENCES memories(id),
            session_id TEXT NOT NULL,
            start_message INTEGER NOT NULL,
            end_message INTEGER NOT NULL,
            PRIMARY KEY (memory_id, session_id, start_message)
        ) WITHOUT ROWID""",
        """CREATE TABLE historian_runs (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            run_kind TEXT NOT NULL,
            historian TEXT NOT NULL,
            status TEXT NOT NULL,
            failure_reason TEXT,
            chunk_start INTEGER,
            chunk_end INTEGER,
            unprocessed_from INTEGER,
            compartments_produced INTEGER NOT NULL DEFAULT 0,
            facts_emitted INTEGER NOT NULL DEFAULT 0,
            importance_min INTEGER,
            importance_max INTEGER,
            importance_avg REAL,
            discarded_last INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE ingest_cursors (
            source TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            offset INTEGER NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            lines INTEGER NOT NULL DEFAULT 0,
            malformed INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE seen_records (
            key TEXT PRIMARY KEY
        ) WITHOUT ROWID""",
    ),
)
"""The schema, one tuple of statements per version; version N is ``MIGRATIONS[N-1]``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes."""


def db_path(root: str | os.PathLike[str]) -> str:
    """The database path of the project at ``root``."""
    return os.path.join(os.fspath(root), *DB_RELATIVE_PATH)


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def normalize_fact(content: str) -> str:
    """The form of a fact used to deduplicate it: case-folded, whitespace collapsed."""
    return " ".join(content.casefold().split()).rstrip(".")


# --- parts as JSON -------------------------------------------------------------------------


def parts_to_json(parts: Iterable[Any]) -> str:
    """Encode model parts (``TextPart``/``ToolPart``) as the stored JSON list."""
    import json

    return json.dumps([part_to_dict(part) for part in parts], ensure_ascii=False)


def part_to_dict(part: Any) -> dict[str, Any]:
    """One part as the stored JSON object; defaults are left out."""
    if hasattr(part, "text"):
        out: dict[str, Any] = {"type": "text", "text": part.text}
        if part.ignored:
            out["ignored"] = True
        return out
    out = {"type": "tool", "name": part.name, "input": part.input}
    if part.output is not None:
        out["output"] = part.output
    if part.call_id:
        out["call_id"] = part.call_id
    if part.is_error:
        out["is_error"] = True
    if part.metadata:
        out["metadata"] = part.metadata
    return out


def parts_from_json(text: str) -> tuple[Any, ...]:
    """Decode the stored JSON list into model parts."""
    import json

    from karni_historian.model import TextPart, ToolPart

    parts: list[Any] = []
    for item in json.loads(text):
        if item.get("type") == "tool":
            parts.append(
                ToolPart(
                    name=item.get("name", ""),
                    input=item.get("input"),
                    output=item.get("output"),
                    call_id=item.get("call_id", ""),
                    is_error=bool(item.get("is_error", False)),
                    metadata=item.get("metadata"),
                )
            )
        else:
            parts.append(TextPart(item.get("text", ""), bool(item.get("ignored", False))))
    return tuple(parts)


# --- plain records ---------------------------------------------------------------------------


class SessionInfo:
    """One stored session, as ``sessions`` lists it."""

    __slots__ = ("first_ts", "id", "last_ts", "message_count", "source", "title")

    def __init__(
        self,
        id: str,
        source: str,
        title: str | None,
        message_count: int,
        first_ts: str | None,
        last_ts: str | None,
    ) -> None:
        """Create the record (fields as in the ``sessions`` table)."""
        self.id = id
        self.source = source
        self.title = title
        self.message_count = message_count
        self.first_ts = first_ts
        self.last_ts = last_ts

    def __repr__(self) -> str:
        return f"SessionInfo({self.id!r}, {self.source!r}, messages={self.message_count})"


class StoredCompartment:
    """A compartment row: the model :class:`Compartment` plus where it is stored."""

    __slots__ = ("compartment", "id", "sequence", "session_id")

    def __init__(self, id: int, session_id: str, sequence: int, compartment: Compartment) -> None:
        """Create the record."""
        self.id = id
        self.session_id = session_id
        self.sequence = sequence
        self.compartment = compartment


class CursorState:
    """How far an ingest source file has been read."""

    __slots__ = ("inode", "kind", "lines", "malformed", "mtime_ns", "offset", "size")

    def __init__(
        self,
        kind: str,
        offset: int,
        size: int,
        mtime_ns: int,
        inode: int,
        lines: int = 0,
        malformed: int = 0,
    ) -> None:
        """Create the record (fields as in the ``ingest_cursors`` table)."""
        self.kind = kind
        self.offset = offset
        self.size = size
        self.mtime_ns = mtime_ns
        self.inode = inode
        self.lines = lines
        self.malformed = malformed


class RunRecord:
    """One historian run, successful or not, for ``historian_runs``."""

    __slots__ = (
        "chunk_end",
        "chunk_start",
        "compartments_produced",
        "discarded_last",
        "facts_emitted",
        "failure_reason",
        "historian",
        "importances",
        "run_kind",
        "session_id",
        "status",
        "unprocessed_from",
    )

    def __init__(
        self,
        session_id: str,
        run_kind: str,
        status: str,
        *,
        historian: str = "local/extractive",
        failure_reason: str | None = None,
        chunk_start: int | None = None,
        chunk_end: int | None = None,
        unprocessed_from: int | None = None,
        compartments_produced: int = 0,
        facts_emitted: int = 0,
        importances: Sequence[int] = (),
        discarded_last: bool = False,
    ) -> None:
        """Create the record (fields as in the ``historian_runs`` table)."""
        self.session_id = session_id
        self.run_kind = run_kind
        self.status = status
        self.historian = historian
        self.failure_reason = failure_reason
        self.chunk_start = chunk_start
        self.chunk_end = chunk_end
        self.unprocessed_from = unprocessed_from
        self.compartments_produced = compartments_produced
        self.facts_emitted = facts_emitted
        self.importances = tuple(importances)
        self.discarded_last = discarded_last


# --- the store ---------------------------------------------------------------------------------


def _prepare_folder(folder: str) -> None:
    """Create ``.karni/local`` owner-only, with its ``.gitignore``."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    ignore = os.path.join(folder, ".gitignore")
    if not os.path.exists(ignore):
        temporary = f"{ignore}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write("*\n")
        os.replace(temporary, ignore)


class Store:
    """An open historian database.

    Use :meth:`open`; close it with :meth:`close` or a ``with`` block.
    """

    def __init__(self, connection: sqlite3.Connection, path: str, readonly: bool) -> None:
        """Wrap an open connection (use :meth:`open` instead)."""
        self.connection = connection
        self.path = path
        self.readonly = readonly
        self._depth = 0

    # -- opening --

    @classmethod
    def open(
        cls, root: str | os.PathLike[str], *, create: bool = False, readonly: bool = False
    ) -> Store:
        """Open the project's store.

        Args:
            root: The project root.
            create: Create the folder and database when missing (owner-only).
            readonly: Open without ever writing (the provider's mode).

        Raises:
            StoreError: The database is missing (and ``create`` is false), cannot
                be opened, or was written by a newer version of karni-historian.
        """
        path = db_path(root)
        if not os.path.isfile(path):
            if not create or readonly:
                raise StoreError(
                    f"no historian store at {path}; run `karni-historian ingest` first"
                )
            _prepare_folder(os.path.dirname(path))
            descriptor = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(descriptor)
        try:
            if readonly:
                from pathlib import Path

                connection = sqlite3.connect(
                    f"{Path(path).resolve().as_uri()}?mode=ro",
                    uri=True,
                    isolation_level=None,
                    timeout=1.0,
                )
            else:
                connection = sqlite3.connect(path, isolation_level=None, timeout=10.0)
            store = cls(connection, path, readonly)
            store._configure()
        except sqlite3.Error as error:
            raise StoreError(
                f"cannot open the historian store {path}: {error}; "
                f"remove it and run `karni-historian ingest` to rebuild it"
            ) from error
        return store

    def _configure(self) -> None:
        self.connection.execute("PRAGMA foreign_keys = ON")
        version = self.connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            self.connection.close()
            raise StoreError(
                f"the historian store {self.path} has schema version {version}, newer than this "
                f"karni-historian understands ({SCHEMA_VERSION}); upgrade karni-historian"
            )
        if self.readonly:
            if version < SCHEMA_VERSION:
                self.connection.close()
                raise StoreError(
                    f"the historian store {self.path} needs an upgrade; "
                    f"run `karni-historian ingest` once"
                )
            return
        self.connection.execute("PRAGMA journal_mode = WAL")
        self.connection.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            self.migrate(version)

    def migrate(self, version: int) -> None:
        """Apply the migrations after ``version``, each in its own transaction."""
        for number in range(version + 1, SCHEMA_VERSION + 1):
            with self.transaction():
                for statement in MIGRATIONS[number - 1]:
                    self.connection.execute(statement)
                self.connection.execute(f"PRAGMA user_version = {number}")

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> _Transaction:
        """A ``with`` block that commits on success and rolls back on any exception.

        Nested blocks join the outer transaction.
        """
        return _Transaction(self)

    @property
    def root(self) -> str:
        """The project root the store belongs to."""
        return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(self.path))))

    @property
    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self.connection.execute("PRAGMA user_version").fetchone()[0])

    # -- sessions --

    def ensure_session(
        self, session_id: str, source: str, *, cwd: str | None = None, timestamp: str | None = None
    ) -> None:
        """Create the session when new; widen its time span with ``timestamp``."""
        now = _now()
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

    def sessions(self) -> list[SessionInfo]:
        """Every session, newest (by last message time, then id) first."""
        rows = self.connection.execute(
            "SELECT id, source, title, message_count, first_ts, last_ts FROM sessions"
            " ORDER BY COALESCE(last_ts, '') DESC, id DESC"
        ).fetchall()
        return [SessionInfo(*row) for row in rows]

    def session(self, session_id: str) -> SessionInfo | None:
        """The session with this id, or None."""
        row = self.connection.execute(
            "SELECT id, source, title, message_count, first_ts, last_ts FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        return SessionInfo(*row) if row else None

    # -- raw messages --

    def message_count(self, session_id: str) -> int:
        """The number of raw messages of the session (its last ordinal)."""
        row = self.connection.execute(
            "SELECT COALESCE(MAX(ordinal), 0) FROM raw_messages WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0])

    def write_message(
        self,
        session_id: str,
        ordinal: int,
        role: str,
        parts_json: str,
        *,
        timestamp: str | None = None,
        message_id: str = "",
    ) -> None:
        """Insert the message at ``ordinal``, or replace its parts when it exists.

        Raw messages are never deleted; a replacement only ever adds to a
        message (a later block of the same response, a tool result).
        """
        cursor = self.connection.execute(
            "UPDATE raw_messages SET parts_json = ? WHERE session_id = ? AND ordinal = ?",
            (parts_json, session_id, ordinal),
        )
        if cursor.rowcount:
            return
        self.connection.execute(
            "INSERT INTO raw_messages (session_id, ordinal, message_id, role, parts_json,"
            " timestamp) VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, ordinal, message_id, role, parts_json, timestamp),
        )
        self.connection.execute(
            "UPDATE sessions SET message_count = MAX(message_count, ?), updated_at = ?,"
            " first_ts = CASE WHEN first_ts IS NULL OR (? IS NOT NULL AND ? < first_ts)"
            " THEN COALESCE(?, first_ts) ELSE first_ts END,"
            " last_ts = CASE WHEN last_ts IS NULL OR (? IS NOT NULL AND ? > last_ts)"
            " THEN COALESCE(?, last_ts) ELSE last_ts END WHERE id = ?",
            (
                ordinal,
                _now(),
                timestamp,
                timestamp,
                timestamp,
                timestamp,
                timestamp,
                timestamp,
                session_id,
            ),
        )

    def insert_messages(
        self, session_id: str, rows: Sequence[tuple[int, str, str, str | None, str]]
    ) -> None:
        """Insert new messages as ``(ordinal, role, parts_json, timestamp, message_id)`` rows.

        Faster than :meth:`write_message` for messages known to be new: one
        statement for all rows, one update of the session's counters.
        """
        if not rows:
            return
        self.connection.executemany(
            "INSERT INTO raw_messages (session_id, ordinal, role, parts_json, timestamp,"
            " message_id) VALUES (?, ?, ?, ?, ?, ?)",
            [(session_id, *row) for row in rows],
        )
        stamps = [row[3] for row in rows if row[3]]
        self.connection.execute(
            "UPDATE sessions SET message_count = MAX(message_count, ?), updated_at = ?,"
            " first_ts = CASE WHEN ? IS NOT NULL AND (first_ts IS NULL OR ? < first_ts)"
            " THEN ? ELSE first_ts END,"
            " last_ts = CASE WHEN ? IS NOT NULL AND (last_ts IS NULL OR ? > last_ts)"
            " THEN ? ELSE last_ts END WHERE id = ?",
            (
                max(row[0] for row in rows),
                _now(),
                *([min(stamps)] * 3 if stamps else [None] * 3),
                *([max(stamps)] * 3 if stamps else [None] * 3),
                session_id,
            ),
        )

    def raw_message(self, session_id: str, ordinal: int) -> tuple[str, str, str | None, str] | None:
        """``(role, parts_json, timestamp, message_id)`` of one message, or None."""
        row: tuple[str, str, str | None, str] | None = self.connection.execute(
            "SELECT role, parts_json, timestamp, message_id FROM raw_messages"
            " WHERE session_id = ? AND ordinal = ?",
            (session_id, ordinal),
        ).fetchone()
        return row

    def ordinal_of_message_id(self, session_id: str, message_id: str) -> int | None:
        """The ordinal of the message with this provider id, or None."""
        # Without the hint SQLite prefers the primary key for the session and scans
        # every message of it: quadratic on a long session.
        row = self.connection.execute(
            "SELECT min(ordinal) FROM raw_messages INDEXED BY idx_raw_messages_message_id"
            " WHERE session_id = ? AND message_id = ? AND message_id != ''",
            (session_id, message_id),
        ).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def message(self, session_id: str, ordinal: int) -> Message | None:
        """One message as a model :class:`Message`, or None when missing."""
        messages = self.messages(session_id, ordinal, ordinal)
        return messages[0] if messages else None

    def messages(self, session_id: str, start: int = 1, end: int | None = None) -> list[Message]:
        """The session's messages with ``start <= ordinal <= end``, in order."""
        return list(self.iter_messages(session_id, start, end))

    def iter_messages(
        self, session_id: str, start: int = 1, end: int | None = None
    ) -> Iterator[Message]:
        """Like :meth:`messages`, one at a time."""
        from karni_historian.model import Message

        rows = self.connection.execute(
            "SELECT ordinal, role, parts_json, timestamp, message_id FROM raw_messages"
            " WHERE session_id = ? AND ordinal >= ? AND ordinal <= ? ORDER BY ordinal",
            (session_id, start, end if end is not None else 2**62),
        )
        for ordinal, role, parts_json, timestamp, message_id in rows:
            yield Message(
                ordinal=ordinal,
                role=role,
                parts=parts_from_json(parts_json),
                session_id=session_id,
                timestamp=timestamp,
                message_id=message_id,
            )

    # -- tool calls and files --

    def record_call(self, session_id: str, call_id: str, ordinal: int) -> None:
        """Remember which message made the call ``call_id`` (first one wins)."""
        self.connection.execute(
            "INSERT OR IGNORE INTO tool_calls (session_id, call_id, ordinal) VALUES (?, ?, ?)",
            (session_id, call_id, ordinal),
        )

    def call_ordinal(self, session_id: str, call_id: str) -> int | None:
        """The ordinal of the message that made the call, or None."""
        row = self.connection.execute(
            "SELECT ordinal FROM tool_calls WHERE session_id = ? AND call_id = ?",
            (session_id, call_id),
        ).fetchone()
        return int(row[0]) if row else None

    def add_file(self, session_id: str, ordinal: int, path: str, action: str) -> None:
        """Record that a tool call of the message touched ``path`` (project-relative POSIX)."""
        self.connection.execute(
            "INSERT OR IGNORE INTO message_files (session_id, ordinal, path, action)"
            " VALUES (?, ?, ?, ?)",
            (session_id, ordinal, path, action),
        )

    def files(self, session_id: str, ordinal: int) -> list[tuple[str, str]]:
        """``(path, action)`` pairs the message touched, sorted."""
        return self.connection.execute(
            "SELECT path, action FROM message_files WHERE session_id = ? AND ordinal = ?"
            " ORDER BY path, action",
            (session_id, ordinal),
        ).fetchall()

    def touching(self, path: str) -> list[tuple[str, int]]:
        """``(session_id, ordinal)`` of the messages that touched ``path`` or a file under it."""
        prefix = path.rstrip("/") + "/"
        return self.connection.execute(
            "SELECT DISTINCT session_id, ordinal FROM message_files"
            " WHERE path = ? OR substr(path, 1, ?) = ? ORDER BY session_id, ordinal",
            (path, len(prefix), prefix),
        ).fetchall()

    # -- de-duplication and cursors --

    def first_sighting(self, key: str) -> bool:
        """Record ``key``; True the first time it is seen, False after."""
        cursor = self.connection.execute(
            "INSERT OR IGNORE INTO seen_records (key) VALUES (?)", (key,)
        )
        return cursor.rowcount == 1

    def cursor(self, source: str) -> CursorState | None:
        """The ingest cursor of a source file, or None when never read."""
        row = self.connection.execute(
            "SELECT kind, offset, size, mtime_ns, inode, lines, malformed FROM ingest_cursors"
            " WHERE source = ?",
            (source,),
        ).fetchone()
        return CursorState(*row) if row else None

    def set_cursor(self, source: str, state: CursorState) -> None:
        """Store how far ``source`` has been read."""
        self.connection.execute(
            "INSERT INTO ingest_cursors"
            " (source, kind, offset, size, mtime_ns, inode, lines, malformed, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE SET"
            " kind = excluded.kind, offset = excluded.offset, size = excluded.size,"
            " mtime_ns = excluded.mtime_ns, inode = excluded.inode, lines = excluded.lines,"
            " malformed = excluded.malformed, updated_at = excluded.updated_at",
            (
                source,
                state.kind,
                state.offset,
                state.size,
                state.mtime_ns,
                state.inode,
                state.lines,
                state.malformed,
                _now(),
            ),
        )

    # -- compartments --

    def compartments(self, session_id: str) -> list[StoredCompartment]:
        """The session's compartments, oldest first."""
        rows = self.connection.execute(
            _COMPARTMENT_SELECT + " WHERE session_id = ? ORDER BY sequence", (session_id,)
        ).fetchall()
        return [_compartment_from_row(row) for row in rows]

    def all_compartments(self) -> list[StoredCompartment]:
        """Every compartment of every session, by session then sequence."""
        rows = self.connection.execute(
            _COMPARTMENT_SELECT + " ORDER BY session_id, sequence"
        ).fetchall()
        return [_compartment_from_row(row) for row in rows]

    def touching_compartments(self, path: str) -> list[tuple[str, int, int, int, int, int]]:
        """Compartments whose messages touched ``path`` (or a file under it), oldest first.

        Light rows ``(session_id, id, sequence, importance, start, end)``, ordered by the
        session's first message, then session id, then sequence; fetch the
        full compartments with :meth:`compartments_by_id`.
        """
        prefix = path.rstrip("/") + "/"
        return self.connection.execute(
            "SELECT c.session_id, c.id, c.sequence, c.importance, c.start_message,"
            " c.end_message FROM compartments c"
            " JOIN sessions s ON s.id = c.session_id"
            " WHERE EXISTS (SELECT 1 FROM message_files f WHERE f.session_id = c.session_id"
            " AND f.ordinal BETWEEN c.start_message AND c.end_message"
            " AND (f.path = ? OR substr(f.path, 1, ?) = ?))"
            " ORDER BY COALESCE(s.first_ts, ''), c.session_id, c.sequence",
            (path, len(prefix), prefix),
        ).fetchall()

    def newest_compartments(self, limit: int | None = None) -> list[StoredCompartment]:
        """The newest compartments: sessions by last activity, then sequence, newest first."""
        rows = self.connection.execute(
            "SELECT c.id, c.session_id, c.sequence, c.start_message, c.end_message, c.title,"
            " c.content, c.p1, c.p2, c.p3, c.p4, c.importance, c.start_date, c.end_date,"
            " c.episode_type, c.legacy FROM compartments c JOIN sessions s ON s.id = c.session_id"
            " ORDER BY COALESCE(s.last_ts, '') DESC, c.session_id DESC, c.sequence DESC"
            " LIMIT ?",
            (-1 if limit is None else limit,),
        ).fetchall()
        return [_compartment_from_row(row) for row in rows]

    def compartments_by_id(self, ids: Iterable[int]) -> dict[int, StoredCompartment]:
        """The compartments with these row ids."""
        wanted = list(ids)
        found: dict[int, StoredCompartment] = {}
        for offset in range(0, len(wanted), 500):
            batch = wanted[offset : offset + 500]
            marks = ",".join("?" * len(batch))
            for row in self.connection.execute(
                _COMPARTMENT_SELECT + f" WHERE id IN ({marks})", batch
            ):
                stored = _compartment_from_row(row)
                found[stored.id] = stored
        return found

    def compartment_count(self) -> int:
        """The number of compartments in the store."""
        return int(self.connection.execute("SELECT COUNT(*) FROM compartments").fetchone()[0])

    def last_compartment_end(self, session_id: str) -> int:
        """The last ordinal covered by the session's compartments, 0 when none."""
        row = self.connection.execute(
            "SELECT COALESCE(MAX(end_message), 0) FROM compartments WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0])

    def publish(
        self,
        session_id: str,
        compartments: Sequence[Compartment],
        facts: Sequence[Fact],
        run: RunRecord,
        *,
        fact_spans: Sequence[tuple[int, int] | None] | None = None,
    ) -> None:
        """Publish a historian run in one transaction (§3.9).

        The compartments are appended after the session's existing ones, the
        facts are promoted to project memory (deduplicated), the run is
        recorded and the session's failure counter is reset.

        Args:
            session_id: The session.
            compartments: The new compartments, oldest first.
            facts: Facts to promote.
            run: The run record.
            fact_spans: Per fact, the message range it came from (None: the
                whole run); it links the fact to the files of those messages.
        """
        with self.transaction():
            row = self.connection.execute(
                "SELECT COALESCE(MAX(sequence) + 1, 0) FROM compartments WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            sequence = int(row[0])
            now = _now()
            for compartment in compartments:
                start_id = self._message_id(session_id, compartment.start)
                end_id = self._message_id(session_id, compartment.end)
                v2 = bool(compartment.p1)
                self.connection.execute(
                    "INSERT INTO compartments (session_id, sequence, start_message, end_message,"
                    " start_message_id, end_message_id, title, content, p1, p2, p3, p4,"
                    " importance, episode_type, legacy, start_date, end_date, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        session_id,
                        sequence,
                        compartment.start,
                        compartment.end,
                        start_id,
                        end_id,
                        compartment.title,
                        compartment.p1 if v2 else compartment.content,
                        compartment.p1 if v2 else None,
                        compartment.p2 if v2 else None,
                        compartment.p3 if v2 else None,
                        compartment.p4 if v2 else None,
                        max(1, min(100, int(compartment.importance))),
                        compartment.episode_type,
                        0 if v2 else int(bool(compartment.legacy)),
                        compartment.start_date,
                        compartment.end_date,
                        now,
                    ),
                )
                sequence += 1
            if compartments:
                whole = (compartments[0].start, compartments[-1].end)
                spans = list(fact_spans or [])
                for index, fact in enumerate(facts):
                    span = spans[index] if index < len(spans) and spans[index] else whole
                    self.add_fact(fact, session_id=session_id, span=span)
            self.record_run(run)
            self.connection.execute(
                "UPDATE sessions SET failure_count = 0 WHERE id = ?", (session_id,)
            )

    def _message_id(self, session_id: str, ordinal: int) -> str:
        row = self.connection.execute(
            "SELECT message_id FROM raw_messages WHERE session_id = ? AND ordinal = ?",
            (session_id, ordinal),
        ).fetchone()
        return row[0] if row else ""

    # -- project memory --

    def add_fact(
        self, fact: Fact, *, session_id: str | None = None, span: tuple[int, int] | None = None
    ) -> bool:
        """Promote a fact to project memory; True when it was new.

        Facts are deduplicated per category on :func:`normalize_fact`; a
        repeat raises its ``seen_count`` and records its source.
        """
        import hashlib

        content = " ".join(fact.content.split())
        category = fact.category.strip().upper()
        if not content or not category:
            return False
        digest = hashlib.sha256(normalize_fact(content).encode("utf-8")).hexdigest()
        now = _now()
        cursor = self.connection.execute(
            "INSERT INTO memories (category, content, normalized_hash, source_session_id,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(category, normalized_hash) DO UPDATE SET"
            " seen_count = seen_count + 1, updated_at = excluded.updated_at"
            " RETURNING id, seen_count",
            (category, content, digest, session_id, now, now),
        )
        row: tuple[int, int] = cursor.fetchone()  # RETURNING always yields the row
        memory_id, seen = row
        if session_id is not None and span is not None:
            self.connection.execute(
                "INSERT OR IGNORE INTO memory_sources (memory_id, session_id, start_message,"
                " end_message) VALUES (?, ?, ?, ?)",
                (memory_id, session_id, span[0], span[1]),
            )
        return seen == 1

    def facts(self) -> list[Fact]:
        """Every project-memory fact, by category then first promotion."""
        from karni_historian.model import Fact

        rows = self.connection.execute(
            "SELECT category, content FROM memories ORDER BY category, id"
        ).fetchall()
        return [Fact(category, content) for category, content in rows]

    def facts_for_spans(self, spans: Iterable[tuple[str, int, int]]) -> list[Fact]:
        """Facts promoted from a run that overlapped one of ``(session, start, end)``."""
        import bisect

        from karni_historian.model import Fact

        by_session: dict[str, list[tuple[int, int]]] = {}
        for session_id, start, end in spans:
            by_session.setdefault(session_id, []).append((start, end))
        found: dict[int, tuple[str, str]] = {}
        for session_id, ranges in by_session.items():
            ranges.sort()
            # Sort by end too, and keep the smallest start reaching each end, for overlap tests.
            ends = sorted(ranges, key=lambda r: r[1])
            end_keys = [end for _, end in ends]
            lowest = [start for start, _ in ends]
            for i in range(len(lowest) - 2, -1, -1):
                lowest[i] = min(lowest[i], lowest[i + 1])
            for memory_id, category, content, start, end in self.connection.execute(
                "SELECT m.id, m.category, m.content, s.start_message, s.end_message"
                " FROM memories m JOIN memory_sources s ON s.memory_id = m.id"
                " WHERE s.session_id = ?",
                (session_id,),
            ):
                i = bisect.bisect_left(end_keys, start)
                if i < len(end_keys) and lowest[i] <= end:
                    found[memory_id] = (category, content)
        return [Fact(*found[key]) for key in sorted(found, key=lambda k: (found[k][0], k))]

    # -- runs and failures --

    def record_run(self, run: RunRecord) -> None:
        """Store one run record."""
        importances = run.importances
        self.connection.execute(
            "INSERT INTO historian_runs (session_id, run_kind, historian, status,"
            " failure_reason, chunk_start, chunk_end, unprocessed_from, compartments_produced,"
            " facts_emitted, importance_min, importance_max, importance_avg, discarded_last,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                _now(),
            ),
        )

    def record_failure(self, run: RunRecord) -> int:
        """Record a failed run (§3.10) and return the session's consecutive failure count."""
        with self.transaction():
            self.record_run(run)
            self.connection.execute(
                "UPDATE sessions SET failure_count = failure_count + 1, last_error = ?,"
                " last_failure_at = ? WHERE id = ?",
                (run.failure_reason, _now(), run.session_id),
            )
            row = self.connection.execute(
                "SELECT failure_count FROM sessions WHERE id = ?", (run.session_id,)
            ).fetchone()
        return int(row[0]) if row else 0

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

    def failure(self, session_id: str) -> tuple[int, str | None]:
        """``(consecutive failures, last error)`` of the session."""
        row = self.connection.execute(
            "SELECT failure_count, last_error FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return (int(row[0]), row[1]) if row else (0, None)


class _Transaction:
    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def __enter__(self) -> Store:
        store = self._store
        if store._depth == 0:
            store.connection.execute("BEGIN IMMEDIATE")
        store._depth += 1
        return store

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        store = self._store
        store._depth -= 1
        if store._depth:
            return
        if kind is None:
            store.connection.execute("COMMIT")
        else:
            store.connection.execute("ROLLBACK")


_COMPARTMENT_SELECT = (
    "SELECT id, session_id, sequence, start_message, end_message, title, content, p1, p2, p3, p4,"
    " importance, start_date, end_date, episode_type, legacy FROM compartments"
)


def _compartment_from_row(row: Sequence[Any]) -> StoredCompartment:
    from karni_historian.model import Compartment

    (
        row_id,
        session_id,
        sequence,
        start,
        end,
        title,
        content,
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
    compartment = Compartment(
        start=start,
        end=end,
        title=title,
        p1=p1 or "",
        p2=p2 if p2 is not None else "",
        p3=p3 if p3 is not None else "",
        p4=p4 if p4 is not None else "",
        importance=importance,
        start_date=start_date,
        end_date=end_date,
        episode_type=episode_type,
        legacy=bool(legacy),
        content=content,
    )
    return StoredCompartment(row_id, session_id, sequence, compartment)
