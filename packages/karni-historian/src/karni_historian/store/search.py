"""Reading the full-text index: the rows a query matches, ranked, filtered, and their text.

The index (``search_index``, :mod:`karni_historian.store.search_sql`) holds
no text; each match is joined back to the row it stands for (a message, a
compartment, a fact) for its session, its message range and its date. A
match whose row is gone is dropped. The rank is FTS5's BM25 (a title weighs
:data:`TITLE_WEIGHT` times the body, a tool call :data:`TOOLS_WEIGHT`) times
a recency factor between 1 and 2: ``1 + 1 / (1 + age in days / RECENCY_DAYS)``.
A row's date is its message's time, its compartment's last date, or its
session's last message (a fact's, the session it was promoted from).
"""

from __future__ import annotations

from karni_historian.store.database import Database
from karni_historian.store.search_sql import (
    KIND_COMPARTMENT,
    KIND_FACT,
    KIND_MESSAGE,
    KINDS,
    SEARCH_TABLE,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "RECENCY_DAYS",
    "TITLE_WEIGHT",
    "TOOLS_WEIGHT",
    "SearchFilters",
    "SearchMatch",
    "SearchTables",
]

TITLE_WEIGHT = 4.0
"""How much more a word in a title counts than one in a body."""
TOOLS_WEIGHT = 0.5
"""How much a word in a tool call (name, input, output) counts against one in a body."""
RECENCY_DAYS = 30.0
"""The age, in days, at which the recency factor has fallen from 2 to 1.5."""

_MATCHES = (
    f"SELECT f.rowid, f.rowid % {KINDS},"
    " coalesce(m.session_id, c.session_id, fm.source_session_id) AS sid,"
    " coalesce(m.ordinal, c.start_message) AS lo, coalesce(m.ordinal, c.end_message) AS hi,"
    " coalesce(m.timestamp, c.end_date, c.start_date, s.last_ts, fm.created_at) AS ts, m.role,"
    " s.author,"
    f" bm25({SEARCH_TABLE}, {TITLE_WEIGHT}, 1.0, {TOOLS_WEIGHT}) * (1.0 + 1.0 / (1.0 + max(0.0,"
    " julianday('now') - coalesce(julianday(coalesce(m.timestamp, c.end_date, c.start_date,"
    f" s.last_ts, fm.created_at)), 0.0)) / {RECENCY_DAYS})) AS score"
    f" FROM {SEARCH_TABLE} f"
    f" LEFT JOIN raw_messages m ON f.rowid % {KINDS} = {KIND_MESSAGE} AND m.id = f.rowid / {KINDS}"
    f" LEFT JOIN compartments c ON f.rowid % {KINDS} = {KIND_COMPARTMENT}"
    f" AND c.id = f.rowid / {KINDS}"
    f" LEFT JOIN memories fm ON f.rowid % {KINDS} = {KIND_FACT} AND fm.id = f.rowid / {KINDS}"
    " LEFT JOIN sessions s ON s.id = coalesce(m.session_id, c.session_id, fm.source_session_id)"
    f" WHERE {SEARCH_TABLE} MATCH ? AND coalesce(m.id, c.id, fm.id) IS NOT NULL"
)
"""Every match of a query (its one parameter), with what the filters and the hits need."""

_PROMPT = "u.role = 'user' AND instr(u.parts_json, '\"type\":\"text\"') > 0"
"""Message ``u`` is a prompt: the user's, with text (not only a tool result)."""

_TOUCHED_IN_TURN = (
    "EXISTS (SELECT 1 FROM touched t WHERE t.session_id = m.session_id"
    " AND t.ordinal >= coalesce((SELECT max(u.ordinal) FROM raw_messages u"
    f" WHERE u.session_id = m.session_id AND u.ordinal <= m.ordinal AND {_PROMPT}), 1)"
    " AND t.ordinal < coalesce((SELECT min(u.ordinal) FROM raw_messages u"
    f" WHERE u.session_id = m.session_id AND u.ordinal > m.ordinal AND {_PROMPT}), 9e18))"
)
"""A message's turn (from its prompt to the next) touched the file."""

_TOUCHED = (
    f"(CASE f.rowid % {KINDS}"
    f" WHEN {KIND_MESSAGE} THEN {_TOUCHED_IN_TURN}"
    f" WHEN {KIND_COMPARTMENT} THEN EXISTS (SELECT 1 FROM touched t"
    " WHERE t.session_id = c.session_id AND t.ordinal BETWEEN c.start_message AND c.end_message)"
    " ELSE EXISTS (SELECT 1 FROM memory_sources ms JOIN touched t ON t.session_id = ms.session_id"
    " AND t.ordinal BETWEEN ms.start_message AND ms.end_message WHERE ms.memory_id = fm.id) END)"
)
"""The row's messages touched the file: a compartment's range, a message's turn, a fact's."""

_TOUCHED_ROWS = (
    "touched(session_id, ordinal) AS (SELECT DISTINCT session_id, ordinal FROM message_files"
    " WHERE path = ? OR substr(path, 1, ?) = ?)"
)


class SearchFilters:
    """What a search keeps beyond its query; each filter left as None keeps every row.

    Attributes:
        session_id: Only this session's rows.
        since: Only rows dated at or after this ISO date or time.
        author: Only sessions of this author (case-insensitive), with
            ``local`` saying whether it names the local user too (whose
            sessions have no author).
        path: Only rows whose messages touched this project-relative path
            (or a file under it).
        tools: Match tool calls (name, input, output) too.
    """

    __slots__ = ("author", "local", "path", "session_id", "since", "tools")

    def __init__(
        self,
        *,
        session_id: str | None = None,
        since: str | None = None,
        author: str | None = None,
        local: bool = False,
        path: str | None = None,
        tools: bool = False,
    ) -> None:
        self.session_id = session_id
        self.since = since
        self.author = author
        self.local = local
        self.path = path
        self.tools = tools


class SearchMatch:
    """One row a query matched: what it is, where, when, and its rank (lower is better)."""

    __slots__ = (
        "author",
        "end",
        "kind",
        "role",
        "row_id",
        "score",
        "session_id",
        "start",
        "timestamp",
    )

    def __init__(self, row: Sequence[object]) -> None:
        """From a row of the match query (``rowid``, kind, session, range, time, role, ...)."""
        rowid, kind, session_id, start, end, timestamp, role, author, score = row
        self.row_id = int(rowid) // KINDS  # type: ignore[call-overload]
        self.kind = int(kind)  # type: ignore[call-overload]
        self.session_id = session_id if isinstance(session_id, str) else None
        self.start = start if isinstance(start, int) else None
        self.end = end if isinstance(end, int) else None
        self.timestamp = timestamp if isinstance(timestamp, str) else None
        self.role = role if isinstance(role, str) else None
        self.author = author if isinstance(author, str) else None
        self.score = float(score)  # type: ignore[arg-type]


class SearchTables(Database):
    """The full-text index, read: matches of a query, and the text of what matched."""

    def search_matches(self, match: str, filters: SearchFilters, limit: int) -> list[SearchMatch]:
        """The best ``limit`` rows the FTS5 query ``match`` finds, best first.

        Raises:
            sqlite3.OperationalError: FTS5 cannot read ``match`` (``fts5: syntax error …``).
        """
        sql, params = _MATCHES, [match]
        if filters.session_id is not None:
            sql += " AND sid = ?"
            params.append(filters.session_id)
        if filters.since is not None:
            sql += " AND ts >= ?"
            params.append(filters.since)
        if filters.author is not None:
            sql += (
                " AND (s.author = ? COLLATE NOCASE"
                " OR (s.author IS NULL AND s.id IS NOT NULL AND ?))"
            )
            params += [filters.author, int(filters.local)]
        if filters.path is not None:
            prefix = filters.path.rstrip("/") + "/"
            sql = f"WITH {_TOUCHED_ROWS} {sql} AND {_TOUCHED}"
            params = [filters.path, len(prefix), prefix, *params]
        sql += " ORDER BY score LIMIT ?"
        params.append(limit)
        return [SearchMatch(row) for row in self.connection.execute(sql, params)]

    def compartment_texts(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """``{id: (title, every tier's text)}`` of the compartments ``ids``."""
        rows = self.connection.execute(
            "SELECT id, title, coalesce(p1, '') || char(10) || coalesce(p2, '') || char(10)"
            " || coalesce(p3, '') || char(10) || coalesce(p4, '') FROM compartments"
            " WHERE id IN (SELECT value FROM json_each(?))",
            (_json_list(ids),),
        )
        return {int(row[0]): (str(row[1]), str(row[2])) for row in rows}

    def fact_texts(self, ids: Sequence[int]) -> dict[int, tuple[str, str, tuple[int, int] | None]]:
        """``{id: (category, text, first source range)}`` of the facts ``ids``."""
        rows = self.connection.execute(
            "SELECT f.id, f.category, f.content, (SELECT ms.start_message FROM memory_sources ms"
            " WHERE ms.memory_id = f.id AND ms.session_id = f.source_session_id"
            " ORDER BY ms.start_message LIMIT 1), (SELECT ms.end_message FROM memory_sources ms"
            " WHERE ms.memory_id = f.id AND ms.session_id = f.source_session_id"
            " ORDER BY ms.start_message LIMIT 1) FROM memories f"
            " WHERE f.id IN (SELECT value FROM json_each(?))",
            (_json_list(ids),),
        )
        return {
            int(row[0]): (str(row[1]), str(row[2]), None if row[3] is None else (row[3], row[4]))
            for row in rows
        }

    def message_parts(self, ids: Sequence[int]) -> dict[int, str]:
        """``{id: parts JSON}`` of the messages ``ids``."""
        rows = self.connection.execute(
            "SELECT id, parts_json FROM raw_messages WHERE id IN (SELECT value FROM json_each(?))",
            (_json_list(ids),),
        )
        return {int(row[0]): str(row[1]) for row in rows}

    def covering_title(self, session_id: str, ordinal: int) -> str | None:
        """The title of the compartment holding message ``ordinal``, else the session's."""
        row = self.connection.execute(
            "SELECT coalesce((SELECT title FROM compartments WHERE session_id = ?1"
            " AND start_message <= ?2 AND end_message >= ?2 LIMIT 1),"
            " (SELECT title FROM sessions WHERE id = ?1))",
            (session_id, ordinal),
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def session_title(self, session_id: str) -> str | None:
        """The session's title, when it has one."""
        row = self.connection.execute(
            "SELECT title FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])


def _json_list(ids: Sequence[int]) -> str:
    """``ids`` as a JSON list of integers, for ``json_each``."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"
