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

import time

from karni_historian.store.database import Database
from karni_historian.store.search_sql import (
    DAY_SHIFT,
    EPOCH_JULIAN_DAY,
    ID_MASK,
    KIND_BITS,
    KIND_COMPARTMENT,
    KIND_FACT,
    KIND_MESSAGE,
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
    "SearchTimelineTables",
    "TimelineRow",
]

TITLE_WEIGHT = 4.0
"""How much more a word in a title counts than one in a body."""
TOOLS_WEIGHT = 0.5
"""How much a word in a tool call (name, input, output) counts against one in a body."""
RECENCY_DAYS = 30.0
"""The age, in days, at which the recency factor has fallen from 2 to 1.5."""

_KIND = f"(f.rowid & {(1 << KIND_BITS) - 1})"
_ID = f"((f.rowid >> {KIND_BITS}) & {ID_MASK})"

_JOINS = (
    f" LEFT JOIN raw_messages m ON {_KIND} = {KIND_MESSAGE} AND m.id = {_ID}"
    f" LEFT JOIN compartments c ON {_KIND} = {KIND_COMPARTMENT} AND c.id = {_ID}"
    f" LEFT JOIN memories fm ON {_KIND} = {KIND_FACT} AND fm.id = {_ID}"
    " LEFT JOIN sessions s ON s.id = coalesce(m.session_id, c.session_id, fm.source_session_id)"
)
"""The row each index row stands for (``m``, ``c`` or ``fm``), and its session ``s``."""

_SID = "coalesce(m.session_id, c.session_id, fm.source_session_id)"
_TS = "coalesce(m.timestamp, c.end_date, c.start_date, s.last_ts, fm.created_at)"

_SCORE = (
    f"bm25({SEARCH_TABLE}, {TITLE_WEIGHT}, 1.0, {TOOLS_WEIGHT}) * (1.0 + 1.0 / (1.0"
    f" + max(0, :today - (f.rowid >> {DAY_SHIFT})) / {RECENCY_DAYS}))"
)
"""BM25 times the recency factor, the row's day read from its rowid (``:today``)."""

_BEST = (
    f"SELECT f.rowid AS rowid, {_SCORE} AS score FROM {SEARCH_TABLE} f{{joins}}"
    f" WHERE {SEARCH_TABLE} MATCH :match{{where}} ORDER BY score LIMIT :n"
)
"""The best matches' rowids and scores; ``{joins}`` and ``{where}`` are the filters'."""

_HITS = (
    f"SELECT f.rowid, {_KIND}, {_SID}, coalesce(m.ordinal, c.start_message),"
    f" coalesce(m.ordinal, c.end_message), {_TS}, m.role, s.author, f.score"
    f" FROM ({{best}}) f{_JOINS} WHERE coalesce(m.id, c.id, fm.id) IS NOT NULL ORDER BY f.score"
)
"""The best matches with what the hits show; a match whose row is gone is dropped."""

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
    f"(CASE {_KIND}"
    f" WHEN {KIND_MESSAGE} THEN {_TOUCHED_IN_TURN}"
    f" WHEN {KIND_COMPARTMENT} THEN EXISTS (SELECT 1 FROM touched t"
    " WHERE t.session_id = c.session_id AND t.ordinal BETWEEN c.start_message AND c.end_message)"
    " ELSE EXISTS (SELECT 1 FROM memory_sources ms JOIN touched t ON t.session_id = ms.session_id"
    " AND t.ordinal BETWEEN ms.start_message AND ms.end_message WHERE ms.memory_id = fm.id) END)"
)
"""The row's messages touched the file: a compartment's range, a message's turn, a fact's."""

_TOUCHED_ROWS = (
    "WITH touched(session_id, ordinal) AS (SELECT DISTINCT session_id, ordinal"
    " FROM message_files WHERE path = :path OR substr(path, 1, :length) = :folder) "
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
        self.row_id = (int(rowid) >> KIND_BITS) & ID_MASK  # type: ignore[call-overload]
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

        Without a filter that needs the rows themselves (session, author,
        file), only the index is read to rank, and the rows of the best
        matches alone are joined in.

        Raises:
            sqlite3.OperationalError: FTS5 cannot read ``match`` (``fts5: syntax error …``).
        """
        today = time.time() / 86400.0 + 2440587.5 - EPOCH_JULIAN_DAY
        path = filters.path or ""
        folder = path.rstrip("/") + "/"
        params = {
            "match": match,
            "today": int(today),
            "n": limit + _SPARE,
            "path": path,
            "length": len(folder),
            "folder": folder,
            "session": filters.session_id,
            "author": filters.author,
            "local": int(filters.local),
        }
        where, prefix = "", ""
        if filters.since is not None:
            where += f" AND f.rowid >= ({_day_of(self, filters.since)} << {DAY_SHIFT})"
        conditions = []
        if filters.session_id is not None:
            conditions.append(f"{_SID} = :session")
        if filters.author is not None:
            conditions.append(
                "(s.author = :author COLLATE NOCASE"
                " OR (s.author IS NULL AND s.id IS NOT NULL AND :local))"
            )
        if filters.path is not None:
            conditions.append(_TOUCHED)
            prefix = _TOUCHED_ROWS
        joins = _JOINS if conditions else ""
        where += "".join(f" AND {condition}" for condition in conditions)
        best = _BEST.format(joins=joins, where=where)
        rows = self.connection.execute(prefix + _HITS.format(best=best), params).fetchall()
        found = [SearchMatch(row) for row in rows]
        if filters.since is not None:
            found = [m for m in found if m.timestamp is not None and m.timestamp >= filters.since]
        return found[:limit]

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


_SPARE = 8
"""Matches fetched beyond the limit, for rows dropped after ranking (a date before ``since``)."""


def _day_of(store: Database, date: str) -> int:
    """``date`` (ISO) in the days of an index rowid; 0 when SQLite cannot read it."""
    row = store.connection.execute(
        f"SELECT CAST(julianday(?) - {EPOCH_JULIAN_DAY} AS INTEGER)", (date,)
    ).fetchone()
    return max(0, int(row[0])) if row and row[0] is not None else 0


def _json_list(ids: Sequence[int]) -> str:
    """``ids`` as a JSON list of integers, for ``json_each``."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


class TimelineRow:
    """One compartment on a timeline: its session, messages, date and title."""

    __slots__ = ("date", "end", "session_id", "start", "title")

    def __init__(self, row: Sequence[object]) -> None:
        """From ``(session_id, start, end, date, title)``."""
        session_id, start, end, date, title = row
        self.session_id = str(session_id)
        self.start = int(start)  # type: ignore[call-overload]
        self.end = int(end)  # type: ignore[call-overload]
        self.date = date if isinstance(date, str) else None
        self.title = str(title)


_EPISODE = "session_id, start_message, end_message, coalesce(end_date, start_date), title"


class SearchTimelineTables(Database):
    """What happened when: compartments by date or around a message, sessions by date."""

    def episodes_between(self, first: str, last: str, limit: int) -> list[TimelineRow]:
        """Compartments dated from ``first`` to ``last`` (``YYYY-MM-DD``), oldest first."""
        rows = self.connection.execute(
            f"SELECT {_EPISODE} FROM compartments"
            " WHERE substr(coalesce(end_date, start_date), 1, 10) BETWEEN ? AND ?"
            " ORDER BY coalesce(end_date, start_date), session_id, sequence LIMIT ?",
            (first, last, limit),
        )
        return [TimelineRow(row) for row in rows]

    def episodes_around(self, session_id: str, ordinal: int, count: int) -> list[TimelineRow]:
        """Up to ``count`` compartments of the session before message ``ordinal`` and after it."""
        before = self.connection.execute(
            f"SELECT {_EPISODE} FROM compartments WHERE session_id = ? AND start_message <= ?"
            " ORDER BY start_message DESC LIMIT ?",
            (session_id, ordinal, count + 1),
        ).fetchall()
        after = self.connection.execute(
            f"SELECT {_EPISODE} FROM compartments WHERE session_id = ? AND start_message > ?"
            " ORDER BY start_message LIMIT ?",
            (session_id, ordinal, count),
        ).fetchall()
        return [TimelineRow(row) for row in [*reversed(before), *after]]

    def sessions_between(self, first: str, last: str) -> list[tuple[str, str | None, str | None]]:
        """``(id, title, last message time)`` of the sessions active from ``first`` to ``last``."""
        rows = self.connection.execute(
            "SELECT id, title, last_ts FROM sessions WHERE substr(first_ts, 1, 10) <= ?"
            " AND substr(last_ts, 1, 10) >= ? ORDER BY first_ts",
            (last, first),
        )
        return [(str(row[0]), row[1], row[2]) for row in rows]
