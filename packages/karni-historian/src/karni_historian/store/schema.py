"""The schema of the historian's database and where the database lives.

The schema is versioned with ``PRAGMA user_version``: version N is the list of
statements ``MIGRATIONS[N-1]``, applied in order by
:meth:`karni_historian.store.database.Database.migrate` (version 5's then
ends with a step in Python, :data:`RESTAGED_VERSION`). A new version appends
a tuple; released tuples are never edited. See ``docs/historian/store.md``.
"""

from __future__ import annotations

import os

from karni.agent.common.root import local_dir

from karni_historian.store.search_sql import SEARCH_MIGRATION

__all__ = [
    "DB_RELATIVE_PATH",
    "MIGRATIONS",
    "NOTES_VERSION",
    "P1_ONLY_VERSION",
    "READABLE_FROM",
    "RESTAGED_VERSION",
    "SCHEMA_VERSION",
    "SEARCH_VERSION",
    "SHARED_VERSION",
    "TOOL_PARTS_OF_MESSAGES",
    "db_path",
]

DB_RELATIVE_PATH = (".karni", "local", "historian.db")
"""Where the database lives, relative to the project root."""

TOOL_PARTS_OF_MESSAGES = (
    "INSERT INTO tool_parts (session_id, ordinal, position, role, call_id)"
    " SELECT session_id, ordinal, position, role, call_id FROM ("
    "SELECT m.session_id, m.ordinal, p.key AS position, m.role,"
    " json_extract(m.parts_json, p.fullkey || '.call_id') AS call_id"
    " FROM raw_messages m,"
    " json_each(CASE WHEN json_valid(m.parts_json) THEN m.parts_json ELSE '[]' END) p"
    " WHERE {messages} AND instr(m.parts_json, '\"call_id\"') > 0"
    " AND json_extract(m.parts_json, p.fullkey || '.type') = 'tool'"
    ") WHERE call_id IS NOT NULL AND call_id != '' AND call_id != 0"
)
"""Fills ``tool_parts`` from the stored JSON of the messages ``{messages}`` selects (from ``m``).

A row for each part of type ``tool`` whose ``call_id`` is set (not null,
empty, zero or false), as SQLite's JSON functions read it, in rows that name
the key ``"call_id"``; a message whose JSON is malformed has none. Version 6's
migration runs it over every message, so it is part of a released migration:
never edit it, add another.
"""

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
    # Version 2 (``docs/historian/store.md``): where a promoted fact was said and by whom,
    # run durations, the staging of ``recomp`` and the last history rebuild.
    (
        "ALTER TABLE memory_sources ADD COLUMN source_message INTEGER",
        "ALTER TABLE memory_sources ADD COLUMN origin TEXT",
        "ALTER TABLE historian_runs ADD COLUMN duration_ms INTEGER",
        """CREATE TABLE recomp_jobs (
            session_id TEXT PRIMARY KEY,
            range_start INTEGER NOT NULL,
            range_end INTEGER NOT NULL,
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE recomp_staging (
            session_id TEXT NOT NULL,
            start_message INTEGER NOT NULL,
            compartment_json TEXT NOT NULL,
            PRIMARY KEY (session_id, start_message)
        ) WITHOUT ROWID""",
        """CREATE TABLE history_rebuilds (
            session_id TEXT PRIMARY KEY,
            block TEXT NOT NULL,
            compartment_count INTEGER NOT NULL,
            compartments_digest TEXT NOT NULL,
            memory_max_id INTEGER NOT NULL,
            memory_digest TEXT NOT NULL,
            shape TEXT NOT NULL,
            reason TEXT NOT NULL,
            rebuilt_at TEXT NOT NULL
        )""",
    ),
    # Version 3: the model a session ran on, as its transcript records it (OpenCode's
    # ``providerID/modelID``), so an unconfigured historian can inherit it.
    ("ALTER TABLE sessions ADD COLUMN model TEXT",),
    # Version 4: no table changes. A tool result whose call holds its output is stored
    # as a reference to the call (``copy_of``, see ``docs/historian/store.md``), which an
    # older karni-historian would read as a result without input or output.
    (),
    # Version 5: a pending recomp's compartments staged in columns (``recomp_staged``),
    # so that publishing copies them in SQL. The rows of ``recomp_staging`` (JSON) are
    # moved there by Python, which reads them exactly (``store/staged_rows.py``,
    # ``restage_json_rows``), and the table is then dropped.
    (
        """CREATE TABLE recomp_staged (
            session_id TEXT NOT NULL,
            start_message INTEGER NOT NULL,
            end_message INTEGER NOT NULL,
            start_message_id TEXT,
            end_message_id TEXT,
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            p1 TEXT, p2 TEXT, p3 TEXT, p4 TEXT,
            importance INTEGER NOT NULL,
            episode_type TEXT,
            legacy INTEGER NOT NULL,
            start_date TEXT,
            end_date TEXT,
            PRIMARY KEY (session_id, start_message)
        ) WITHOUT ROWID""",
    ),
    # Version 6: the tool parts that carry a call id, one row each (what tool arcs are
    # made of), so condensing reads them without scanning every message's JSON.
    (
        """CREATE TABLE tool_parts (
            session_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            position INTEGER NOT NULL,
            role TEXT NOT NULL,
            call_id NOT NULL,
            PRIMARY KEY (session_id, ordinal, position)
        ) WITHOUT ROWID""",
        TOOL_PARTS_OF_MESSAGES.format(messages="1"),
    ),
    # Version 7 (``docs/historian/file-notes.md``): each file's notes (what was tried,
    # decided, required and found there) and the requests that edited it, worked out
    # from a session's raw messages by ``ingest``; ``noted_sessions`` says how far each
    # session was read, with which version of the extraction, and from which request
    # the next reading starts; ``file_edits`` keeps a digest of each edit's replaced and
    # written text, so an edit that writes back an earlier one is known without reading
    # the earlier one again. An older store's sessions have no row in ``noted_sessions``,
    # so the next ``ingest`` notes them all.
    (
        """CREATE TABLE file_notes (
            path TEXT NOT NULL,
            session_id TEXT NOT NULL,
            request INTEGER NOT NULL,
            ordinal INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            weight INTEGER NOT NULL,
            PRIMARY KEY (path, session_id, request, kind, text)
        ) WITHOUT ROWID""",
        """CREATE TABLE file_requests (
            path TEXT NOT NULL,
            session_id TEXT NOT NULL,
            request INTEGER NOT NULL,
            timestamp TEXT,
            text TEXT NOT NULL,
            added INTEGER NOT NULL,
            removed INTEGER NOT NULL,
            PRIMARY KEY (path, session_id, request)
        ) WITHOUT ROWID""",
        "CREATE INDEX idx_file_notes_session ON file_notes(session_id)",
        "CREATE INDEX idx_file_requests_session ON file_requests(session_id)",
        """CREATE TABLE noted_sessions (
            session_id TEXT PRIMARY KEY,
            message_count INTEGER NOT NULL,
            version INTEGER NOT NULL,
            resume_from INTEGER NOT NULL
        ) WITHOUT ROWID""",
        """CREATE TABLE file_edits (
            session_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            path TEXT NOT NULL,
            forward TEXT NOT NULL,
            inverse TEXT NOT NULL,
            PRIMARY KEY (session_id, ordinal, path, forward)
        ) WITHOUT ROWID""",
        "CREATE INDEX idx_file_edits_content ON file_edits(session_id, path, forward)",
    ),
    # Version 8: a compartment's body is its ``p1`` alone; the ``content`` column, a
    # copy of it, is gone. A row with no ``p1`` (a legacy one, body in ``content``)
    # keeps that body as its ``p1``. The table is rebuilt rather than altered, so
    # every SQLite a supported Python ships (some older than ``DROP COLUMN``) runs it.
    (
        """CREATE TABLE compartments_v8 (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            sequence INTEGER NOT NULL,
            start_message INTEGER NOT NULL,
            end_message INTEGER NOT NULL,
            start_message_id TEXT NOT NULL DEFAULT '',
            end_message_id TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL,
            p1 TEXT, p2 TEXT, p3 TEXT, p4 TEXT,
            importance INTEGER NOT NULL DEFAULT 50,
            episode_type TEXT,
            legacy INTEGER NOT NULL DEFAULT 0,
            start_date TEXT,
            end_date TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (session_id, sequence)
        )""",
        "INSERT INTO compartments_v8 (id, session_id, sequence, start_message, end_message,"
        " start_message_id, end_message_id, title, p1, p2, p3, p4, importance, episode_type,"
        " legacy, start_date, end_date, created_at)"
        " SELECT id, session_id, sequence, start_message, end_message, start_message_id,"
        " end_message_id, title, CASE WHEN p1 IS NULL OR p1 = '' THEN content ELSE p1 END,"
        " p2, p3, p4, importance, episode_type, legacy, start_date, end_date, created_at"
        " FROM compartments",
        "DROP TABLE compartments",
        "ALTER TABLE compartments_v8 RENAME TO compartments",
    ),
    # Version 9 (``docs/historian/blame.md``): what ``blame`` reads besides ``git blame``.
    # ``written_ranges``: the hashes of the line ranges each landed edit wrote
    # (``karni_historian/written_ranges.py``), with the prompt that asked for it;
    # ``session_commits``: the commits a session's git commands printed, with the words
    # and time of the prompt they answered (a commit's request may edit no file). Both are
    # filled at ``ingest`` with the files' notes; an older store's sessions get
    # theirs at the next ``ingest`` (the extraction's version rose with them).
    (
        """CREATE TABLE written_ranges (
            path TEXT NOT NULL,
            session_id TEXT NOT NULL,
            request INTEGER NOT NULL,
            ordinal INTEGER NOT NULL,
            position INTEGER NOT NULL,
            timestamp TEXT,
            hash TEXT NOT NULL,
            lines TEXT NOT NULL,
            loose TEXT NOT NULL,
            PRIMARY KEY (path, session_id, ordinal, position)
        ) WITHOUT ROWID""",
        "CREATE INDEX idx_written_ranges_session ON written_ranges(session_id, ordinal)",
        """CREATE TABLE session_commits (
            session_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            request INTEGER NOT NULL,
            hash TEXT NOT NULL,
            subject TEXT NOT NULL,
            timestamp TEXT,
            request_text TEXT NOT NULL,
            request_time TEXT,
            PRIMARY KEY (session_id, ordinal, hash)
        ) WITHOUT ROWID""",
        "CREATE INDEX idx_session_commits_hash ON session_commits(hash)",
    ),
    # Version 10, the full-text index (``store/search_sql.py``, ``docs/historian/store.md``):
    # an FTS5 table over the messages, compartments and facts, filled from every stored row
    # and kept by the store's own writers; and ``sessions.author``, who ran a session (NULL:
    # the local user).
    SEARCH_MIGRATION,
    # Version 11, shared history (``docs/how-to/team-history.md``): the index of the files under
    # ``.karni/history/`` (each file's size and time, the session it holds, what became
    # of it and who committed it) and the fingerprint of the folder when last read.
    # Shared sessions land in ``sessions``, ``compartments``, ``memories``,
    # ``file_requests``, ``file_notes``, ``written_ranges`` and ``session_commits``
    # like any other.
    (
        """CREATE TABLE shared_files (
            name TEXT PRIMARY KEY,
            session_id TEXT,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            state TEXT NOT NULL,
            problem TEXT,
            author TEXT,
            author_email TEXT,
            committed_at TEXT
        ) WITHOUT ROWID""",
        "CREATE INDEX idx_shared_files_session ON shared_files(session_id)",
        """CREATE TABLE shared_state (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID""",
    ),
    # Version 12: a file's requests newest first along an index, for the brief's "what
    # shaped this file" over many (a team's shared) sessions. An index only: nothing moves.
    ("CREATE INDEX idx_file_requests_newest ON file_requests(path, timestamp, request)",),
)
"""The schema, one tuple of statements per version; version N is ``MIGRATIONS[N-1]``."""

RESTAGED_VERSION = 5
"""The version whose migration ends in Python: ``recomp_staging``'s JSON rows moved to columns.

:func:`karni_historian.store.staged_rows.restage_json_rows` runs after the
version's statements, in the same transaction.
"""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes."""

READABLE_FROM = 3
"""The oldest schema version a read-only connection can read as it is.

Versions after it change how rows are written (4) or add tables a brief
never reads (5, the staging of ``recomp``; 6, ``tool_parts``), or reads only
when they are there (7, the files' notes: :data:`NOTES_VERSION`), or drop a
column a brief reads only from older stores (8, ``compartments.content``:
:data:`P1_ONLY_VERSION`), or add tables only ``blame`` reads (9, ``written_ranges``,
``session_commits``), or add the full-text index and ``sessions.author``,
which a brief never reads (10, :data:`SEARCH_VERSION`), or add the shared
history's index (11, :data:`SHARED_VERSION`), or add an index (12), so a
brief can read an older store before the next ``ingest`` upgrades it.
"""

SEARCH_VERSION = MIGRATIONS.index(SEARCH_MIGRATION) + 1
"""The first schema version with the full-text index (``search_index``) and ``sessions.author``.

Looked up rather than written down: migrations appended in parallel are renumbered.
"""

NOTES_VERSION = 7
"""The first schema version with the files' notes (``file_notes``, ``file_requests``)."""

P1_ONLY_VERSION = 8
"""The first schema version whose compartments hold their body in ``p1`` alone (no ``content``).

A brief reading an older store as it is takes a row's body from ``content``
when its ``p1`` is empty, as the migration to this version does.
"""


SHARED_VERSION = next(
    number
    for number, statements in enumerate(MIGRATIONS, 1)
    if any("CREATE TABLE shared_files" in statement for statement in statements)
)
"""The first schema version with the shared history's index (``shared_files``, ``shared_state``).

A brief reading an older store as it is knows no shared session; the next
writable open upgrades it.
"""


def db_path(root: str | os.PathLike[str]) -> str:
    """The database path of the project at ``root``, in its ``.karni/local`` folder."""
    return os.path.join(local_dir(root), DB_RELATIVE_PATH[-1])
